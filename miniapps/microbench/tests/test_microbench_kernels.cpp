// karma-microbench's kernels and checks on small, non-cubic arrays: every
// kernel, karma and raw, serial and parallel, both layouts, against answers
// computed from the indices; and every check catching a corrupted element.
#include "microbench_kernels.hpp"
#include "microbench_verify.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace karma_test_microbench {

using namespace karma;
using namespace karma::microbench;

// Extents that catch swapped indices: all different, none a multiple of another.
constexpr Index N0 = 7, N1 = 5, N2 = 4;

template <class Layout>
using HostArray3 = Array<int***, Layout, HostMemory>;
template <class Layout>
using DeviceArray3 = Array<int***, Layout, DefaultMemory>;

// One element of a (possibly device) array set from the host.
template <class View>
void set_element(const View& a, Index i, Index j, Index k, int value) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  h(i, j, k) = value;
  Kokkos::deep_copy(a, h);
}

// The sum of the inputs by plain host loops, independent of expected_sum.
std::int64_t host_sum(std::uint32_t seed, Index n0, Index n1, Index n2) {
  std::int64_t s = 0;
  for (Index i = 0; i < n0; ++i)
    for (Index j = 0; j < n1; ++j)
      for (Index k = 0; k < n2; ++k) s += input_value(seed, i, j, k);
  return s;
}

// The inputs themselves, as an answer.
struct InputAnswer {
  std::uint32_t seed;
  KOKKOS_INLINE_FUNCTION int operator()(Index i, Index j, Index k) const {
    return input_value(seed, i, j, k);
  }
};

template <class Layout>
class Layouts : public ::testing::Test {};
using BothLayouts = ::testing::Types<Right, Left>;
TYPED_TEST_SUITE(Layouts, BothLayouts);

TEST(Inputs, ValuesAreSmallIntegersAndDependOnEveryIndex) {
  int seen[7] = {};
  for (Index i = 0; i < 20; ++i)
    for (Index j = 0; j < 20; ++j) {
      const int v = input_value(seed_a, i, j, 3);
      ASSERT_GE(v, -3);
      ASSERT_LE(v, 3);
      ++seen[v + 3];
    }
  for (int count : seen) EXPECT_GT(count, 0);
  // Transposed indices give other values somewhere: a swap is caught.
  int differ = 0;
  for (Index i = 0; i < 10; ++i)
    for (Index j = 0; j < 10; ++j)
      differ += input_value(seed_a, i, j, 1) != input_value(seed_a, j, i, 1);
  EXPECT_GT(differ, 30);
}

TEST(Inputs, ExpectedSumMatchesHostLoops) {
  EXPECT_EQ(expected_sum(seed_a, N0, N1, N2), host_sum(seed_a, N0, N1, N2));
  EXPECT_EQ(expected_sum(seed_b, 3, 11, 2), host_sum(seed_b, 3, 11, 2));
  EXPECT_NE(expected_sum(seed_a, N0, N1, N2), expected_sum(seed_b, N0, N1, N2));
}

TYPED_TEST(Layouts, FillFollowsLogicalIndices) {
  using Layout = TypeParam;
  HostArray3<Layout> a("a", N0, N1, N2);
  fill(a, seed_a);
  for (Index i = 0; i < N0; ++i)
    for (Index j = 0; j < N1; ++j)
      for (Index k = 0; k < N2; ++k) ASSERT_EQ(a(i, j, k), input_value(seed_a, i, j, k));
}

TYPED_TEST(Layouts, Sum3DAllVersions) {
  using Layout = TypeParam;
  const std::int64_t expected = host_sum(seed_a, N0, N1, N2);
  HostArray3<Layout> h("h", N0, N1, N2);
  fill(h, seed_a);
  const Shape<Index, Index, Index> dyn{N0, N1, N2};
  const Shape<Fixed<N0>, Fixed<N1>, Fixed<N2>> fixed{};
  EXPECT_EQ(sum3d_karma(h), expected);
  EXPECT_EQ(sum3d_karma_byref(h), expected);
  EXPECT_EQ(sum3d_raw<Layout>(h.data(), dyn), expected);
  EXPECT_EQ(sum3d_raw<Layout>(h.data(), fixed), expected);
  Array<int[N0][N1][N2], Layout, HostMemory> s("s");
  fill(dynamic_view(s), seed_a);
  EXPECT_EQ(sum3d_karma(s), expected);

  DeviceArray3<Layout> d("d", N0, N1, N2);
  fill(d, seed_a);
  EXPECT_EQ(sum3d_karma_parallel(d), expected);
  EXPECT_EQ(sum3d_raw_parallel<Layout>(d.data(), dyn), expected);
  EXPECT_EQ(sum3d_raw_parallel<Layout>(d.data(), fixed), expected);
  // A corrupted element changes the sum: the benchmark's check fails.
  set_element(d, N0 - 1, 0, N2 - 1, input_value(seed_a, N0 - 1, 0, N2 - 1) + 1);
  EXPECT_NE(sum3d_karma_parallel(d), expected);
}

