// The dense kernels that give a row to a thread or a team
// (matvec_kernels.hpp): row-per-thread, team-per-row and its packed form.
#pragma once

#include "matvec_basics.hpp"

#include "karma/packed.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::matvec {

// ---------------------------------------------------------------------------
// Kernels.

// sum_{t < n} a[t] x[t] with U partial sums: the host's contiguous dot.
template <int U, class T>
KARMA_MATVEC_HOST_CLONES KOKKOS_INLINE_FUNCTION T contiguous_dot(const std::int64_t n,
                                                                 const T* KOKKOS_RESTRICT a,
                                                                 const T* KOKKOS_RESTRICT x) {
  T s[U];
  for (int u = 0; u < U; ++u) s[u] = T(0);
  std::int64_t t = 0;
  for (; t + U <= n; t += U)
    for (int u = 0; u < U; ++u) s[u] += a[t + u] * x[t + u];
  for (; t < n; ++t) s[0] += a[t] * x[t];
  for (int w = U / 2; w > 0; w /= 2)
    for (int u = 0; u < w; ++u) s[u] += s[u + w];
  return s[0];
}

// sum_{t < count} B(i, j0 + t * stride) * x(j0 + t * stride) with U partial sums.
template <int U, class Matrix, class Vector>
KOKKOS_INLINE_FUNCTION value_t<Matrix> strided_dot(const Matrix& b, const Vector& x,
                                                   const std::int64_t i, const std::int64_t j0,
                                                   const std::int64_t stride,
                                                   const std::int64_t count) {
  using T = value_t<Matrix>;
  if constexpr (!is_gpu_space<typename Matrix::execution_space>() && !is_left<Matrix>()) {
    if (stride == 1 && count > 0) return contiguous_dot<U>(count, &b(i, j0), &x(j0));
  }
  T s[U];
  for (int u = 0; u < U; ++u) s[u] = T(0);
  std::int64_t t = 0;
  for (; t + U <= count; t += U) {
    for (int u = 0; u < U; ++u) {
      const std::int64_t j = j0 + (t + u) * stride;
      s[u] += b(i, j) * x(j);
    }
  }
  for (; t < count; ++t) {
    const std::int64_t j = j0 + t * stride;
    s[0] += b(i, j) * x(j);
  }
  for (int w = U / 2; w > 0; w /= 2)
    for (int u = 0; u < w; ++u) s[u] += s[u + w];
  return s[0];
}

// The paper's naive kernel: one thread per row of B, walking the row.
template <class Matrix, class Vector, class Result>
struct RowPerThread {
  Matrix b;
  Vector x;
  Result y;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    constexpr int U = partial_sums<typename Matrix::execution_space>();
    y(i) = strided_dot<U>(b, x, i, 0, 1, static_cast<std::int64_t>(b.extent(1)));
  }
};

// R sums carried through one vector reduction (+= and a zero default are
// all Kokkos needs of a reduction value).
template <class T, int R>
struct RowSums {
  T s[R];
  KOKKOS_INLINE_FUNCTION RowSums() {
    for (int r = 0; r < R; ++r) s[r] = T(0);
  }
  KOKKOS_INLINE_FUNCTION RowSums& operator+=(const RowSums& o) {
    for (int r = 0; r < R; ++r) s[r] += o.s[r];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile RowSums& o) volatile {
    for (int r = 0; r < R; ++r) s[r] += o.s[r];
  }
};

// Columns a set when `lanes` lanes read `count` columns in U sets: with more
// lanes than ceil(count / U) the sets widen to the lanes (the last ones partly
// empty) instead of leaving lanes idle.
KOKKOS_INLINE_FUNCTION std::int64_t column_set_width(const std::int64_t count, const int u,
                                                     const std::int64_t lanes) {
  const std::int64_t sets = (count + u - 1) / u;
  const std::int64_t wide = lanes < count ? lanes : count;
  return sets > wide ? sets : wide;
}

// y(i0 + r) = sums.s[r] for the R rows of a team thread that exist, once.
template <class Member, class Result, class T, int R>
KOKKOS_INLINE_FUNCTION void store_rows(const Member& member, const Result& y,
                                       const RowSums<T, R>& sums, const std::int64_t i0,
                                       const std::int64_t rows) {
  Kokkos::single(Kokkos::PerThread(member), [&]() {
    for (int r = 0; r < R; ++r)
      if (i0 + r < rows) y(i0 + r) = sums.s[r];
  });
}

