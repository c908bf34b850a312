// Dense y = B x over a karma array B of either layout: the kernels, the
// seeded data, the check of every entry of y against a reference computed
// on the device from the seeded data's closed form, and a host reference in
// long double (the unit tests' oracle for that check).
//
// B is the operator the kernels see. For y = A x it is A; for y = A^T x it is
// the same storage read with the other layout and swapped extents (A
// LayoutLeft M x N is exactly A^T LayoutRight N x M), so transposition needs
// no kernel of its own: the layout of B decides everything.
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

// a[i] += a0[i] x0 + a1[i] x1 + a2[i] x2 + a3[i] x3: four contiguous column
// segments into one accumulator segment (restrict lets the compiler vectorize).
template <class T>
KARMA_MATVEC_HOST_CLONES KOKKOS_INLINE_FUNCTION void add_four_columns(
    const std::int64_t n, T* KOKKOS_RESTRICT acc, const T* KOKKOS_RESTRICT a0,
    const T* KOKKOS_RESTRICT a1, const T* KOKKOS_RESTRICT a2, const T* KOKKOS_RESTRICT a3,
    const T x0, const T x1, const T x2, const T x3) {
  for (std::int64_t i = 0; i < n; ++i) acc[i] += a0[i] * x0 + a1[i] * x1 + a2[i] * x2 + a3[i] * x3;
}

template <class T>
KOKKOS_INLINE_FUNCTION void add_one_column(const std::int64_t n, T* KOKKOS_RESTRICT acc,
                                           const T* KOKKOS_RESTRICT a0, const T x0) {
  for (std::int64_t i = 0; i < n; ++i) acc[i] += a0[i] * x0;
}

// out[r] = sum_t a_r[t] x[t] for four contiguous rows. An OpenMP simd
// reduction lets the compiler keep a vector of partial sums per row (gcc
// would not reassociate otherwise; written with arrays of partial sums it
// shuffled and spilled, at half the speed).
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define KARMA_MATVEC_SIMD_SUMS _Pragma("omp simd reduction(+ : s0, s1, s2, s3)")
#else
#define KARMA_MATVEC_SIMD_SUMS
#endif
template <class T>
KARMA_MATVEC_HOST_CLONES KOKKOS_INLINE_FUNCTION void dot_four_rows(
    const std::int64_t n, const T* KOKKOS_RESTRICT a0, const T* KOKKOS_RESTRICT a1,
    const T* KOKKOS_RESTRICT a2, const T* KOKKOS_RESTRICT a3, const T* KOKKOS_RESTRICT x, T* out) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  KARMA_MATVEC_SIMD_SUMS
  for (std::int64_t t = 0; t < n; ++t) {
    const T xv = x[t];
    s0 += a0[t] * xv;
    s1 += a1[t] * xv;
    s2 += a2[t] * xv;
    s3 += a3[t] * xv;
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// How the mdrange variant splits B: a 2D index space of (row block, column
// block) items. Each item sums its block of rows over its set of columns into
// P(i, c), or straight into y when there is one column block; a second pass
// adds the column blocks' partial sums (split-K). The second dimension is what
// a plain RangePolicy over rows lacks: parallelism when B has few rows (wide
// matrices, and a square one on a GPU that holds 270k threads).
struct Tiling {
  std::int64_t rows_per_item = 1;
  std::int64_t column_blocks = 1;
  bool interleaved = false;           // columns c, c + C, ... (GPU) or one contiguous range (CPU)
  std::int64_t tile0 = 1, tile1 = 1;  // MDRange tile: threads per block on a GPU
  bool packed = false;  // an item's rows_per_item rows read as one Packed unit of each column
  int team_warps = 0;   // > 0: packed, in one pass (PackedColumnTeams); column_blocks is then 1
};

// A column-major GEMV on a CPU streams down the columns: a work item sweeps
// a block of rows across a range of columns, four columns at a time, with
// the block's partial sums in L1. Blocks of 2048 rows (16 KiB of doubles),
// not fewer: each column's run of contiguous reads is a block long, and the
// hardware prefetchers need long runs (results/matvec/README.md). When the
// rows give fewer blocks than threads, the rest of the threads take column
// blocks (split-K), as many as make one item a thread: Kokkos' OpenMP back
// end hands out items statically, so more items a thread balance nothing.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline std::int64_t host_left_row_blocks(std::int64_t rows, std::int64_t cols,
                                         std::int64_t threads) {
  constexpr std::int64_t most_rows = 2048;
  std::int64_t blocks = ceil_div(rows, most_rows);
  if (blocks >= threads) return ceil_div(blocks, threads) * threads;
  while (threads % blocks != 0) ++blocks;  // a divisor of the thread count
  const std::int64_t column_blocks =
      std::min(threads / blocks, std::max<std::int64_t>(1, cols / 64));
  // Too few columns to split that far: more, shorter row blocks instead.
  if (blocks * column_blocks < threads)
    blocks = std::min(ceil_div(threads, column_blocks), std::max<std::int64_t>(1, rows / 64));
  return blocks;
}

// Whether the mdrange variant can read B's columns in Packed units on this
// backend: contiguous columns on CUDA (the only GPU backend it was measured on).
template <class Matrix>
constexpr bool packed_columns_layout() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<typename Matrix::execution_space, Kokkos::Cuda>::value && is_left<Matrix>();
#else
  return false;
#endif
}

// The layout, and B's rows a whole number of units (extents only).
template <class Matrix>
bool packed_column_length(const Matrix& b) {
  constexpr std::int64_t w = Packed<value_t<Matrix>>::width;
  const auto rows = static_cast<std::int64_t>(b.extent(0));
  return packed_columns_layout<Matrix>() && rows > 0 && rows % w == 0;
}

// The length above, every column starting on 16 bytes, and a Packed unit an
// item (`tiling` from choose_tiling, or a test's own).
template <class Matrix>
bool columns_load_packed(const Matrix& b, const Tiling& tiling) {
  constexpr std::int64_t w = Packed<value_t<Matrix>>::width;
  return tiling.packed && tiling.rows_per_item == w && packed_column_length(b) &&
         static_cast<std::int64_t>(b.stride(1)) % w == 0 && packed_aligned(b.data());
}

