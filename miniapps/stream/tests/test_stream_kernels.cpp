// The STREAM kernels and their checker on small arrays: every kernel against
// the scalar recurrence (Gold), a corrupted element caught, the accounting
// table, and the iteration policy covering every element once.
#include "stream_kernels.hpp"
#include "stream_verify.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace karma_test_stream {

using namespace karma::stream;

using Shape = std::array<std::size_t, 3>;

template <class View>
View make(const std::string& label, const Shape& shape) {
  if constexpr (rank_of<View>() == 1)
    return View(label, shape[0]);
  else
    return View(label, shape[0], shape[1], shape[2]);
}

template <class View>
std::size_t elements(const View& v) {
  return v.size();
}

// The index of the first (0), middle (1) or last (2) of n elements.
std::size_t index_1d(std::size_t n, int which) {
  return which == 0 ? 0 : which == 1 ? n / 2 : n - 1;
}

// Multi-indices used to corrupt an array: first, middle and last element.
template <class View>
void set_element(const View& v, int which, double value) {
  using T = typename View::non_const_value_type;
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  if constexpr (rank_of<View>() == 1) {
    h(index_1d(v.extent(0), which)) = static_cast<T>(value);
  } else {
    const std::size_t n0 = v.extent(0), n1 = v.extent(1), n2 = v.extent(2);
    if (which == 0)
      h(0, 0, 0) = static_cast<T>(value);
    else if (which == 1)
      h(n0 / 2, n1 - 1, 0) = static_cast<T>(value);
    else
      h(n0 - 1, n1 - 1, n2 - 1) = static_cast<T>(value);
  }
  Kokkos::deep_copy(v, h);
}

template <class View>
double host_element(const View& v, int which) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  if constexpr (rank_of<View>() == 1) {
    return static_cast<double>(h(index_1d(v.extent(0), which)));
  } else {
    const std::size_t n0 = v.extent(0), n1 = v.extent(1), n2 = v.extent(2);
    if (which == 0) return static_cast<double>(h(0, 0, 0));
    if (which == 1) return static_cast<double>(h(n0 / 2, n1 - 1, 0));
    return static_cast<double>(h(n0 - 1, n1 - 1, n2 - 1));
  }
}

template <class View>
struct Run {
  using T = typename View::non_const_value_type;
  Arrays<View> x;
  Gold<T> gold;
  double worst_dot_error = 0;  // relative, over every dot executed
  int dots = 0;
};

// Initialises, then runs every kernel in table order `iterations` times,
// replaying each on the gold scalars and comparing every dot product.
template <class View, class Index>
Run<View> run_kernels(const Shape& shape, int iterations, Policy3D policy = Policy3D::mdrange) {
  Run<View> r{
      {make<View>("a", shape), make<View>("b", shape), make<View>("c", shape), policy}, {}, 0, 0};
  initialize<View, Index>(r.x);
  const double n = static_cast<double>(elements(r.x.a));
  for (int it = 0; it < iterations; ++it) {
    for (const auto& spec : kernel_table) {
      const double result = execute<View, Index>(spec.kernel, r.x);
      const double per_element = r.gold.apply(spec.kernel);
      if (spec.kernel == Kernel::dot) {
        const double expected = per_element * n;
        const double e = std::abs(result - expected) / std::abs(expected);
        r.worst_dot_error =
            e == e ? std::max(r.worst_dot_error, e) : std::numeric_limits<double>::infinity();
        ++r.dots;
      } else {
        EXPECT_EQ(result, 0.0) << spec.name << " returns a value";
      }
    }
  }
  Kokkos::fence();
  return r;
}

template <class View>
double tolerance() {
  return 100.0 * std::numeric_limits<typename View::non_const_value_type>::epsilon();
}

