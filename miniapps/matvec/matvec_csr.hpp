// Sparse y = A x with A in compressed rows, the kernels' sparse family
// beside the dense ones of matvec_kernels.hpp: column indices and values are
// two of the core's RaggedRight arrays sharing one offsets view. Patterns:
// seeded random (each entry present with probability `density`) or the 2D /
// 3D finite-difference Laplacian. Every row is a pure function of its global
// index, so the check regenerates every row without copies.
#pragma once

#include "matvec_kernels.hpp"

#include "karma/ragged.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace karma::matvec {

// The row generators run in kernels and in the host reference; nvcc would
// warn when they call the reference's host lambda.
#if defined(__CUDACC__)
#define KARMA_MATVEC_HOST_DEVICE_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define KARMA_MATVEC_HOST_DEVICE_TEMPLATE
#endif

// Entry present with probability `density`, independently: the gaps between
// present columns are geometric, so a row costs O(its entries), not O(n).
// Columns ascend; values are the dense matrix's entries at those positions.
struct RandomPattern {
  std::uint64_t seed = 0;
  std::int64_t n = 0;
  double density = 0;
  double log_miss = 0;  // log(1 - density), from the host (log1p)

  static RandomPattern make(std::uint64_t seed, std::int64_t n, double density) {
    RandomPattern p;
    p.seed = seed;
    p.n = n;
    p.density = density;
    p.log_miss = density < 1 ? std::log1p(-density) : 0;
    return p;
  }

  // Calls emit(column, value) for each entry of global row g; returns the count.
  KARMA_MATVEC_HOST_DEVICE_TEMPLATE
  template <class Emit>
  KOKKOS_INLINE_FUNCTION std::int64_t row(const std::int64_t g, Emit&& emit) const {
    if (!(density > 0)) return 0;
    if (density >= 1) {
      for (std::int64_t j = 0; j < n; ++j) emit(j, matrix_entry(seed, g, j));
      return n;
    }
    const std::uint64_t stream =
        splitmix64(seed ^ 0xA5A5A5A5A5A5A5A5ull ^ static_cast<std::uint64_t>(g));
    std::int64_t j = -1, count = 0;
    for (std::uint64_t t = 0;; ++t) {
      const std::uint64_t h = splitmix64(stream + t);
      const double u = (static_cast<double>(h >> 11) + 1.0) * (1.0 / 9007199254740992.0);  // (0, 1]
      const double skipped = math::log(u) / log_miss;                                      // >= 0
      if (skipped >= static_cast<double>(n - 1 - j)) break;
      j += 1 + static_cast<std::int64_t>(skipped);
      emit(j, matrix_entry(seed, g, j));
      ++count;
    }
    return count;
  }
};

// The 5-point (2D) or 7-point (3D) Laplacian with Dirichlet boundaries on an
// nx x ny (x nz) grid, point (x, y, z) numbered x + nx (y + ny z).
struct LaplacianPattern {
  int dimensions = 3;
  std::int64_t nx = 1, ny = 1, nz = 1;

  KARMA_MATVEC_HOST_DEVICE_TEMPLATE
  template <class Emit>
  KOKKOS_INLINE_FUNCTION std::int64_t row(const std::int64_t g, Emit&& emit) const {
    const std::int64_t plane = nx * ny;
    const std::int64_t x = g % nx, y = (g / nx) % ny, z = g / plane;
    std::int64_t count = 0;
    // Ascending columns: below, behind, left, the point, right, in front, above.
    const bool has[7] = {dimensions == 3 && z > 0,     y > 0, x > 0, true, x + 1 < nx, y + 1 < ny,
                         dimensions == 3 && z + 1 < nz};
    const std::int64_t offset[7] = {-plane, -nx, -1, 0, 1, nx, plane};
    for (int k = 0; k < 7; ++k) {
      if (!has[k]) continue;
      emit(g + offset[k], k == 3 ? (dimensions == 3 ? 6.0 : 4.0) : -1.0);
      ++count;
    }
    return count;
  }
};

template <class T, class Index, class Memory = Kokkos::DefaultExecutionSpace::memory_space>
struct Csr {
  RaggedRight<Index, Memory> columns;
  RaggedRight<T, Memory> values;  // the same offsets as columns
  std::int64_t num_cols = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t num_rows() const { return columns.num_rows(); }
};

// Row sizes of rows [row0, row0 + rows) of the pattern (a kernel).
template <class Pattern, class Memory = Kokkos::DefaultExecutionSpace::memory_space>
Kokkos::View<std::int64_t*, Memory> csr_row_sizes(const Pattern& pattern, std::int64_t row0,
                                                  std::int64_t rows) {
  using Exec = typename Memory::execution_space;
  Kokkos::View<std::int64_t*, Memory> sizes(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::csr::row_sizes"), rows);
  Kokkos::parallel_for(
      "matvec::csr::count", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        sizes(i) = pattern.row(row0 + i, [](std::int64_t, double) {});
      });
  return sizes;
}

// The matrix from its row sizes (csr_row_sizes): a second pass writes each
// row's columns and values.
template <class T, class Index, class Pattern,
          class Memory = Kokkos::DefaultExecutionSpace::memory_space>