// The packed column sweep's blocks: 128 threads, at least `packed_column_blocks_per_sm`
// of them a multiprocessor (at most 64 registers a thread).
inline constexpr unsigned packed_column_threads = 128;
inline constexpr unsigned packed_column_blocks_per_sm = 8;

// Column blocks for the packed sweep: `tiles` blocks of rows, `slots` blocks
// at once. The fewest whose grid fills its last round to 90%: every block
// past the first adds a pass over its partial sums, a bandwidth-bound grid
// loses nothing to a round 90% full but much to one barely begun (30000 x
// 9000 on an H100: 17 blocks, 1.9 rounds, ran 2% faster than 71, 7.9
// rounds). None that fills so: the fullest. At most 8 rounds' worth and 64
// columns a thread.
inline std::int64_t packed_column_blocks(std::int64_t tiles, std::int64_t cols,
                                         std::int64_t slots) {
  const std::int64_t most =
      std::max<std::int64_t>(1, std::min(cols / 64, ceil_div(8 * slots, tiles)));
  std::int64_t best = 1;
  double best_fill = 0;
  for (std::int64_t c = 1; c <= most; ++c) {
    const std::int64_t blocks = tiles * c;
    const double fill =
        static_cast<double>(blocks) / static_cast<double>(ceil_div(blocks, slots) * slots);
    if (fill >= 0.9) return c;
    if (fill > best_fill) {
      best = c;
      best_fill = fill;
    }
  }
  return best;
}

// The packed sweep in one pass (PackedColumnTeams): a team is `warps` warps
// over one warp's 32 units of rows, each warp a contiguous range of the
// columns. Doubles keep 16 units of B in flight a thread in up to 128
// registers, so at most 16 warps fit a multiprocessor; floats keep 8 in 64
// registers, 32 warps (results/matvec/README.md, "Sixteen columns in flight").
inline constexpr int packed_team_units = 32;

template <class T>
struct PackedTeamShape {
  static constexpr int units_in_flight = sizeof(T) == 8 ? 16 : packed_column_units;
  static constexpr int most_warps = sizeof(T) == 8 ? 16 : 32;
};

// The share of a multiprocessor's `most_warps` warp slots that `teams`
// teams of `warps` fill in their last round on `sms` multiprocessors.
inline double packed_team_fill(std::int64_t teams, int warps, std::int64_t sms, int most_warps) {
  const std::int64_t at_once = sms * (most_warps / warps);
  const std::int64_t rounds = ceil_div(teams, at_once);
  return static_cast<double>(teams * warps) / static_cast<double>(rounds * sms * most_warps);
}

// Warps a team for the one-pass sweep: those whose teams fill their last
// round fullest (of equals the fewest), at least 64 columns a warp, if that
// fill reaches 90% (packed_column_blocks' bar for its grid); else 0 (few
// rows: the two-pass sweep, whose column blocks fill a device with any).
inline int packed_team_warps(std::int64_t units, std::int64_t cols, std::int64_t sms,
                             int most_warps) {
  if (sms <= 0) return 0;
  const std::int64_t teams = ceil_div(units, packed_team_units);
  const auto most =
      static_cast<int>(std::min<std::int64_t>(most_warps, std::max<std::int64_t>(1, cols / 64)));
  int best = 0;
  double best_fill = 0;
  for (int w = 1; w <= most; ++w) {
    // equal fills divide to equal doubles
    const double fill = packed_team_fill(teams, w, sms, most_warps);
    if (fill > best_fill) {
      best = w;
      best_fill = fill;
    }
  }
  return best_fill >= 0.9 ? best : 0;
}

// Heuristics from the device's concurrency; `column_blocks` > 0 and, on a
// CPU, `block_rows` > 0 override them.
template <class Matrix>
Tiling choose_tiling(const Matrix& b, std::int64_t column_blocks = 0, std::int64_t block_rows = 0) {
  using Exec = typename Matrix::execution_space;
  const std::int64_t rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(b.extent(0)));
  const std::int64_t cols = std::max<std::int64_t>(1, static_cast<std::int64_t>(b.extent(1)));
  const std::int64_t concurrency = Exec().concurrency();
  Tiling t;
  if (packed_column_length(b)) {
    // CUDA, B's columns contiguous: a thread sums one Packed unit of rows
    // (two doubles or four floats) over a contiguous range of columns, a
    // warp reading 512 contiguous bytes of a column a load, a block 128
    // units; as few column blocks as fill the device's last round.
    constexpr std::int64_t w = Packed<value_t<Matrix>>::width;
    constexpr std::int64_t threads = packed_column_threads;
    const std::int64_t tiles = ceil_div(rows / w, threads);
    t.tile0 = std::min(threads, rows / w);
    t.tile1 = 1;
    // Fewer units than a block: smaller blocks, as many more of them at once
    // as their threads allow, up to a multiprocessor's 32 blocks.
    const std::int64_t per_sm =
        std::min<std::int64_t>(32, packed_column_blocks_per_sm * threads / t.tile0);
    const auto slots = static_cast<std::int64_t>(karma::device_multiprocessors()) * per_sm;
    t.rows_per_item = w;
    t.packed = true;
    t.interleaved = false;
    t.column_blocks = column_blocks > 0
                          ? std::min(column_blocks, cols)
                          : packed_column_blocks(tiles, cols, std::max<std::int64_t>(1, slots));
    // Split columns summed inside a team instead, where rows are enough for
    // that to fill the device: no partial sums and no second pass.
    if (column_blocks == 0 && t.column_blocks > 1) {
      t.team_warps = packed_team_warps(rows / w, cols, karma::device_multiprocessors(),
                                       PackedTeamShape<value_t<Matrix>>::most_warps);
      if (t.team_warps > 0) t.column_blocks = 1;
    }
  } else if (is_gpu_space<Exec>()) {
    // One row per thread, and at most one wave of resident threads: a grid
    // slightly over a wave leaves its last blocks running alone. On an H200,
    // 16384^2 LayoutLeft: 16 blocks (one wave) 4249 GB/s, 17 (1.03 waves)
    // 3519, 33 (2.0) 4209. LayoutLeft: threadIdx.x runs over rows (adjacent
    // rows are adjacent in memory). LayoutRight: a warp covers 4 rows x 8
    // column sets, i.e. 64 contiguous bytes of each row, whole 32-byte sectors.
    t.rows_per_item = 1;
    t.interleaved = true;
    std::int64_t c = std::max<std::int64_t>(1, concurrency / rows);
    if (!is_left<Matrix>()) c = std::max<std::int64_t>(32, c / 32 * 32);
    c = std::min(c, std::max<std::int64_t>(1, cols / 16));  // 16 columns a thread at least
    t.column_blocks = column_blocks > 0 ? std::min(column_blocks, cols) : c;
    if (is_left<Matrix>()) {
      t.tile0 = std::min<std::int64_t>(128, rows);
      t.tile1 = 1;
    } else {
      t.tile1 = std::min<std::int64_t>(32, t.column_blocks);
      t.tile0 = std::max<std::int64_t>(1, 128 / t.tile1);
    }
  } else {
    // LayoutRight: rows are dot products; blocks of rows only for balance.
    // LayoutLeft: see host_left_row_blocks.
    const std::int64_t items_wanted = (is_left<Matrix>() ? 1 : 4) * concurrency;
    std::int64_t r;
    if (block_rows > 0)
      r = std::min(block_rows, rows);
    else if (is_left<Matrix>())
      r = ceil_div(rows, host_left_row_blocks(rows, cols, concurrency));
    else
      r = std::min<std::int64_t>(256, ceil_div(rows, items_wanted));
    t.rows_per_item = r;
    const std::int64_t row_blocks = ceil_div(rows, r);
    std::int64_t c = row_blocks >= items_wanted ? 1 : ceil_div(items_wanted, row_blocks);
    c = std::min(c, std::max<std::int64_t>(1, cols / 64));  // at least 64 columns a block
    t.column_blocks = column_blocks > 0 ? std::min(column_blocks, cols) : c;
    t.interleaved = false;
  }
  return t;
}