template <class View, class Index>
void expect_matches_gold(const Shape& shape, Policy3D policy = Policy3D::mdrange) {
  constexpr int iterations = 3;
  const Run<View> r = run_kernels<View, Index>(shape, iterations, policy);
  const double tol = tolerance<View>();
  EXPECT_LE((max_relative_error<View, Index>(r.x.a, r.gold.a)), tol);
  EXPECT_LE((max_relative_error<View, Index>(r.x.b, r.gold.b)), tol);
  EXPECT_LE((max_relative_error<View, Index>(r.x.c, r.gold.c)), tol);
  EXPECT_EQ(r.dots, iterations);
  const double n = static_cast<double>(elements(r.x.a));
  EXPECT_LE(r.worst_dot_error, tol + n * std::numeric_limits<double>::epsilon());
  // The gold values moved away from the start values: the check is not vacuous.
  EXPECT_NE(static_cast<double>(r.gold.a), start_a);
  EXPECT_NE(static_cast<double>(r.gold.b), start_b);
  EXPECT_NE(static_cast<double>(r.gold.c), start_c);
  // And the arrays hold them, at both ends.
  for (int which : {0, 2}) {
    EXPECT_NEAR(host_element(r.x.a, which), static_cast<double>(r.gold.a),
                tol * std::abs(static_cast<double>(r.gold.a)));
    EXPECT_NEAR(host_element(r.x.c, which), static_cast<double>(r.gold.c),
                tol * std::abs(static_cast<double>(r.gold.c)));
  }
}

template <class View, class Index>
void expect_corruption_caught(const Shape& shape) {
  using T = typename View::non_const_value_type;
  const Run<View> r = run_kernels<View, Index>(shape, 2);
  const double tol = tolerance<View>();
  ASSERT_LE((max_relative_error<View, Index>(r.x.b, r.gold.b)), tol);

  // Ten times the tolerance (1e-6 at least), on one element at a time.
  const double relative = std::max(1e-6, 10.0 * tol);
  const double good_b = static_cast<double>(r.gold.b);
  const double bad_b = static_cast<double>(static_cast<T>(good_b * (1.0 + relative)));
  const double actual = std::abs(bad_b - good_b) / std::abs(good_b);
  for (int which : {2, 0, 1}) {
    SCOPED_TRACE("element " + std::to_string(which));
    set_element(r.x.b, which, bad_b);
    const double e = max_relative_error<View, Index>(r.x.b, r.gold.b);
    EXPECT_GT(e, tol);
    EXPECT_NEAR(e, actual, 1e-3 * actual);
    set_element(r.x.b, which, good_b);
    EXPECT_LE((max_relative_error<View, Index>(r.x.b, r.gold.b)), tol);
  }
  // The others were not touched.
  EXPECT_LE((max_relative_error<View, Index>(r.x.a, r.gold.a)), tol);

  // A NaN anywhere is as wrong as can be: infinity, or the largest double
  // (which a device can produce without <limits>); never NaN, which would
  // compare as passing nothing and failing nothing.
  for (int which : {0, 1, 2}) {
    SCOPED_TRACE("NaN at element " + std::to_string(which));
    set_element(r.x.c, which, std::numeric_limits<double>::quiet_NaN());
    const double e = max_relative_error<View, Index>(r.x.c, r.gold.c);
    EXPECT_FALSE(std::isnan(e));
    EXPECT_GE(e, std::numeric_limits<double>::max()) << e;
    EXPECT_GT(e, tol);
    set_element(r.x.c, which, static_cast<double>(r.gold.c));
  }
  EXPECT_LE((max_relative_error<View, Index>(r.x.c, r.gold.c)), tol);
}

using D1 = karma::Array<double*>;
using F1 = karma::Array<float*, karma::Left>;
using F3Left = karma::Array<float***, karma::Left>;
using D3Right = karma::Array<double***, karma::Right>;
using D3Left = karma::Array<double***, karma::Left>;

const Shape shape1{1001, 1, 1};
const Shape shape3{5, 7, 3};
const Shape shape3_larger{17, 9, 13};