TYPED_TEST(Layouts, Subspan3DAllVersions) {
  using Layout = TypeParam;
  const std::int64_t expected = host_sum(seed_a, N0, N1, N2);
  HostArray3<Layout> h("h", N0, N1, N2);
  fill(h, seed_a);
  const Shape<Index, Fixed<N1>, Fixed<N2>> mixed{N0, {}, {}};
  EXPECT_EQ(subspan3d_karma(h), expected);
  EXPECT_EQ(subspan3d_karma_byref(h), expected);
  EXPECT_EQ(subspan3d_raw<Layout>(h.data(), mixed), expected);
  Array<int* [N1][N2], Layout, HostMemory> m("m", N0);
  fill(dynamic_view(m), seed_a);
  EXPECT_EQ(subspan3d_karma(m), expected);

  DeviceArray3<Layout> d("d", N0, N1, N2);
  fill(d, seed_a);
  EXPECT_EQ(subspan3d_karma_parallel(d), expected);
  EXPECT_EQ(subspan3d_raw_parallel<Layout>(d.data(), mixed), expected);
  set_element(d, 0, N1 - 1, 0, 99);
  EXPECT_NE(subspan3d_raw_parallel<Layout>(d.data(), mixed), expected);
}

TYPED_TEST(Layouts, Stencil3DAllVersionsAndTheCheck) {
  using Layout = TypeParam;
  const StencilAnswer answer{seed_a, N0, N1, N2};
  const Shape<Index, Index, Index> dyn{N0, N1, N2};
  HostArray3<Layout> in("in", N0, N1, N2), out("out", N0, N1, N2);
  fill(in, seed_a);
  auto run_host = [&](auto kernel) {
    Kokkos::deep_copy(out, poison);
    kernel();
    return count_mismatches(out, answer);
  };
  EXPECT_EQ(run_host([&] { stencil3d_karma(in, out); }), 0);
  EXPECT_EQ(run_host([&] { stencil3d_karma_byref(in, out); }), 0);
  EXPECT_EQ(run_host([&] { stencil3d_raw<Layout>(in.data(), out.data(), dyn); }), 0);
  // A point the kernel skipped keeps the poison; a wrong value is caught.
  EXPECT_EQ(run_host([] {}), (N0 - 2) * (N1 - 2) * (N2 - 2));
  stencil3d_karma(in, out);
  out(2, 3, 1) += 1;
  EXPECT_EQ(count_mismatches(out, answer), 1);
  // The boundary must stay untouched.
  out(2, 3, 1) -= 1;
  out(0, 2, 2) = 0;
  EXPECT_EQ(count_mismatches(out, answer), 1);

  DeviceArray3<Layout> din("din", N0, N1, N2), dout("dout", N0, N1, N2);
  fill(din, seed_a);
  Kokkos::deep_copy(dout, poison);
  stencil3d_karma_parallel(din, dout);
  EXPECT_EQ(count_mismatches(dout, answer), 0);
  Kokkos::deep_copy(dout, poison);
  stencil3d_raw_parallel<Layout>(din.data(), dout.data(), dyn);
  EXPECT_EQ(count_mismatches(dout, answer), 0);
  set_element(dout, N0 - 2, N1 - 2, N2 - 2, 0);
  EXPECT_EQ(count_mismatches(dout, answer), 1);
}

TYPED_TEST(Layouts, TinyMatrixSumAllVersionsAndTheCheck) {
  using Layout = TypeParam;
  constexpr Index M = 11;
  const Shape<Index, Fixed<3>, Fixed<3>> mixed{M, {}, {}};
  const Shape<Index, Index, Index> dyn{M, 3, 3};
  HostArray3<Layout> in("in", M, 3, 3), out("out", M, 3, 3);
  fill(in, seed_a);
  fill(out, seed_b);
  tiny_matrix_sum_karma(in, out);
  tiny_matrix_sum_karma_byref(in, out);
  tiny_matrix_sum_raw<Layout>(in.data(), out.data(), mixed);
  tiny_matrix_sum_raw<Layout>(in.data(), out.data(), dyn);
  EXPECT_EQ(count_mismatches(out, AccumulatedAnswer{seed_b, seed_a, 4}), 0);
  // One execution too few or too many is caught.
  EXPECT_GT(count_mismatches(out, AccumulatedAnswer{seed_b, seed_a, 3}), 0);
  EXPECT_GT(count_mismatches(out, AccumulatedAnswer{seed_b, seed_a, 5}), 0);

  DeviceArray3<Layout> din("din", M, 3, 3), dout("dout", M, 3, 3);
  fill(din, seed_a);
  fill(dout, seed_b);
  tiny_matrix_sum_karma_parallel(din, dout);
  tiny_matrix_sum_raw_parallel<Layout>(din.data(), dout.data(), mixed);
  EXPECT_EQ(count_mismatches(dout, AccumulatedAnswer{seed_b, seed_a, 2}), 0);
  // Static 3 x 3, as benchmarked.
  Array<int*[3][3], Layout, DefaultMemory> s("s", M), t("t", M);
  fill(dynamic_view(s), seed_a);
  fill(dynamic_view(t), seed_b);
  tiny_matrix_sum_karma_parallel(s, t);
  EXPECT_EQ(count_mismatches(dynamic_view(t), AccumulatedAnswer{seed_b, seed_a, 1}), 0);
  set_element(dout, M - 1, 2, 1, 1234);
  EXPECT_EQ(count_mismatches(dout, AccumulatedAnswer{seed_b, seed_a, 2}), 1);
}