// Column block c of `blocks` contiguous ones over `cols` columns: its first
// column and how many it holds (0 past the end).
struct ColumnRange {
  std::int64_t first, count;
};
KOKKOS_INLINE_FUNCTION ColumnRange contiguous_columns(const std::int64_t cols,
                                                      const std::int64_t blocks,
                                                      const std::int64_t c) {
  const std::int64_t width = (cols + blocks - 1) / blocks;
  const std::int64_t first = c * width;
  return {first, first < cols ? (cols - first < width ? cols - first : width) : 0};
}

template <class Matrix, class Vector, class Result, class Partials>
struct MDRangeBlocks {
  Matrix b;
  Vector x;
  Result y;
  Partials p;  // rows x column_blocks, B's layout; unused with one column block
  Tiling tiling;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t block, const std::int64_t c) const {
    using Exec = typename Matrix::execution_space;
    using T = value_t<Matrix>;
    constexpr int U = partial_sums<Exec>();
    const std::int64_t rows = static_cast<std::int64_t>(b.extent(0));
    const std::int64_t cols = static_cast<std::int64_t>(b.extent(1));
    const std::int64_t nc = tiling.column_blocks;
    const std::int64_t i0 = block * tiling.rows_per_item;
    const std::int64_t i1 = i0 + tiling.rows_per_item < rows ? i0 + tiling.rows_per_item : rows;
    std::int64_t j0, stride, count;
    if (tiling.interleaved) {
      j0 = c;
      stride = nc;
      count = c < cols ? (cols - c + nc - 1) / nc : 0;
    } else {
      const ColumnRange range = contiguous_columns(cols, nc, c);
      j0 = range.first;
      stride = 1;
      count = range.count;
    }
    bool swept = false;
    if constexpr (is_left<Matrix>() && !is_gpu_space<Exec>()) {
      swept = stride == 1;
    }
    if (swept) {
      // Column sweep over contiguous column segments of the row block.
      T* acc = nc == 1 ? &y(i0) : &p(i0, c);
      const std::int64_t n = i1 - i0;
      for (std::int64_t i = 0; i < n; ++i) acc[i] = T(0);
      std::int64_t t = 0;
      for (; t + 4 <= count; t += 4) {
        const std::int64_t j = j0 + t;
        add_four_columns(n, acc, &b(i0, j), &b(i0, j + 1), &b(i0, j + 2), &b(i0, j + 3), x(j),
                         x(j + 1), x(j + 2), x(j + 3));
      }
      for (; t < count; ++t) add_one_column(n, acc, &b(i0, j0 + t), x(j0 + t));
    } else {
      std::int64_t i = i0;
      if constexpr (!is_gpu_space<Exec>() && !is_left<Matrix>()) {
        // Four rows at a time share each load of x, as a row-major GEMV does.
        for (; stride == 1 && count > 0 && i + 4 <= i1; i += 4) {
          T sums[4];
          dot_four_rows(count, &b(i, j0), &b(i + 1, j0), &b(i + 2, j0), &b(i + 3, j0), &x(j0),
                        sums);
          for (int r = 0; r < 4; ++r) {
            if (nc == 1)
              y(i + r) = sums[r];
            else
              p(i + r, c) = sums[r];
          }
        }
      }
      for (; i < i1; ++i) {
        const T sum = strided_dot<U>(b, x, i, j0, stride, count);
        if (nc == 1)
          y(i) = sum;
        else
          p(i, c) = sum;
      }
    }
  }
};

// The mdrange variant where columns_load_packed: item (unit, c) sums Packed
// unit `unit` of the rows over column block c, one contiguous range. Its own
// kernel, apart from MDRangeBlocks' element loads: those ran slower while
// the two shared one functor (results/matvec/README.md).
template <class Matrix, class Vector, class Result, class Partials>
struct PackedColumnBlocks {
  Matrix b;
  Vector x;
  Result y;
  Partials p;  // as MDRangeBlocks'
  std::int64_t column_blocks = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t unit, const std::int64_t c) const {
    using T = value_t<Matrix>;
    const ColumnRange range =
        contiguous_columns(static_cast<std::int64_t>(b.extent(1)), column_blocks, c);
    const std::int64_t i0 = unit * Packed<T>::width;
    const auto s = packed_column_sums<packed_column_units>(b, x, i0, range.first, range.count);
    for (int k = 0; k < Packed<T>::width; ++k) {
      if (column_blocks == 1)
        y(i0 + k) = s.v[k];
      else
        p(i0 + k, c) = s.v[k];
    }
  }
};