TEST(StreamKernels, Double1DIntIndex) { expect_matches_gold<D1, int>(shape1); }
TEST(StreamKernels, Double1DInt64Index) { expect_matches_gold<D1, std::int64_t>(shape1); }
TEST(StreamKernels, Float1DIntIndex) { expect_matches_gold<F1, int>(shape1); }
TEST(StreamKernels, Float3DLeftIntIndex) { expect_matches_gold<F3Left, int>(shape3); }
TEST(StreamKernels, Float3DLeftInt64Index) { expect_matches_gold<F3Left, std::int64_t>(shape3); }
TEST(StreamKernels, Double3DRightIntIndex) { expect_matches_gold<D3Right, int>(shape3); }
TEST(StreamKernels, Double3DRightInt64Index) { expect_matches_gold<D3Right, std::int64_t>(shape3); }
TEST(StreamKernels, Double3DLeftLargerIntIndex) { expect_matches_gold<D3Left, int>(shape3_larger); }
TEST(StreamKernels, Float3DLeftRangePolicy) {
  expect_matches_gold<F3Left, int>(shape3_larger, Policy3D::range);
}
TEST(StreamKernels, Double3DRightRangePolicy) {
  expect_matches_gold<D3Right, int>(shape3, Policy3D::range);
  expect_matches_gold<D3Right, int>(shape3_larger, Policy3D::range);
}

// Policy3D::range's items cover every element once for any number of
// elements per item, also where it does not divide the middle extent, and
// give each element its own (i, j, k).
struct Mark {
  static constexpr int inputs = 1;
  KOKKOS_INLINE_FUNCTION void load(const double&, const double&, const double&, double*) const {}
  KOKKOS_INLINE_FUNCTION void store(double&, double&, double& c, const double*) const { c += 1; }
};

template <class View, int U>
void expect_items_cover_each_element_once(const Shape& shape) {
  SCOPED_TRACE(std::to_string(U) + " elements per item");
  const View a = make<View>("a", shape), b = make<View>("b", shape), c = make<View>("c", shape);
  const auto items = Items3D<U>::of(c);
  Kokkos::parallel_for("mark", Kokkos::RangePolicy<Kokkos::IndexType<int>>(0, items.count),
                       ForEachItem3D<View, Mark, U>{a, b, c, Mark{}, items});
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c);
  int wrong = 0;
  for (std::size_t k = 0; k < c.extent(2); ++k)
    for (std::size_t j = 0; j < c.extent(1); ++j)
      for (std::size_t i = 0; i < c.extent(0); ++i) wrong += h(i, j, k) != 1.0;
  EXPECT_EQ(wrong, 0);
}

template <class View>
void expect_items_cover(const Shape& shape) {
  expect_items_cover_each_element_once<View, 1>(shape);
  expect_items_cover_each_element_once<View, 2>(shape);
  expect_items_cover_each_element_once<View, 3>(shape);
  expect_items_cover_each_element_once<View, 4>(shape);
}

// Where the size picks the 3D policy, the code version names both policies'
// code, whichever ran.
TEST(StreamPolicy, AutoNamesTheCodeOfBothPolicies) {
  const D3Left a = make<D3Left>("a", shape3), b = make<D3Left>("b", shape3),
               c = make<D3Left>("c", shape3);
  for (const Policy3D ran : {Policy3D::range, Policy3D::mdrange}) {
    const Arrays<D3Left> x{a, b, c, ran};
    const auto code = code_of_auto_3d(Kernel::copy, x);
    for (const char* symbol : {"karma::stream::ForEachItem3D", "karma::stream::ForEach"})
      EXPECT_NE(std::find(code.begin(), code.end(), symbol), code.end()) << symbol;
    EXPECT_EQ(launch_of_auto_3d(Kernel::copy, x)["policy_3d"], "auto");
  }
}

TEST(StreamPolicy, RangeItemsCoverEachElementOnce) {
  for (const Shape& shape : {shape3, shape3_larger, Shape{1, 9, 2}, Shape{4, 4, 4}}) {
    expect_items_cover<D3Left>(shape);
    expect_items_cover<D3Right>(shape);
  }
}

// 1D items in tiles cover every element once for any number of elements per
// item, also where the elements end inside a tile or fill it exactly.
template <int U>
void expect_1d_items_cover_each_element_once(std::size_t n) {
  SCOPED_TRACE(std::to_string(n) + " elements, " + std::to_string(U) + " per item");
  const D1 a("a", n), b("b", n), c("c", n);
  Kokkos::parallel_for("mark", policy_for<D1, int, U>(c),
                       ForEach<D1, Mark, U>{a, b, c, Mark{}, static_cast<std::int64_t>(n)});
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c);
  int wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += h(i) != 1.0;
  EXPECT_EQ(wrong, 0);
}

