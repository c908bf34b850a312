// Inputs and answer checks of karma-microbench.
//
// Every input element is a hash of its logical indices, so an array holds the
// same values in either layout and the right answer at any point can be
// computed from the indices alone, on the device, without a second copy of
// the data. Values are small integers (-3..3), so every sum and product is
// exact in int and double whatever the order: results are compared exactly.
#pragma once

#include "microbench_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::microbench {

// Seeds of the arrays, so no two arrays hold the same values.
enum Seed : std::uint32_t { seed_a = 0x1234567u, seed_b = 0x89abcdefu, seed_x = 0x2468ace0u };

// Outputs start here: no kernel can produce it, so an element a kernel should
// have written and did not is caught.
constexpr int poison = 1000;

// A value in -3..3 from the indices (a 32-bit integer hash).
KOKKOS_INLINE_FUNCTION int input_value(std::uint32_t seed, Index i, Index j = 0, Index k = 0) {
  std::uint32_t h = seed ^ (static_cast<std::uint32_t>(i) * 0x9E3779B1u) ^
                    (static_cast<std::uint32_t>(j) * 0x85EBCA77u) ^
                    (static_cast<std::uint32_t>(k) * 0xC2B2AE3Du);
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return static_cast<int>(h % 7u) - 3;
}

template <class View>
using space_of = typename View::execution_space;

// a(i, j, k) = input_value(seed, i, j, k), for arrays of rank 1 to 3.
template <class View>
void fill(const View& a, std::uint32_t seed) {
  using T = value_t<View>;
  using Space = space_of<View>;
  if constexpr (View::rank == 1) {
    Kokkos::parallel_for(
        "microbench::fill", Kokkos::RangePolicy<Space, Kokkos::IndexType<Index>>(0, a.extent(0)),
        KOKKOS_LAMBDA(const Index i) { a(i) = static_cast<T>(input_value(seed, i)); });
  } else if constexpr (View::rank == 2) {
    using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>, Kokkos::IndexType<Index>>;
    Kokkos::parallel_for(
        "microbench::fill",
        Policy({0, 0}, {static_cast<Index>(a.extent(0)), static_cast<Index>(a.extent(1))}),
        KOKKOS_LAMBDA(const Index i, const Index j) {
          a(i, j) = static_cast<T>(input_value(seed, i, j));
        });
  } else {
    static_assert(View::rank == 3, "arrays of rank 1 to 3");
    using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>, Kokkos::IndexType<Index>>;
    Kokkos::parallel_for(
        "microbench::fill",
        Policy({0, 0, 0}, {static_cast<Index>(a.extent(0)), static_cast<Index>(a.extent(1)),
                           static_cast<Index>(a.extent(2))}),
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k) {
          a(i, j, k) = static_cast<T>(input_value(seed, i, j, k));
        });
  }
  Kokkos::fence();
}

// The same memory as a dynamic array: fills and checks are written once for
// every variant, and read the raw versions' memory through the layout's
// definition.
template <class View>
auto dynamic_view(const View& a) {
  using Dynamic =
      UnmanagedArray<value_t<View>***, typename View::array_layout, typename View::memory_space>;
  return Dynamic(a.data(), a.extent(0), a.extent(1), a.extent(2));
}

// The sum of input_value(seed, i, j, k) over an n0 x n1 x n2 box, from the
// indices alone, on the default execution space.
inline std::int64_t expected_sum(std::uint32_t seed, Index n0, Index n1, Index n2) {
  using Policy = Kokkos::MDRangePolicy<DefaultSpace, Kokkos::Rank<3>, Kokkos::IndexType<Index>>;
  std::int64_t sum = 0;
  Kokkos::parallel_reduce(
      "microbench::expected_sum", Policy({0, 0, 0}, {n0, n1, n2}),
      KOKKOS_LAMBDA(const Index i, const Index j, const Index k, std::int64_t& acc) {
        acc += input_value(seed, i, j, k);
      },
      sum);
  return sum;
}