// The packed sweep in one pass (Tiling::team_warps > 0): team r takes units
// 32 r to 32 r + 31 of the rows, a unit a lane; its warp g sums them over
// the g-th of `warps` contiguous ranges of the columns; the warps' sums
// meet in scratch and the team writes y. No partial sums in memory and no
// second kernel (results/matvec/README.md, "One pass").
template <class Matrix, class Vector, class Result>
struct PackedColumnTeams {
  using Exec = typename Matrix::execution_space;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using T = value_t<Matrix>;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int rows_a_team = packed_team_units * Packed<T>::width;
  Matrix b;
  Vector x;
  Result y;
  int warps = 1;

  int team_size() const { return packed_team_units * warps; }
  std::size_t scratch_bytes() const { return Scratch::shmem_size(warps, rows_a_team); }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    constexpr int w = Packed<T>::width;
    const Scratch sums(member.team_scratch(0), warps, rows_a_team);
    const auto rows = static_cast<std::int64_t>(b.extent(0));
    const int lane = member.team_rank() % packed_team_units;
    const int warp = member.team_rank() / packed_team_units;
    const std::int64_t i0 = static_cast<std::int64_t>(member.league_rank()) * rows_a_team;
    Packed<T> s;
    for (int k = 0; k < w; ++k) s.v[k] = T(0);
    if (i0 + lane * w < rows) {
      const ColumnRange range =
          contiguous_columns(static_cast<std::int64_t>(b.extent(1)), warps, warp);
      s = packed_column_sums<PackedTeamShape<T>::units_in_flight>(b, x, i0 + lane * w, range.first,
                                                                  range.count);
    }
    for (int k = 0; k < w; ++k) sums(warp, lane * w + k) = s.v[k];
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, rows_a_team), [&](const int r) {
      if (i0 + r >= rows) return;
      T sum = sums(0, r);
      for (int g = 1; g < warps; ++g) sum += sums(g, r);
      y(i0 + r) = sum;
    });
  }
};

// The second pass: a team per row adds its column blocks' partial sums, so
// a matrix with few rows and many blocks (wide) still fills the device.
template <class Partials, class Result>
struct SumColumnBlocks {
  using Member = typename Kokkos::TeamPolicy<typename Result::execution_space>::member_type;
  Partials p;
  Result y;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const std::int64_t i = member.league_rank();
    value_t<Result> s = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, static_cast<std::int64_t>(p.extent(1))),
        [&](const std::int64_t c, value_t<Result>& partial) { partial += p(i, c); }, s);
    Kokkos::single(Kokkos::PerTeam(member), [&]() { y(i) = s; });
  }
};

// The second pass on a GPU where the partial sums are LayoutLeft: a team
// takes 32 rows, `groups` threads a row each adding every groups-th column block
// (a warp reads 32 adjacent rows of a column block), then a row's sums
// through the team's scratch. Groups: enough that a thread adds at most 16
// blocks, up to 32 (few rows of many blocks would leave the GPU idle).
template <class Partials, class Result>
struct SumColumnBlocksTiled {
  using Exec = typename Result::execution_space;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using T = value_t<Result>;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int rows_a_team = 32;
  Partials p;
  Result y;
  int groups = 1;
  // Few rows of many blocks (64 rows of thousands: two teams here) keep more
  // threads busy as SumColumnBlocks' team a row.
  static bool suits(std::int64_t rows, std::int64_t blocks) { return rows >= rows_a_team * blocks; }
  static int groups_for(std::int64_t blocks) {
    int g = 4;
    while (g < 32 && g * 16 < blocks) g *= 2;
    return g;
  }
  int team_size() const { return rows_a_team * groups; }
  std::size_t scratch_bytes() const { return Scratch::shmem_size(team_size()); }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int team_size = rows_a_team * groups;
    const Scratch sums(member.team_scratch(0), team_size);
    const auto rows = static_cast<std::int64_t>(y.extent(0));
    const auto nc = static_cast<std::int64_t>(p.extent(1));
    const std::int64_t i0 = static_cast<std::int64_t>(member.league_rank()) * rows_a_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, team_size), [&](const int t) {
      const std::int64_t i = i0 + t % rows_a_team;
      T s = 0;
      if (i < rows)
        for (std::int64_t c = t / rows_a_team; c < nc; c += groups) s += p(i, c);
      sums(t) = s;
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, rows_a_team), [&](const int l) {
      if (i0 + l >= rows) return;
      T s = sums(l);
      for (int g = 1; g < groups; ++g) s += sums(g * rows_a_team + l);
      y(i0 + l) = s;
    });
  }
};

// team-per-row's policy. On a GPU, at most 51 registers a thread (ten blocks
// of 128 threads per 2048): without the bound the R = 4 kernel took 64 and
// ran at half occupancy. H200, GB/s without / with: LayoutRight 2^22 x 64
// 3670 / 3990 (row-per-thread on LayoutLeft: 4368), 262144 x 1024 4330 /
// 4382, 16384^2 4343 / 4336; LayoutLeft 16384^2 1744 / 1973. Bounds of 9 or
// 11 blocks were slower, and so is R = 1 with this one (4031 / 2920). HIP
// reads the second number as waves per execution unit, which clang 19 could
// not meet for gfx942 (a warning): AMD GPUs get only the team size.
#if defined(KOKKOS_ENABLE_CUDA)
inline constexpr unsigned team_rows_min_blocks = 10;
#else
inline constexpr unsigned team_rows_min_blocks = 0;
#endif
template <class Matrix, class Exec = typename Matrix::execution_space>
using TeamRowsPolicy =
    std::conditional_t<is_gpu_space<Exec>(),
                       Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<128, team_rows_min_blocks>>,
                       Kokkos::TeamPolicy<Exec>>;