TEST(StreamPolicy, OneDItemsCoverEachElementOnce) {
  for (const std::size_t n : {1, 31, 64, 65, 127, 128, 1001, 4099}) {
    expect_1d_items_cover_each_element_once<1>(n);
    expect_1d_items_cover_each_element_once<2>(n);
    expect_1d_items_cover_each_element_once<3>(n);
    expect_1d_items_cover_each_element_once<4>(n);
  }
}

// Consecutive items of a tile read consecutive elements, for each element
// of the item: what makes a warp's loads one segment each.
TEST(StreamPolicy, OneDTileItemsReadConsecutiveElements) {
  for (std::int64_t item = 0; item + 1 < 3 * tile_items; ++item) {
    if ((item + 1) % tile_items == 0) continue;
    for (int u = 0; u < 4; ++u) EXPECT_EQ(element_1d<4>(item + 1, u), element_1d<4>(item, u) + 1);
  }
  EXPECT_EQ(element_1d<4>(tile_items, 0), 4 * tile_items);
  EXPECT_EQ(element_1d<1>(1234, 0), 1234);
}

// The 3D dot GPUs run, here on whatever device the build has: every product
// once, for walks whose stride wraps the contiguous and the middle extent.
TEST(StreamDotTeams, ThreeDEveryProductOnceForAnyShape) {
  using Exec = Kokkos::DefaultExecutionSpace;
  for (const Shape& shape : {shape3, shape3_larger, Shape{1, 9, 2}}) {
    const D3Right a = make<D3Right>("a", shape), b = make<D3Right>("b", shape);
    const D3Left al = make<D3Left>("al", shape), bl = make<D3Left>("bl", shape);
    auto ha = Kokkos::create_mirror_view(a);
    auto hb = Kokkos::create_mirror_view(b);
    auto hal = Kokkos::create_mirror_view(al);
    auto hbl = Kokkos::create_mirror_view(bl);
    double expected = 0;
    for (std::size_t i = 0; i < shape[0]; ++i)
      for (std::size_t j = 0; j < shape[1]; ++j)
        for (std::size_t k = 0; k < shape[2]; ++k) {
          const std::size_t n = i + 31 * j + 7 * k;
          ha(i, j, k) = hal(i, j, k) = static_cast<double>(1 + n % 7);
          hb(i, j, k) = hbl(i, j, k) = static_cast<double>(3 - static_cast<int>(n % 5));
          expected += ha(i, j, k) * hb(i, j, k);
        }
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(b, hb);
    Kokkos::deep_copy(al, hal);
    Kokkos::deep_copy(bl, hbl);
    const int widest = Kokkos::TeamPolicy<Exec>(1, 1).team_size_max(DotTeams3D<D3Right, Exec>{},
                                                                    Kokkos::ParallelForTag());
    for (const int teams : {1, 3, 64}) {
      for (const int team_size : {1, std::min(widest, 32)}) {
        SCOPED_TRACE(std::to_string(teams) + " teams of " + std::to_string(team_size));
        const Kokkos::View<double*, ResultMemory> partials("partials", teams);
        EXPECT_EQ(dot_in_teams_3d(a, b, partials, team_size, teams), expected);
        EXPECT_EQ(dot_in_teams_3d(al, bl, partials, team_size, teams), expected);
      }
    }
  }
}

TEST(StreamVerification, Double1DCorruptionCaught) { expect_corruption_caught<D1, int>(shape1); }
TEST(StreamVerification, Double1DInt64CorruptionCaught) {
  expect_corruption_caught<D1, std::int64_t>(shape1);
}
TEST(StreamVerification, Float3DLeftCorruptionCaught) {
  expect_corruption_caught<F3Left, int>(shape3);
}
TEST(StreamVerification, Float3DLeftInt64CorruptionCaught) {
  expect_corruption_caught<F3Left, std::int64_t>(shape3);
}
TEST(StreamVerification, Double3DRightCorruptionCaught) {
  expect_corruption_caught<D3Right, int>(shape3);
}
TEST(StreamVerification, Double3DRightInt64CorruptionCaught) {
  expect_corruption_caught<D3Right, std::int64_t>(shape3);
}