TYPED_TEST(Layouts, MatVecAllVersionsAndTheCheck) {
  using Layout = TypeParam;
  constexpr Index rows = 13, cols = 6;
  using Matrix = Array<double**, Layout, HostMemory>;
  using Vector = Array<double*, Layout, HostMemory>;
  Matrix A("A", rows, cols);
  Vector x("x", cols), y("y", rows);
  fill(A, seed_a);
  fill(x, seed_x);
  auto run_host = [&](auto kernel) {
    Kokkos::deep_copy(y, double(poison));
    kernel();
    return count_matvec_mismatches(y, seed_a, seed_x, cols);
  };
  EXPECT_EQ(run_host([&] { matvec_karma(A, x, y); }), 0);
  EXPECT_EQ(run_host([&] { matvec_karma_byref(A, x, y); }), 0);
  EXPECT_EQ(run_host([&] { matvec_raw<Layout>(A.data(), x.data(), y.data(), rows, cols); }), 0);
  EXPECT_EQ(run_host([] {}), rows);
  matvec_karma(A, x, y);
  y(5) += 0.5;
  EXPECT_EQ(count_matvec_mismatches(y, seed_a, seed_x, cols), 1);

  using DMatrix = Array<double**, Layout, DefaultMemory>;
  using DVector = Array<double*, Layout, DefaultMemory>;
  DMatrix dA("dA", rows, cols);
  DVector dx("dx", cols), dy("dy", rows);
  fill(dA, seed_a);
  fill(dx, seed_x);
  matvec_karma_parallel(dA, dx, dy);
  EXPECT_EQ(count_matvec_mismatches(dy, seed_a, seed_x, cols), 0);
  Kokkos::deep_copy(dy, double(poison));
  matvec_raw_parallel<Layout>(dA.data(), dx.data(), dy.data(), rows, cols);
  EXPECT_EQ(count_matvec_mismatches(dy, seed_a, seed_x, cols), 0);
}

TEST(Checks, SampledCheckCoversCornersAndStaysInBounds) {
  // More points than samples: the 8 corners, then pseudo-random points.
  const SamplePoint point{64, 40, 30, 20};
  ASSERT_FALSE(point.all());
  ASSERT_EQ(point.count(), 64);
  bool corner_hit[8] = {};
  for (Index s = 0; s < point.count(); ++s) {
    Index i = -1, j = -1, k = -1;
    point(s, i, j, k);
    ASSERT_TRUE(i >= 0 && i < 40 && j >= 0 && j < 30 && k >= 0 && k < 20) << s;
    if (s < 8) corner_hit[(i ? 1 : 0) + (j ? 2 : 0) + (k ? 4 : 0)] = true;
  }
  for (bool hit : corner_hit) EXPECT_TRUE(hit);

  // A corrupted corner of an array larger than the sample is caught.
  HostArray3<Right> a("a", 40, 30, 20);
  fill(a, seed_a);
  const InputAnswer answer{seed_a};
  EXPECT_EQ(count_mismatches(a, answer, 64), 0);
  a(39, 29, 19) += 1;
  EXPECT_EQ(count_mismatches(a, answer, 64), 1);
}

TEST(Arrays, UnmanagedIsTheSameMemoryWithoutCounting) {
  Array<int* [4][3], Left, HostMemory> a("a", 5);
  const int before = a.use_count();
  const auto u = unmanaged(a);
  static_assert(std::is_same<typename decltype(u)::data_type, int* [4][3]>::value,
                "static extents kept");
  static_assert(std::is_same<typename decltype(u)::array_layout, Left>::value, "layout kept");
  EXPECT_EQ(u.data(), a.data());
  EXPECT_EQ(u.extent(0), 5u);
  EXPECT_EQ(a.use_count(), before);
  const auto slab = Kokkos::subview(u, 2, Kokkos::ALL, Kokkos::ALL);
  EXPECT_EQ(&slab(1, 2), &a(2, 1, 2));
  EXPECT_EQ(a.use_count(), before);
}

}  // namespace karma_test_microbench