// TeamPerRowPacked's: at least four blocks of 128 threads a multiprocessor
// (at most 128 registers a thread, which ptxas then spends on the R x U units
// in flight) for R > 1; for R = 1, a warp a row, three (at most 168), as
// cuBLAS's GEMV runs, so that 16 units of doubles stay in flight a lane.
// Unbounded, R = 8 chose fewer blocks in double and fewer loads in flight in
// float, both slower (results/matvec/README.md).
inline constexpr unsigned packed_rows_blocks = 4;
inline constexpr unsigned packed_rows_blocks_r1 = 3;  // R = 1
// U at R = 1 in double (packed_rows_units).
inline constexpr int packed_rows_wide_units = 16;
template <class Matrix, unsigned Blocks>
using PackedRowsPolicy =
    Kokkos::TeamPolicy<typename Matrix::execution_space, Kokkos::LaunchBounds<128, Blocks>>;

// The teams of TeamPerRowPacked that run at once, `blocks` a multiprocessor.
// The rules below were measured on CUDA only; elsewhere 0 (no count).
inline std::int64_t packed_rows_slots(unsigned blocks) {
#if defined(KOKKOS_ENABLE_CUDA)
  return static_cast<std::int64_t>(karma::device_multiprocessors()) * blocks;
#else
  (void)blocks;
  return 0;
#endif
}

// Teams of `team_size` threads, R rows a thread, that `rows` take.
inline std::int64_t packed_rows_teams(std::int64_t rows, int team_size, int r) {
  const std::int64_t per_team = static_cast<std::int64_t>(team_size) * r;
  return (rows + per_team - 1) / per_team;
}

// R for TeamPerRowPacked (results/matvec/README.md, "A warp's chunk"): 1, a
// warp a row, where a row takes 32 lanes; for short rows (fewer lanes), whose
// teams finish in a step or two, 8, unless too few rows for R = 4 to fill 90%
// of the teams that run at once (`slots`, 0 where unknown): then the largest
// of 2 and 1 that does, else 1.
inline int packed_rows_per_thread(std::int64_t rows, int team_size, int vector_length,
                                  std::int64_t slots) {
  if (vector_length >= 32) return 1;
  const auto fills = [&](int r) { return 10 * packed_rows_teams(rows, team_size, r) >= 9 * slots; };
  if (!fills(4)) return fills(2) ? 2 : 1;
  return 8;
}

// U for TeamPerRowPacked (packed rows run on CUDA only, so its default is the
// GPU's partial sums): at R = 1, 16 units of 16 bytes in flight a lane in
// double; in float 8 where R = 1's teams fill a round of `slots` (16 was 5%
// slower at 30000 x 9000 on an H100), else 16.
inline int packed_rows_units(std::int64_t rows, int team_size, int rows_per_thread,
                             std::size_t value_bytes, std::int64_t slots) {
  if (rows_per_thread != 1) return gpu_partial_sums;
  const bool few = packed_rows_teams(rows, team_size, 1) < slots;
  return value_bytes >= 8 || few ? packed_rows_wide_units : packed_rows_wide_units / 2;
}

// Team shape for team-per-row: on a GPU 128 threads a team, vector lanes over
// the columns and R rows a team thread; on a CPU one thread and one lane per
// team, a row at a time. The deck's team_size / vector_length /
// rows_per_thread > 0 override.
struct TeamShape {
  int team_size = 1;
  int vector_length = 1;
  int rows_per_thread = 1;       // R: 1, 2, 4 or 8
  int units = gpu_partial_sums;  // U of TeamPerRowPacked (packed_rows_units)
};

template <class Matrix>
TeamShape choose_team_shape(const Matrix& b, int team_size = 0, int vector_length = 0,
                            int rows_per_thread = 0) {
  using Exec = typename Matrix::execution_space;
  TeamShape s;
  if (is_gpu_space<Exec>()) {
    // Lanes: enough for one step of U columns each, up to a warp. Rows: 4 a
    // team thread. Measured on an H200, LayoutRight: 16384^2 with R = 1, 2, 4
    // gave 4031, 3484 and 4346 GB/s (cuBLAS 4471); 2^22 x 64 with 4, 8, 16
    // lanes gave 1611, 3502 and 3608 GB/s. Teams: 128 threads for a warp a
    // row, 64 for fewer lanes (2^22 x 64, 16 lanes, with TeamRowsPolicy's
    // bound: 3911 GB/s in teams of 128, 3990 in teams of 64).
    const std::int64_t quads =
        (static_cast<std::int64_t>(b.extent(1)) + partial_sums<Exec>() - 1) / partial_sums<Exec>();
    int v = 1;
    while (v < 32 && v < quads) v *= 2;
    s.vector_length = v;
    s.team_size = std::max(1, (v < 32 ? 64 : 128) / v);
    s.rows_per_thread = 4;
    if (packed_row_length(b))
      s.rows_per_thread =
          packed_rows_per_thread(static_cast<std::int64_t>(b.extent(0)), s.team_size,
                                 s.vector_length, packed_rows_slots(packed_rows_blocks));
  }
  if (team_size > 0) s.team_size = team_size;
  if (vector_length > 0) s.vector_length = vector_length;
  if (rows_per_thread > 0) s.rows_per_thread = rows_per_thread;
  if (packed_row_length(b))
    s.units =
        packed_rows_units(static_cast<std::int64_t>(b.extent(0)), s.team_size, s.rows_per_thread,
                          sizeof(value_t<Matrix>), packed_rows_slots(packed_rows_blocks_r1));
  return s;
}

// The mdrange variant's scratch: allocate once, outside timed regions.
template <class Matrix>
using PartialsFor =
    Kokkos::View<value_t<Matrix>**, typename Matrix::array_layout, typename Matrix::memory_space>;

template <class Matrix>
PartialsFor<Matrix> allocate_partials(const Matrix& b, const Tiling& tiling) {
  const std::size_t c =
      tiling.column_blocks > 1 ? static_cast<std::size_t>(tiling.column_blocks) : 0;
  return PartialsFor<Matrix>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::partials"),
                             c ? b.extent(0) : 0, c);
}

struct Settings {
  TeamShape team;
  Tiling tiling;
};

template <template <class, class, class, int> class Kernel, int R, class Policy, class Matrix,
          class Vector, class Result>
