// The dense kernels that split B by columns as well (matvec_kernels.hpp):
// the mdrange variant's tiling, its blocks of rows and columns, the packed
// column kernels, and the sums of column blocks.
#pragma once

#include "matvec_rows.hpp"

#include "karma/packed.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace karma::matvec {

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

}  // namespace karma::matvec