// Stencil3D's answer: the 27-point box sum inside, the untouched poison on
// the boundary.
struct StencilAnswer {
  std::uint32_t seed;
  Index n0, n1, n2;
  KOKKOS_INLINE_FUNCTION int operator()(Index i, Index j, Index k) const {
    if (i == 0 || j == 0 || k == 0 || i == n0 - 1 || j == n1 - 1 || k == n2 - 1) return poison;
    int sum = 0;
    for (Index di = -1; di <= 1; ++di)
      for (Index dj = -1; dj <= 1; ++dj)
        for (Index dk = -1; dk <= 1; ++dk) sum += input_value(seed, i + di, j + dj, k + dk);
    return sum;
  }
};

// TinyMatrixSum's answer after `times` executions of out += in.
struct AccumulatedAnswer {
  std::uint32_t seed_out, seed_in;
  Index times;
  KOKKOS_INLINE_FUNCTION Index operator()(Index i, Index j, Index k) const {
    return input_value(seed_out, i, j, k) + times * input_value(seed_in, i, j, k);
  }
};

// Points a check visits: every point of an array of at most `samples`
// elements; otherwise its 8 corners and pseudo-random others.
constexpr Index default_samples = Index{1} << 16;

struct SamplePoint {
  Index samples, n0, n1, n2;
  KOKKOS_INLINE_FUNCTION bool all() const { return n0 * n1 * n2 <= samples; }
  KOKKOS_INLINE_FUNCTION Index count() const { return all() ? n0 * n1 * n2 : samples; }
  KOKKOS_INLINE_FUNCTION void operator()(Index s, Index& i, Index& j, Index& k) const {
    if (all()) {
      i = s / (n1 * n2);
      j = s / n2 % n1;
      k = s % n2;
    } else if (s < 8) {
      i = (s & 1) ? n0 - 1 : 0;
      j = (s & 2) ? n1 - 1 : 0;
      k = (s & 4) ? n2 - 1 : 0;
    } else {
      i = pick(3 * s, n0);
      j = pick(3 * s + 1, n1);
      k = pick(3 * s + 2, n2);
    }
  }
  // A pseudo-random index below n (splitmix64 of x).
  KOKKOS_INLINE_FUNCTION static Index pick(Index x, Index n) {
    std::uint64_t z = static_cast<std::uint64_t>(x) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<Index>(z % static_cast<std::uint64_t>(n));
  }
};

// The number of sampled points of a 3D array that differ from answer(i, j, k).
template <class View, class Answer>
Index count_mismatches(const View& a, const Answer& answer, Index samples = default_samples) {
  const SamplePoint point{samples, static_cast<Index>(a.extent(0)), static_cast<Index>(a.extent(1)),
                          static_cast<Index>(a.extent(2))};
  Index bad = 0;
  Kokkos::parallel_reduce(
      "microbench::check",
      Kokkos::RangePolicy<space_of<View>, Kokkos::IndexType<Index>>(0, point.count()),
      KOKKOS_LAMBDA(const Index s, Index& b) {
        Index i = 0, j = 0, k = 0;
        point(s, i, j, k);
        if (static_cast<Index>(a(i, j, k)) != static_cast<Index>(answer(i, j, k))) ++b;
      },
      bad);
  return bad;
}

// The number of sampled rows of y = A x (A and x filled from seeds) that are
// wrong; sums of small integers are exact in double in any order.
template <class Vector>
Index count_matvec_mismatches(const Vector& y, std::uint32_t seed_matrix, std::uint32_t seed_vector,
                              Index cols, Index samples = Index{1} << 10) {
  const Index rows = y.extent(0);
  const SamplePoint point{samples, rows, 1, 1};
  Index bad = 0;
  Kokkos::parallel_reduce(
      "microbench::check_matvec",
      Kokkos::RangePolicy<space_of<Vector>, Kokkos::IndexType<Index>>(0, point.count()),
      KOKKOS_LAMBDA(const Index s, Index& b) {
        Index i = 0, j0 = 0, k0 = 0;
        point(s, i, j0, k0);
        double dot = 0;
        for (Index j = 0; j < cols; ++j)
          dot += double(input_value(seed_matrix, i, j)) * double(input_value(seed_vector, j));
        if (static_cast<double>(y(i)) != dot) ++b;
      },
      bad);
  return bad;
}

}  // namespace karma::microbench