void launch_rows_at(const char* label, const Policy& policy, const TeamShape& s, const Matrix& b,
                    const Vector& x, const Result& y) {
  Kokkos::parallel_for(label, policy,
                       Kernel<Matrix, Vector, Result, R>{b, x, y, s.team_size, s.vector_length});
}

// One team-per-row kernel at the shape's R. Fewest is the least R a caller
// passes: 2 where it launches R = 1 itself, so that kernel is not built here.
template <template <class, class, class, int> class Kernel, int Fewest = 1, class Policy,
          class Matrix, class Vector, class Result>
void launch_team_rows(const char* label, const Policy& policy, const TeamShape& s, const Matrix& b,
                      const Vector& x, const Result& y) {
  static_assert(Fewest == 1 || Fewest == 2, "R is 1, 2, 4 or 8");
  if (s.rows_per_thread == 8) return launch_rows_at<Kernel, 8>(label, policy, s, b, x, y);
  if (s.rows_per_thread == 4) return launch_rows_at<Kernel, 4>(label, policy, s, b, x, y);
  if (Fewest == 2 || s.rows_per_thread == 2)
    return launch_rows_at<Kernel, 2>(label, policy, s, b, x, y);
  if constexpr (Fewest == 1) launch_rows_at<Kernel, 1>(label, policy, s, b, x, y);
}

template <class Matrix, class Vector, class Result, int R>
using PackedRowsKernel = TeamPerRowPacked<Matrix, Vector, Result, R>;

// TeamPerRowPacked at the shape's R and U.
template <class Matrix, class Vector, class Result>
void launch_packed_rows(const TeamShape& s, int teams, const Matrix& b, const Vector& x,
                        const Result& y) {
  const char* label = "matvec::team-per-row-packed";
  constexpr int wide = packed_rows_wide_units;
  const PackedRowsPolicy<Matrix, packed_rows_blocks_r1> one(teams, s.team_size, s.vector_length);
  if (s.rows_per_thread == 1 && s.units == wide)
    Kokkos::parallel_for(
        label, one,
        TeamPerRowPacked<Matrix, Vector, Result, 1, wide>{b, x, y, s.team_size, s.vector_length});
  else if (s.rows_per_thread == 1)
    Kokkos::parallel_for(label, one,
                         TeamPerRowPacked<Matrix, Vector, Result, 1, wide / 2>{b, x, y, s.team_size,
                                                                               s.vector_length});
  else
    launch_team_rows<PackedRowsKernel, 2>(
        label, PackedRowsPolicy<Matrix, packed_rows_blocks>(teams, s.team_size, s.vector_length), s,
        b, x, y);
}

// Whether the second pass over these partial sums is SumColumnBlocksTiled
// (else SumColumnBlocks).
template <class Partials, class Result>
bool sums_tiled(std::int64_t rows, std::int64_t blocks) {
  return is_gpu_space<typename Result::execution_space>() && is_left<Partials>() &&
         SumColumnBlocksTiled<Partials, Result>::suits(rows, blocks);
}

// y(i) = sum_c P(i, c): the mdrange variant's second pass.
template <class Partials, class Result>
void sum_column_blocks(const Partials& p, const Result& y) {
  using Exec = typename Result::execution_space;
  const auto rows = static_cast<std::int64_t>(y.extent(0));
  const auto blocks = static_cast<std::int64_t>(p.extent(1));
  if constexpr (is_gpu_space<Exec>() && is_left<Partials>()) {
    using Sum = SumColumnBlocksTiled<Partials, Result>;
    if (sums_tiled<Partials, Result>(rows, blocks)) {
      const Sum sum{p, y, Sum::groups_for(blocks)};
      const auto teams = static_cast<int>(ceil_div(rows, Sum::rows_a_team));
      Kokkos::parallel_for("matvec::mdrange-sum",
                           Kokkos::TeamPolicy<Exec>(teams, sum.team_size())
                               .set_scratch_size(0, Kokkos::PerTeam(sum.scratch_bytes())),
                           sum);
      return;
    }
  }
  int threads = 1;  // a warp or more per row on a GPU, one thread on a CPU
  if (is_gpu_space<Exec>())
    while (threads < 128 && (threads < 32 || threads < blocks)) threads *= 2;
  Kokkos::parallel_for("matvec::mdrange-sum",
                       Kokkos::TeamPolicy<Exec>(static_cast<int>(rows), threads),
                       SumColumnBlocks<Partials, Result>{p, y});
}

// The packed column sweep under its launch bound; false where the layout has none.
template <class Matrix, class Vector, class Result, class Partials>
bool launch_packed_columns(const Tiling& t, const Matrix& b, const Vector& x, const Result& y,
                           const Partials& p) {
  if constexpr (packed_columns_layout<Matrix>()) {
    using Policy = Kokkos::MDRangePolicy<
        typename Matrix::execution_space,
        Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
        Kokkos::IndexType<std::int64_t>,
        Kokkos::LaunchBounds<packed_column_threads, packed_column_blocks_per_sm>>;
    const auto units = static_cast<std::int64_t>(b.extent(0)) / t.rows_per_item;
    if (t.team_warps > 0) {
      using Teams = PackedColumnTeams<Matrix, Vector, Result>;
      constexpr int most = PackedTeamShape<value_t<Matrix>>::most_warps;
      const Teams teams{b, x, y, t.team_warps};
      const auto rows = static_cast<std::int64_t>(b.extent(0));
      Kokkos::parallel_for(
          "matvec::mdrange-packed-teams",
          Kokkos::TeamPolicy<typename Matrix::execution_space,
                             Kokkos::LaunchBounds<packed_team_units * most, 1>>(
              static_cast<int>(ceil_div(rows, Teams::rows_a_team)), teams.team_size())
              .set_scratch_size(0, Kokkos::PerTeam(teams.scratch_bytes())),
          teams);
      return true;
    }
    Kokkos::parallel_for(
        "matvec::mdrange-packed", Policy({0, 0}, {units, t.column_blocks}, {t.tile0, t.tile1}),
        PackedColumnBlocks<Matrix, Vector, Result, Partials>{b, x, y, p, t.column_blocks});
    return true;
  } else {
    (void)t, (void)b, (void)x, (void)y, (void)p;
    return false;
  }
}