Csr<T, Index, Memory> build_csr(const Pattern& pattern, std::int64_t row0, std::int64_t num_cols,
                                const Kokkos::View<std::int64_t*, Memory>& sizes) {
  using Exec = typename Memory::execution_space;
  Csr<T, Index, Memory> a;
  a.num_cols = num_cols;
  a.columns = RaggedRight<Index, Memory>::from_sizes("matvec::csr::columns", sizes, false);
  const Kokkos::View<T*, Memory> values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::csr::values"),
      a.columns.num_entries());
  a.values = RaggedRight<T, Memory>(a.columns.offsets(), values);
  const auto columns = a.columns;
  const auto vals = a.values;
  Kokkos::parallel_for(
      "matvec::csr::fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, columns.num_rows()),
      KOKKOS_LAMBDA(const std::int64_t i) {
        std::int64_t k = 0;
        pattern.row(row0 + i, [&](std::int64_t j, double v) {
          columns(i, k) = static_cast<Index>(j);
          vals(i, k) = static_cast<T>(v);
          ++k;
        });
      });
  return a;
}

template <class Matrix, class Vector, class Result>
struct CsrRowPerThread {
  Matrix a;
  Vector x;
  Result y;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    using T = value_t<Result>;
    const std::int64_t begin = a.columns.begin(i), end = a.columns.end(i);
    const auto& cols = a.columns.values();
    const auto& vals = a.values.values();
    T s0 = 0, s1 = 0;
    std::int64_t e = begin;
    for (; e + 1 < end; e += 2) {
      s0 += vals(e) * x(cols(e));
      s1 += vals(e + 1) * x(cols(e + 1));
    }
    if (e < end) s0 += vals(e) * x(cols(e));
    y(i) = s0 + s1;
  }
};

// A team thread per row, its vector lanes over the row's entries: on a GPU
// adjacent lanes read adjacent entries (coalesced), as many lanes as a row
// has entries on average.
template <class Matrix, class Vector, class Result>
struct CsrTeamPerRow {
  using Exec = typename Result::execution_space;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Matrix a;
  Vector x;
  Result y;
  int rows_per_team = 1;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    using T = value_t<Result>;
    const std::int64_t rows = a.num_rows();
    const std::int64_t first = static_cast<std::int64_t>(member.league_rank()) * rows_per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, rows_per_team), [&](const int r) {
      const std::int64_t i = first + r;
      if (i >= rows) return;
      const std::int64_t begin = a.columns.begin(i);
      const auto& cols = a.columns.values();
      const auto& vals = a.values.values();
      T sum = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(member, a.columns.row_size(i)),
          [&](const std::int64_t k, T& partial) {
            partial += vals(begin + k) * x(cols(begin + k));
          },
          sum);
      Kokkos::single(Kokkos::PerThread(member), [&]() { y(i) = sum; });
    });
  }
};

// Lanes per row: a power of two near the mean row length (at most a warp) on
// a GPU, 1 on a CPU; 128 threads a team.
template <class Exec>
TeamShape choose_csr_team_shape(double mean_row_length, int team_size = 0, int vector_length = 0) {
  TeamShape s;
  if (is_gpu_space<Exec>()) {
    int v = 1;
    while (v < 32 && v < mean_row_length) v *= 2;
    s.vector_length = v;
    s.team_size = 128 / v;
  }
  if (team_size > 0) s.team_size = team_size;
  if (vector_length > 0) s.vector_length = vector_length;
  return s;
}

template <class Matrix, class Vector, class Result>
void multiply_csr(Variant variant, const Matrix& a, const Vector& x, const Result& y,
                  const TeamShape& team) {
  using Exec = typename Result::execution_space;
  const std::int64_t rows = a.num_rows();
  if (rows == 0) return;
  if (variant == Variant::team_per_row) {
    const std::int64_t league = (rows + team.team_size - 1) / team.team_size;
    Kokkos::parallel_for(
        "matvec::csr-team-per-row",
        Kokkos::TeamPolicy<Exec>(static_cast<int>(league), team.team_size, team.vector_length),
        CsrTeamPerRow<Matrix, Vector, Result>{a, x, y, team.team_size});
  } else {
    Kokkos::parallel_for("matvec::csr-row-per-thread",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
                         CsrRowPerThread<Matrix, Vector, Result>{a, x, y});
  }
}

// Rows row0 .. row0 + rows - 1 of y = A x from the pattern's generator (the
// definition of A, not the stored arrays) and x(j) = vector_entry(seed, j):
// a thread a row, compensated sums (dense_exact's arithmetic: the products,
// a pattern's 24-bit values or the Laplacian's small integers times a 24-bit
// x, are exact in double).
template <class Pattern, class Exec = Kokkos::DefaultExecutionSpace>
ExactEntries<typename Exec::memory_space> csr_exact(const Pattern& pattern, std::uint64_t seed,
                                                    std::int64_t row0, std::int64_t rows) {
  auto e = allocate_exact<typename Exec::memory_space>(0, rows);
  const auto value = e.value;
  const auto scale = e.scale;
  Kokkos::parallel_for(
      "matvec::verify::csr_exact",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        CompensatedSum sum;
        pattern.row(row0 + i,
                    [&](std::int64_t j, double v) { sum.add(v * vector_entry(seed, j)); });
        value(i) = sum.value();
        scale(i) = sum.size;
      });
  return e;
}

// Adds global row g of the pattern to the long-double reference (the unit
// tests' oracle).
template <class Pattern>
void add_csr_reference_row(Reference& ref, std::int64_t local_row, std::int64_t g,
                           const Pattern& pattern, std::uint64_t seed) {
  long double exact = 0, scale = 0;
  pattern.row(g, [&](std::int64_t j, double v) {
    const long double p = static_cast<long double>(v) * vector_entry(seed, j);
    exact += p;
    scale += std::fabs(p);
  });
  ref.rows.push_back(local_row);
  ref.exact.push_back(exact);
  ref.scale.push_back(scale);
}

}  // namespace karma::matvec