// A team per team_size x R rows: each team thread takes R adjacent rows and
// its vector lanes reduce over the columns. On a GPU the lanes are a warp's
// threadIdx.x and read U interleaved column sets (j = t + u * nq), so 32 lanes
// read 32 adjacent columns of a LayoutRight row: coalesced; R > 1 rows share
// each load of x. Each set's bounds check compiles to its own branch, so a
// lane has R loads of B in flight, not R x U (results/campaigns/h100). On a
// CPU the vector length is 1 and a lane takes contiguous chunks of a row.
template <class Matrix, class Vector, class Result, int R = 1>
struct TeamPerRow {
  using Exec = typename Matrix::execution_space;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr int U = partial_sums<Exec>();
  Matrix b;
  Vector x;
  Result y;
  int team_size = 1;
  int lanes = 1;  // the policy's vector length

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    using T = value_t<Matrix>;
    const std::int64_t rows = static_cast<std::int64_t>(b.extent(0));
    const std::int64_t cols = static_cast<std::int64_t>(b.extent(1));
    const std::int64_t first = static_cast<std::int64_t>(member.league_rank()) * team_size * R;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, team_size), [&](const int g) {
      const std::int64_t i0 = first + static_cast<std::int64_t>(g) * R;
      if (i0 >= rows) return;
      if constexpr (is_gpu_space<Exec>()) {
        // Rows past the end repeat the last row (no branch in the loop) and
        // are not stored.
        std::int64_t row[R];
        for (int r = 0; r < R; ++r) row[r] = i0 + r < rows ? i0 + r : rows - 1;
        const std::int64_t nq = column_set_width(cols, U, lanes);
        RowSums<T, R> sums;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(member, nq),
            [&](const std::int64_t t, RowSums<T, R>& partial) {
              for (int u = 0; u < U; ++u) {
                const std::int64_t j = t + u * nq;
                if (j < cols) {
                  const T xj = x(j);
                  for (int r = 0; r < R; ++r) partial.s[r] += b(row[r], j) * xj;
                }
              }
            },
            sums);
        store_rows(member, y, sums, i0, rows);
      } else {
        // A lane takes a contiguous chunk, summed with independent partial sums.
        constexpr std::int64_t chunk = 512;
        for (int r = 0; r < R && i0 + r < rows; ++r) {
          const std::int64_t i = i0 + r;
          T sum = T(0);
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(member, (cols + chunk - 1) / chunk),
              [&](const std::int64_t t, T& partial) {
                const std::int64_t j0 = t * chunk;
                partial += strided_dot<U>(b, x, i, j0, 1, cols - j0 < chunk ? cols - j0 : chunk);
              },
              sum);
          Kokkos::single(Kokkos::PerThread(member), [&]() { y(i) = sum; });
        }
      }
    });
  }
};

// The packed column sweep's loads in flight a thread.
inline constexpr int packed_column_units = 8;

// sum_{t < count} B(i, j0 + t) x(j0 + t) for the Packed unit of rows i0,
// i0 + 1, ... of a B with contiguous columns (columns_load_packed), U units
// of B (U columns) loaded before their products.
template <int U, class Matrix, class Vector>
KOKKOS_INLINE_FUNCTION Packed<value_t<Matrix>> packed_column_sums(const Matrix& b, const Vector& x,
                                                                  const std::int64_t i0,
                                                                  const std::int64_t j0,
                                                                  const std::int64_t count) {
  using T = value_t<Matrix>;
  using P = Packed<T>;
  const std::int64_t step = static_cast<std::int64_t>(b.stride(1)) / P::width;
  const P* a = reinterpret_cast<const P*>(&b(i0, j0));
  P s;
  for (int k = 0; k < P::width; ++k) s.v[k] = T(0);
  std::int64_t t = 0;
  for (; t + U <= count; t += U) {
    P bs[U];
    T xs[U];
    for (int u = 0; u < U; ++u) bs[u] = a[(t + u) * step];
    for (int u = 0; u < U; ++u) xs[u] = x(j0 + t + u);
    for (int u = 0; u < U; ++u)
      for (int k = 0; k < P::width; ++k) s.v[k] += bs[u].v[k] * xs[u];
  }
  for (; t < count; ++t) {
    const P bv = a[t * step];
    const T xv = x(j0 + t);
    for (int k = 0; k < P::width; ++k) s.v[k] += bv.v[k] * xv;
  }
  return s;
}