// y = B x with one variant. `partials` comes from allocate_partials(b, tiling).
template <class Matrix, class Vector, class Result>
void multiply(Variant variant, const Matrix& b, const Vector& x, const Result& y,
              const Settings& settings, const PartialsFor<Matrix>& partials) {
  using Exec = typename Matrix::execution_space;
  const std::int64_t rows = static_cast<std::int64_t>(b.extent(0));
  if (rows == 0) return;
  switch (variant) {
    case Variant::row_per_thread:
      Kokkos::parallel_for("matvec::row-per-thread",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
                           RowPerThread<Matrix, Vector, Result>{b, x, y});
      break;
    case Variant::team_per_row: {
      const TeamShape& s = settings.team;
      const std::int64_t per_team = static_cast<std::int64_t>(s.team_size) * s.rows_per_thread;
      const int teams = static_cast<int>((rows + per_team - 1) / per_team);
      if constexpr (packed_rows_layout<Matrix>()) {
        if (rows_load_packed(b, x)) {
          launch_packed_rows(s, teams, b, x, y);
          break;
        }
      }
      launch_team_rows<TeamPerRow>("matvec::team-per-row",
                                   TeamRowsPolicy<Matrix>(teams, s.team_size, s.vector_length), s,
                                   b, x, y);
      break;
    }
    case Variant::mdrange: {
      Tiling t = settings.tiling;
      t.packed = columns_load_packed(b, t);  // else the same items, elementwise
      constexpr auto order = is_left<Matrix>() ? Kokkos::Iterate::Left : Kokkos::Iterate::Right;
      using Policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, order, order>,
                                           Kokkos::IndexType<std::int64_t>>;
      const std::int64_t blocks = (rows + t.rows_per_item - 1) / t.rows_per_item;
      if (!t.packed || !launch_packed_columns(t, b, x, y, partials))
        Kokkos::parallel_for(
            "matvec::mdrange", Policy({0, 0}, {blocks, t.column_blocks}, {t.tile0, t.tile1}),
            MDRangeBlocks<Matrix, Vector, Result, PartialsFor<Matrix>>{b, x, y, partials, t});
      if (t.column_blocks > 1) sum_column_blocks(partials, y);
      break;
    }
  }
}

// What multiply() may run for `variant` on this Matrix type: the symbols of
// its code version (karma/code_version.hpp). Every functor and launcher
// that B's sizes and alignment or the tiling pick among at run time, so that
// the version names the code and not the run; what ran is in the results.
template <class Matrix>
std::vector<std::string> multiply_code(Variant variant) {
  const std::string ns = "karma::matvec::";
  std::vector<std::string> code;
  switch (variant) {
    case Variant::row_per_thread:
      return {ns + "RowPerThread"};
    case Variant::team_per_row:
      code = {ns + "TeamPerRow", ns + "TeamRowsPolicy", ns + "launch_team_rows"};
      if (packed_rows_layout<Matrix>()) code.push_back(ns + "launch_packed_rows");
      return code;
    case Variant::mdrange:
      code = {ns + "MDRangeBlocks", ns + "sum_column_blocks"};
      if (packed_columns_layout<Matrix>()) code.push_back(ns + "launch_packed_columns");
      return code;
  }
  return code;
}

// ---------------------------------------------------------------------------
// Verification: every entry of y, against a reference computed on the
// device from the closed form of A and x.

// Rounding error of any order of summing `terms` products (the kernels'
// partial sums, mdrange's column blocks, the Allreduce of y = A^T x over
// ranks: all are summation trees of the same products) is at most
// gamma_terms * sum |b||x| ~ terms * u * sum |b||x| with u = eps / 2
// (Higham, Accuracy and Stability, 3.1). The reference below is within about
// u_double * sum |b||x| of the exact value. So (terms + 2) eps, eps of the
// element type, covers both with a factor 2 to spare; it grows with the row
// length because the bound does, and is not tuned to the kernels.
template <class T>
double tolerance_for(std::int64_t terms) {
  return static_cast<double>(terms + 2) * static_cast<double>(std::numeric_limits<T>::epsilon());
}

// A compensated sum (TwoSum at every step: Ogita, Rump and Oishi's Sum2)
// and sum |p| beside it. For exact terms p_k the result is within
// u |sum p| + gamma_{n-1}^2 sum |p| of the exact sum: for n = 2^30 terms the
// second part is below 1.3e-13 u sum |p|, so the result is the exact sum
// rounded, give or take an ulp. Partial sums merge with += (TwoSum of the
// sums, carries added), as Kokkos' reductions combine threads' values, with
// the same bound. No multiplications: a compiler contracting into FMAs
// cannot change it.
struct CompensatedSum {
  double sum, carry, size;
  KOKKOS_INLINE_FUNCTION CompensatedSum() : sum(0), carry(0), size(0) {}
  KOKKOS_INLINE_FUNCTION void add_exactly(const double p) {
    const double s = sum + p;
    const double bp = s - sum;
    carry += (sum - (s - bp)) + (p - bp);
    sum = s;
  }
  KOKKOS_INLINE_FUNCTION void add(const double p) {
    add_exactly(p);
    // fabs: `p < 0 ? -p : p` compiled to a branch, which mispredicted on
    // random signs and tripled the reference's time on a CPU.
    size += math::fabs(p);
  }
  KOKKOS_INLINE_FUNCTION CompensatedSum& operator+=(const CompensatedSum& o) {
    add_exactly(o.sum);
    carry += o.carry;
    size += o.size;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile CompensatedSum& o) volatile {
    CompensatedSum a, b;
    a.sum = sum;
    a.carry = carry;
    a.size = size;
    b.sum = o.sum;
    b.carry = o.carry;
    b.size = o.size;
    a += b;
    sum = a.sum;
    carry = a.carry;
    size = a.size;
  }
  KOKKOS_INLINE_FUNCTION double value() const { return sum + carry; }
};

}  // namespace karma::matvec

// The zero that Kokkos' sum reductions start a CompensatedSum from.
namespace Kokkos {
template <>
struct reduction_identity<karma::matvec::CompensatedSum> {
  KOKKOS_FORCEINLINE_FUNCTION static karma::matvec::CompensatedSum sum() {
    return karma::matvec::CompensatedSum();
  }
};
}  // namespace Kokkos