// Two arrays of n small integers and their dot, which every order of adding
// gets exactly.
double integer_a(std::size_t i) { return static_cast<double>(1 + i % 7); }
double integer_b(std::size_t i) { return static_cast<double>(3 - static_cast<int>(i % 5)); }

struct IntegerDot {
  D1 a, b;
  double expected = 0;
};

IntegerDot integer_dot(std::size_t n) {
  IntegerDot d{D1("a", n), D1("b", n)};
  auto ha = Kokkos::create_mirror_view(d.a);
  auto hb = Kokkos::create_mirror_view(d.b);
  for (std::size_t i = 0; i < n; ++i) {
    ha(i) = integer_a(i);
    hb(i) = integer_b(i);
    d.expected += ha(i) * hb(i);
  }
  Kokkos::deep_copy(d.a, ha);
  Kokkos::deep_copy(d.b, hb);
  return d;
}

// The two-stage dot that GPUs run, here on whatever device the build has: every
// product counted once for any number of teams and any team size, also when
// teams outnumber elements. Small integers keep every sum exact.
TEST(StreamDotTeams, EveryProductOnceForAnyShape) {
  using Exec = Kokkos::DefaultExecutionSpace;
  const int widest =
      Kokkos::TeamPolicy<Exec>(1, 1).team_size_max(DotTeams<D1, Exec>{}, Kokkos::ParallelForTag());
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{7}, std::size_t{1001}, std::size_t{4099}}) {
    const auto [a, b, expected] = integer_dot(n);
    for (const int teams : {1, 3, 64}) {
      for (const int team_size : {1, std::min(widest, 32), std::min(widest, dot_team_size)}) {
        SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(teams) + " teams of " +
                     std::to_string(team_size));
        const Kokkos::View<double*, ResultMemory> partials("partials", teams);
        EXPECT_EQ(dot_in_teams(a, b, partials, team_size), expected);
      }
    }
  }
}

// The dot that hosts run in 1D, here on whatever device the build has: every
// product counted once for lengths below, at and past a block of 8, and one
// changed element, first, last or inside a block, changes the sum. Small
// integers keep every sum exact.
TEST(StreamDotBlocks, EveryProductOnceForAnyLength) {
  const Kokkos::View<double, ResultMemory> total("total");
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                              std::size_t{1001}, std::size_t{4099}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const auto [a, b, expected] = integer_dot(n);
    EXPECT_EQ((dot_in_blocks<D1, int>(a, b, total)), expected);
    EXPECT_EQ((dot_in_blocks<D1, std::int64_t>(a, b, total)), expected);
    for (const int which : {0, 1, 2}) {  // first, middle, last
      const std::size_t i = index_1d(n, which);
      set_element(a, which, integer_a(i) + 2.0);
      EXPECT_EQ((dot_in_blocks<D1, int>(a, b, total)), expected + 2.0 * integer_b(i))
          << "element " << i;
      set_element(a, which, integer_a(i));
    }
  }
}

// A wrong product anywhere changes the two-stage dot: a partial that was
// dropped or written by the wrong team would not.
TEST(StreamDotTeams, OneChangedElementChangesTheSum) {
  const std::size_t n = 1001;
  D1 a("a", n), b("b", n);
  Kokkos::deep_copy(a, 1.0);
  Kokkos::deep_copy(b, 2.0);
  const Kokkos::View<double*, ResultMemory> partials("partials", 5);
  EXPECT_EQ(dot_in_teams(a, b, partials, 1), 2.0 * n);
  for (int which : {0, 1, 2}) {
    SCOPED_TRACE("element " + std::to_string(which));
    set_element(a, which, 4.0);
    EXPECT_EQ(dot_in_teams(a, b, partials, 1), 2.0 * n + 6.0);
    set_element(a, which, 1.0);
  }
}

// GPUs get one partial per team of dot_waves waves of the teams the device
// holds at once, enough for the 3D walk's one wave too; hosts need none.
TEST(StreamDotTeams, PartialsOnlyWhereTheTeamsRun) {
  const DotResult r = make_dot_result();
  if (karma::is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
    const int concurrency = Kokkos::DefaultExecutionSpace().concurrency();
    EXPECT_EQ(r.partials.extent(0),
              static_cast<std::size_t>(dot_waves * (concurrency / dot_team_size)));
    EXPECT_EQ(r.one_wave_3d, concurrency / dot_team_size_3d);
    EXPECT_LE(static_cast<std::size_t>(r.one_wave_3d), r.partials.extent(0));
  } else {
    EXPECT_EQ(r.partials.extent(0), 0u);
  }
}

