// karma-matvec's common ground (matvec_kernels.hpp): the variants, the
// element type and layout of an operator, the host loops' clones, partial
// sums, and the seeded data.
#pragma once

#include "karma/array.hpp"
#include "karma/math.hpp"
#include "karma/packed.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace karma::matvec {

enum class Variant { row_per_thread, team_per_row, mdrange };

struct VariantSpec {
  Variant variant;
  const char* name;
};

inline constexpr VariantSpec variant_table[] = {
    {Variant::row_per_thread, "row-per-thread"},
    {Variant::team_per_row, "team-per-row"},
    {Variant::mdrange, "mdrange"},
};

template <class View>
using value_t = typename View::non_const_value_type;

template <class View>
KOKKOS_INLINE_FUNCTION constexpr bool is_left() {
  return std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value;
}

// Host loops compiled for the CPU's vector ISA as well as for the baseline,
// chosen when the program starts (GCC function multiversioning), as OpenBLAS
// picks its kernels: the suite's default flags target baseline x86-64 (SSE2).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && \
    !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SANITIZE_ADDRESS__)
#define KARMA_MATVEC_HOST_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KARMA_MATVEC_HOST_CLONES
#endif

// Independent partial sums per thread. On a CPU eight break the floating-point
// add's latency chain (gcc does not reassociate a single sum without
// -ffast-math); on a GPU four keep four loads in flight per thread.
inline constexpr int gpu_partial_sums = 4;
template <class ExecSpace>
KOKKOS_INLINE_FUNCTION constexpr int partial_sums() {
  return is_gpu_space<ExecSpace>() ? gpu_partial_sums : 8;
}

// ---------------------------------------------------------------------------
// Seeded data. Every entry is a pure function of its global indices, so any
// rank, any decomposition and the host reference agree without moving data.

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A value in [-1, 1) with 24 significant bits: exact in float and double, so
// both precisions multiply the same numbers.
KOKKOS_INLINE_FUNCTION double unit_value(std::uint64_t h) {
  return static_cast<double>(h >> 40) * (1.0 / 8388608.0) - 1.0;
}

// A(row, col) = keyed_entry(row_key(seed, row), col): one hash a row, one an entry.
KOKKOS_INLINE_FUNCTION std::uint64_t row_key(std::uint64_t seed, std::int64_t row) {
  return splitmix64(seed ^ static_cast<std::uint64_t>(row));
}

KOKKOS_INLINE_FUNCTION double keyed_entry(std::uint64_t key, std::int64_t col) {
  return unit_value(splitmix64(key + static_cast<std::uint64_t>(col)));
}

KOKKOS_INLINE_FUNCTION double matrix_entry(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  return keyed_entry(row_key(seed, row), col);
}

KOKKOS_INLINE_FUNCTION double vector_entry(std::uint64_t seed, std::int64_t index) {
  return unit_value(splitmix64(splitmix64(~seed) + static_cast<std::uint64_t>(index)));
}

// Where this rank's B sits in the global A: y = A x over the rows
// [row0, row0 + rows) of A, or y = A^T x over those rows as B's columns.
struct Placement {
  std::uint64_t seed = 0;
  bool transpose = false;
  std::int64_t row0 = 0;
  KOKKOS_INLINE_FUNCTION double entry(std::int64_t r, std::int64_t k) const {
    return transpose ? matrix_entry(seed, row0 + k, r) : matrix_entry(seed, row0 + r, k);
  }
};

// Fills B with the seeded entries in its own memory order (first touch
// places a CPU's pages where its threads will read them).
template <class Matrix>
void fill_matrix(const Matrix& b, const Placement& where) {
  using Exec = typename Matrix::execution_space;
  using T = value_t<Matrix>;
  constexpr auto order = is_left<Matrix>() ? Kokkos::Iterate::Left : Kokkos::Iterate::Right;
  using Policy =
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, order, order>, Kokkos::IndexType<std::int64_t>>;
  const auto rows = static_cast<std::int64_t>(b.extent(0));
  const auto cols = static_cast<std::int64_t>(b.extent(1));
  if (rows == 0 || cols == 0) return;
  Kokkos::parallel_for(
      "matvec::fill_matrix", Policy({0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k) {
        b(r, k) = static_cast<T>(where.entry(r, k));
      });
}

// v(i) = vector_entry(seed, first + i).
template <class Vector>
void fill_vector(const Vector& v, std::uint64_t seed, std::int64_t first) {
  using Exec = typename Vector::execution_space;
  using T = value_t<Vector>;
  Kokkos::parallel_for(
      "matvec::fill_vector",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
          0, static_cast<std::int64_t>(v.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i) {
        v(i) = static_cast<T>(vector_entry(seed, first + i));
      });
}

}  // namespace karma::matvec