namespace karma::matvec {

// The exact entries of y (rounded once to double) and the scale of each,
// sum_k |a_k x_k|, that rounding errors are bounded by.
template <class Memory>
struct ExactEntries {
  Kokkos::View<double*, Memory> value, scale;
  std::int64_t first = 0;  // value(i) is entry first + i of y
  std::int64_t count() const { return static_cast<std::int64_t>(value.extent(0)); }
};

template <class Memory>
ExactEntries<Memory> allocate_exact(std::int64_t first, std::int64_t count) {
  ExactEntries<Memory> e;
  e.value = Kokkos::View<double*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::exact"), count);
  e.scale = Kokkos::View<double*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::exact_scale"), count);
  e.first = first;
  return e;
}

// Entries first .. first + count - 1 of y = A x (rows of A from row0, `terms`
// columns) or of y = A^T x (columns of A, `terms` rows from 0), for the
// seeded A and x(k) = vector_entry(seed, k), every a regenerated from its
// hash (nothing stored is read, none of the measured kernels' code runs).
// x and, for A^T, the rows' keys are computed once, so an entry of A costs
// one hash. Products of two 24-bit values are exact in double, so the sums
// are the only rounding.
template <class Exec = Kokkos::DefaultExecutionSpace>
ExactEntries<typename Exec::memory_space> dense_exact(std::uint64_t seed, bool transpose,
                                                      std::int64_t row0, std::int64_t first,
                                                      std::int64_t count, std::int64_t terms) {
  using Memory = typename Exec::memory_space;
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  auto e = allocate_exact<Memory>(first, count);
  const auto value = e.value;
  const auto scale = e.scale;
  const Kokkos::View<double*, Memory> xs(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::verify::x"), terms);
  const Kokkos::View<std::uint64_t*, Memory> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::verify::row_keys"),
      transpose ? terms : 0);
  Kokkos::parallel_for(
      "matvec::verify::x", Range(0, terms), KOKKOS_LAMBDA(const std::int64_t k) {
        xs(k) = vector_entry(seed, k);
        if (transpose) keys(k) = row_key(seed, k);
      });
  // A team an entry, its threads over the terms (one thread on a CPU): a
  // GPU stays busy with few long rows (64 x 2^22) as with many. Leagues of
  // at most 2^30 teams (a league size is an int).
  using Team = Kokkos::TeamPolicy<Exec>;
  constexpr std::int64_t most = std::int64_t{1} << 30;
  for (std::int64_t base = 0; base < count; base += most) {
    const int league = static_cast<int>(count - base < most ? count - base : most);
    Kokkos::parallel_for(
        "matvec::verify::dense_exact", Team(league, Kokkos::AUTO),
        KOKKOS_LAMBDA(const typename Team::member_type& team) {
          const std::int64_t i = base + team.league_rank();
          const std::int64_t r = first + i;
          const std::uint64_t key = transpose ? 0 : row_key(seed, row0 + r);
          CompensatedSum total;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, terms),
              [&](const std::int64_t k, CompensatedSum& part) {
                const double a = transpose ? keyed_entry(keys(k), r) : keyed_entry(key, k);
                part.add(a * xs(k));
              },
              total);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            value(i) = total.value();
            scale(i) = total.size;
          });
        });
  }
  return e;
}

// max over the entries of |y - exact| / scale (a zero scale counts as 1);
// infinity when an entry of y is NaN or infinite, so a kernel that never
// wrote y fails. `y` holds all of y (entry first + i for exact's i).
template <class HostExact, class HostVector>
double worst_scaled_error(const HostExact& exact, const HostVector& y) {
  double worst = 0;
  for (std::int64_t i = 0; i < exact.count(); ++i) {
    const double computed = static_cast<double>(y(exact.first + i));
    if (!std::isfinite(computed)) return std::numeric_limits<double>::infinity();
    const double scale = exact.scale(i) > 0 ? exact.scale(i) : 1.0;
    const double e = std::fabs(computed - exact.value(i)) / scale;
    if (!(e == e)) return std::numeric_limits<double>::infinity();
    if (e > worst) worst = e;
  }
  return worst;
}

template <class Memory>
ExactEntries<Kokkos::HostSpace> to_host(const ExactEntries<Memory>& e) {
  ExactEntries<Kokkos::HostSpace> h;
  h.value = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, e.value);
  h.scale = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, e.scale);
  h.first = e.first;
  return h;
}

// ---------------------------------------------------------------------------
// A host reference in long double: the unit tests' oracle for the checker
// above (the mini-app itself uses dense_exact and csr_exact).

// Exact y values of chosen rows, and sum |b||x| for each.
struct Reference {
  std::vector<std::int64_t> rows;
  std::vector<long double> exact;
  std::vector<long double> scale;
};

// Adds row `row` with y(row) = sum_{k < terms} entry(k) * xval(k).
template <class Entry, class XValue>
void add_reference_row(Reference& ref, std::int64_t row, std::int64_t terms, Entry&& entry,
                       XValue&& xval) {
  long double exact = 0, scale = 0;
  for (std::int64_t k = 0; k < terms; ++k) {
    const long double p = static_cast<long double>(entry(k)) * static_cast<long double>(xval(k));
    exact += p;
    scale += std::fabs(p);
  }
  ref.rows.push_back(row);
  ref.exact.push_back(exact);
  ref.scale.push_back(scale);
}

// max over the reference rows of |y(row) - exact| / sum |b||x|; infinity for
// a NaN or infinite y.
template <class HostVector>
double max_scaled_error(const Reference& ref, const HostVector& y) {
  double worst = 0;
  for (std::size_t s = 0; s < ref.rows.size(); ++s) {
    const long double computed = static_cast<long double>(y(ref.rows[s]));
    const long double scale = ref.scale[s] > 0 ? ref.scale[s] : 1.0L;
    double e = static_cast<double>(std::fabs(computed - ref.exact[s]) / scale);
    if (!(e == e) || !std::isfinite(static_cast<double>(computed)))
      e = std::numeric_limits<double>::infinity();
    if (e > worst) worst = e;
  }
  return worst;
}

}  // namespace karma::matvec