// The partials' sum in running sums: every partial once, for any count.
TEST(StreamDotTeams, PartialsAddUpForAnyCount) {
  std::vector<double> partials(4229);
  for (std::size_t t = 0; t < partials.size(); ++t) partials[t] = static_cast<double>(1 + t % 13);
  for (const int count : {0, 1, 7, 8, 9, 16, 23, 4224, 4229}) {
    SCOPED_TRACE(std::to_string(count) + " partials");
    double expected = 0;
    for (int t = 0; t < count; ++t) expected += partials[t];
    EXPECT_EQ(add_partials(partials.data(), count), expected);
  }
}

// An array every element of which is 1 except the ones set here.
template <class View>
View ones(const Shape& shape) {
  View v = make<View>("ones", shape);
  Kokkos::deep_copy(v, 1.0);
  return v;
}

TEST(StreamVerification, MaxRelativeErrorOnKnownValues) {
  auto v = ones<D3Left>(shape3);
  EXPECT_EQ((max_relative_error<D3Left, int>(v, 1.0)), 0.0);
  EXPECT_DOUBLE_EQ((max_relative_error<D3Left, int>(v, 2.0)), 0.5);
  EXPECT_DOUBLE_EQ((max_relative_error<D3Left, int>(v, -1.0)), 2.0);  // scale is |expected|
  set_element(v, 1, 1.25);
  set_element(v, 2, 0.875);
  EXPECT_DOUBLE_EQ((max_relative_error<D3Left, int>(v, 1.0)), 0.25);  // the worst, not the last
  // Expected zero: the absolute difference.
  auto z = ones<D1>(shape1);
  Kokkos::deep_copy(z, 0.0);
  set_element(z, 1, -3e-3);
  EXPECT_DOUBLE_EQ((max_relative_error<D1, std::int64_t>(z, 0.0)), 3e-3);
}

// Gold against the recurrence worked out by hand from the start values
// a = 0.1, b = 0.2, c = 0, scalar 0.4.
TEST(StreamGold, OnePassByHand) {
  Gold<double> g;
  EXPECT_EQ(g.apply(Kernel::copy), 0.0);
  EXPECT_DOUBLE_EQ(g.c, 0.1);
  g.apply(Kernel::mul);
  EXPECT_DOUBLE_EQ(g.b, 0.04);
  g.apply(Kernel::add);
  EXPECT_DOUBLE_EQ(g.c, 0.14);
  g.apply(Kernel::triad);
  EXPECT_DOUBLE_EQ(g.a, 0.096);
  EXPECT_DOUBLE_EQ(g.apply(Kernel::dot), 0.096 * 0.04);
  EXPECT_DOUBLE_EQ(g.a, 0.096);  // dot changes nothing
  g.apply(Kernel::nstream);
  EXPECT_DOUBLE_EQ(g.a, 0.096 + 0.04 + 0.4 * 0.14);
  EXPECT_DOUBLE_EQ(g.b, 0.04);
  EXPECT_DOUBLE_EQ(g.c, 0.14);
}

TEST(StreamGold, FloatRecurrenceRoundsInFloat) {
  Gold<float> g;
  g.apply(Kernel::copy);
  g.apply(Kernel::mul);
  EXPECT_EQ(g.b, 0.4f * 0.1f);
  static_assert(std::is_same<decltype(g.a), float>::value, "Gold<float> holds floats");
}

TEST(StreamTable, KernelsInOrderWithTheirAccounting) {
  static_assert(sizeof(kernel_table) / sizeof(kernel_table[0]) == 6, "six kernels");
  const Kernel kernels[] = {Kernel::copy,  Kernel::mul, Kernel::add,
                            Kernel::triad, Kernel::dot, Kernel::nstream};
  const char* names[] = {"copy", "mul", "add", "triad", "dot", "nstream"};
  const int arrays[] = {2, 2, 3, 3, 2, 4};
  const int flops[] = {0, 1, 1, 2, 2, 3};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(kernel_table[i].kernel, kernels[i]);
    EXPECT_EQ(std::string(kernel_table[i].name), names[i]);
    EXPECT_EQ(kernel_table[i].arrays_touched, arrays[i]);
    EXPECT_EQ(kernel_table[i].flops_per_element, flops[i]);
  }
  // Bytes of one triad over 1000 doubles, as the app counts them.
  EXPECT_EQ(kernel_table[3].arrays_touched * sizeof(double) * 1000, 24000u);
}