// Whether B's layout lets team-per-row read rows in Packed units on this
// backend: contiguous rows on CUDA (the only GPU backend it was measured on).
template <class Matrix>
constexpr bool packed_rows_layout() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<typename Matrix::execution_space, Kokkos::Cuda>::value &&
         std::is_same<typename Matrix::array_layout, Kokkos::LayoutRight>::value;
#else
  return false;
#endif
}

// The row length allows Packed units (the layout too; data not looked at).
template <class Matrix>
bool packed_row_length(const Matrix& b) {
  constexpr std::int64_t w = Packed<value_t<Matrix>>::width;
  const auto cols = static_cast<std::int64_t>(b.extent(1));
  return packed_rows_layout<Matrix>() && cols > 0 && cols % w == 0;
}

// Whether team-per-row reads these B and x in Packed units: the row length
// above, and every row and x starting on 16 bytes.
template <class Matrix, class Vector>
bool rows_load_packed(const Matrix& b, const Vector& x) {
  constexpr std::int64_t w = Packed<value_t<Matrix>>::width;
  return packed_row_length(b) && static_cast<std::int64_t>(b.stride(0)) % w == 0 &&
         x.span_is_contiguous() && packed_aligned(b.data()) && packed_aligned(x.data());
}

// TeamPerRow where rows_load_packed: the same teams and lanes over Packed
// units of the rows, and each step issues all R x U loads before the first
// product (one bounds check a step), so a lane has R x U x 16 bytes in
// flight; elementwise, each set's check kept that to R loads. A step's units
// are one contiguous chunk of U x lanes a row (lane l of L reads units
// k L U + u L + l at step k), not U column sets far apart: a warp then reads
// each row in one run, and the memory serves fewer, longer runs at once
// (results/matvec/README.md, "A warp's chunk").
template <class Matrix, class Vector, class Result, int R = 1,
          int U = partial_sums<typename Matrix::execution_space>()>
struct TeamPerRowPacked {
  using Exec = typename Matrix::execution_space;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using T = value_t<Matrix>;
  using P = Packed<T>;
  Matrix b;
  Vector x;
  Result y;
  int team_size = 1;
  int lanes = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const std::int64_t rows = static_cast<std::int64_t>(b.extent(0));
    const std::int64_t units = static_cast<std::int64_t>(b.extent(1)) / P::width;
    const std::int64_t first = static_cast<std::int64_t>(member.league_rank()) * team_size * R;
    const P* xp = reinterpret_cast<const P*>(x.data());
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, team_size), [&](const int g) {
      const std::int64_t i0 = first + static_cast<std::int64_t>(g) * R;
      if (i0 >= rows) return;
      const P* row[R];  // rows past the end repeat the last row, not stored
      for (int r = 0; r < R; ++r)
        row[r] = reinterpret_cast<const P*>(&b(i0 + r < rows ? i0 + r : rows - 1, 0));
      const std::int64_t chunk = static_cast<std::int64_t>(U) * lanes;
      RowSums<T, R> sums;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(member, lanes),
          [&](const int lane, RowSums<T, R>& partial) {
            std::int64_t j0 = lane;  // the lane's first unit of a step
            for (; j0 + (U - 1) * lanes < units; j0 += chunk) {
              P xs[U];
              P bs[R][U];
              for (int u = 0; u < U; ++u) xs[u] = xp[j0 + u * lanes];
              for (int r = 0; r < R; ++r)
                for (int u = 0; u < U; ++u) bs[r][u] = row[r][j0 + u * lanes];
              for (int u = 0; u < U; ++u)
                for (int r = 0; r < R; ++r) partial.s[r] += packed_dot(bs[r][u], xs[u]);
            }
            for (int u = 0; u < U; ++u) {
              const std::int64_t j = j0 + u * lanes;
              if (j < units)
                for (int r = 0; r < R; ++r) partial.s[r] += packed_dot(row[r][j], xp[j]);
            }
          },
          sums);
      store_rows(member, y, sums, i0, rows);
    });
  }
};

}  // namespace karma::matvec