// --- the iteration policy -------------------------------------------------------------

// Counts the visits of each element and records a linear index there.
template <class View, class Counts>
struct Visit {
  View v;
  Counts counts;
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i) const {
    Kokkos::atomic_add(&counts(i), 1);
    v(i) = static_cast<double>(i);
  }
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, const I j, const I k) const {
    Kokkos::atomic_add(&counts(i, j, k), 1);
    v(i, j, k) = static_cast<double>(i + v.extent(0) * (j + v.extent(1) * k));
  }
};

template <class View, class Index>
void expect_policy_visits_each_element_once(const Shape& shape) {
  using Layout = typename View::array_layout;
  using Counts = std::conditional_t<rank_of<View>() == 1, karma::Array<int*, Layout>,
                                    karma::Array<int***, Layout>>;
  const View v = make<View>("v", shape);
  const Counts counts = make<Counts>("counts", shape);
  const auto policy = policy_for<View, Index>(v);
  static_assert(std::is_same<typename decltype(policy)::index_type, Index>::value,
                "the policy uses the requested index type");
  Kokkos::parallel_for("visit", policy, Visit<View, Counts>{v, counts});
  Kokkos::fence();
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
  int wrong_count = 0, wrong_value = 0;
  if constexpr (rank_of<View>() == 1) {
    for (std::size_t i = 0; i < v.extent(0); ++i) {
      wrong_count += hc(i) != 1;
      wrong_value += hv(i) != static_cast<double>(i);
    }
  } else {
    const std::size_t n0 = v.extent(0), n1 = v.extent(1), n2 = v.extent(2);
    for (std::size_t k = 0; k < n2; ++k)
      for (std::size_t j = 0; j < n1; ++j)
        for (std::size_t i = 0; i < n0; ++i) {
          wrong_count += hc(i, j, k) != 1;
          wrong_value += hv(i, j, k) != static_cast<double>(i + n0 * (j + n1 * k));
        }
  }
  EXPECT_EQ(wrong_count, 0);
  EXPECT_EQ(wrong_value, 0);
}

TEST(StreamPolicy, Left3DVisitsEachElementOnce) {
  expect_policy_visits_each_element_once<D3Left, int>(shape3);
  expect_policy_visits_each_element_once<F3Left, std::int64_t>(shape3_larger);
}

TEST(StreamPolicy, Right3DVisitsEachElementOnce) {
  expect_policy_visits_each_element_once<D3Right, int>(shape3);
  expect_policy_visits_each_element_once<D3Right, std::int64_t>(shape3_larger);
}

TEST(StreamPolicy, OneDVisitsEachElementOnce) {
  expect_policy_visits_each_element_once<D1, int>(shape1);
  expect_policy_visits_each_element_once<D1, std::int64_t>(shape1);
}

TEST(StreamPolicy, IteratesInMemoryOrder) {
  using LeftPolicy = decltype(policy_for<D3Left, int>(std::declval<D3Left>()));
  using RightPolicy = decltype(policy_for<D3Right, int>(std::declval<D3Right>()));
  static_assert(LeftPolicy::outer_direction == Kokkos::Iterate::Left &&
                    LeftPolicy::inner_direction == Kokkos::Iterate::Left,
                "LayoutLeft iterates left-fastest");
  static_assert(RightPolicy::outer_direction == Kokkos::Iterate::Right &&
                    RightPolicy::inner_direction == Kokkos::Iterate::Right,
                "LayoutRight iterates right-fastest");
  const auto p1 = policy_for<D1, int>(D1("w", 1001));
  EXPECT_EQ(p1.begin(), 0);
  EXPECT_EQ(p1.end(), 1001);
}

}  // namespace karma_test_stream
