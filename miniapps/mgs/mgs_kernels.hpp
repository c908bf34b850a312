// Gram-Schmidt QR of a tall N x m multivector A, distributed by rows, in
// Kokkos: A is overwritten by Q, R (m x m) is the same on every rank.
//
//   mgs        the seed paper's modified Gram-Schmidt: level-1 kernels (dot,
//              axpy, norm, scale), m^2 + m launches, one reduction each;
//   mgs-fused  the same arithmetic, right-looking: one kernel per column
//              normalises q_i, updates every later column and computes the
//              next column's dots with them (m + 1 launches);
//   cgs2       classical Gram-Schmidt twice, two multi-dot kernels per
//              column (2m launches).
//
// Every reduction is a local parallel_reduce followed by one sum over the
// ranks. With results kept on the device, reductions write straight into
// device memory, their final() turns sums into entries of R there, and the
// next kernel reads them there: on one rank the host never waits inside a
// factorization (the seed paper's point). Over several ranks the sums are
// added up in device memory first (sum_over_ranks: NCCL on the stream, or a
// GPU-aware MPI), then final() runs in one thread. In host mode each
// reduction lands in host-visible memory, is summed over ranks by MPI, and
// the coefficients the next kernel needs are copied back to the device,
// stream-ordered.
#pragma once

#include "karma/comm.hpp"
#include "karma/device_comm.hpp"
#include "mgs_matrix.hpp"

#include "karma/array.hpp"
#include "karma/packed.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace karma::mgs {

enum class Algorithm { mgs, mgs_fused, cgs2 };

inline const char* to_string(Algorithm a) {
  return a == Algorithm::mgs ? "mgs" : a == Algorithm::mgs_fused ? "mgs-fused" : "cgs2";
}

// What one factorization did, counted as it happens.
struct Tally {
  std::int64_t launches = 0;       // kernels (or library calls) started
  std::int64_t column_reads = 0;   // N-element columns read from memory ...
  std::int64_t column_writes = 0;  // ... and written: the bytes that must move
  std::int64_t allreduces = 0;     // MPI_Allreduce calls (none on one rank)
  std::int64_t host_waits = 0;     // times the host waited for the device
  std::int64_t packed_dots = 0;    // dots and norms that read 16-byte units (PackedColumnDot)
  void kernel(std::int64_t reads, std::int64_t writes) {
    ++launches;
    column_reads += reads;
    column_writes += writes;
  }
};

// Host memory the device can write: reductions on their way to MPI.
using ResultMemory = PinnedHostSpace;
using DeviceMemory = Kokkos::DefaultExecutionSpace::memory_space;
using Policy = Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

template <class View>
using value_t = typename View::non_const_value_type;

// How rows map to work items: item w takes rows rows(w, 0), rows(w, 1), ...
// up to rows(w, per_item - 1), those below `rows`.
//
// On a GPU, reductions run one item per resident thread, each striding over
// the rows (w, w + items, ...: coalesced across a warp) with partial sums in
// registers, added to the reduction once. A Kokkos array reduction keeps each
// thread's running sums in shared memory at a stride of the array's size, so
// one item per row put a warp's 32 updates of a sum on one bank: mgs-fused
// ran at 1.8 TB/s on an H200 that way. Element-wise kernels take four rows per
// item in layout left, strided the same way, and one in layout right (see
// Rows::each).
//
// On a host, item w takes the block [w B, w B + B): contiguous for caches and
// vector units, and a thread's running sum then adds block sums rather than
// rows, so its sequential sums stay short. A 2-thread CPU summing 2^21 rows
// each, row by row, lost two digits of a double dot product (CGS2's
// orthogonality went from 1e-14 to 1e-13) and all but three of a float one.
struct Rows {
  static constexpr bool gpu = is_gpu_space();
  static constexpr std::int64_t host_block = 256;
  std::int64_t rows = 0, items = 0, per_item = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t w, std::int64_t u) const {
    return gpu ? w + u * items : w * per_item + u;
  }
  Policy policy() const { return Policy(0, items); }

  // On a GPU, four rows per item in layout left, strided so a warp's
  // accesses stay coalesced: a column of 2^22 rows is L2-resident after the
  // reduction that precedes the update, and with one row per item the update
  // was bound by how fast the device retires thread blocks, not by memory. In
  // layout right a column's rows are a whole row apart, so a warp gains no
  // coalescing from the stride, and one row per item is faster there
  // (results/mgs/README.md, "Layout right: where the gap came from").
  template <class Layout>
  static Rows each(std::int64_t rows) {
    if (!gpu) return blocks(rows);
    constexpr std::int64_t per_item = std::is_same_v<Layout, Kokkos::LayoutRight> ? 1 : 4;
    const std::int64_t items = std::max<std::int64_t>(1, (rows + per_item - 1) / per_item);
    return {rows, items, per_item};
  }
  // Host blocks of host_block rows.
  static Rows blocks(std::int64_t rows) {
    return {rows, (rows + host_block - 1) / host_block, host_block};
  }
  // One item per resident GPU thread, or per `share` of them, each striding
  // over the rows.
  static Rows spread(std::int64_t rows, std::int64_t share = 1) {
    if (!gpu) return blocks(rows);
    const std::int64_t threads = Kokkos::DefaultExecutionSpace().concurrency() / share;
    const std::int64_t items = std::max<std::int64_t>(1, std::min(rows, threads));
    return {rows, items, (rows + items - 1) / items};
  }
};

// Single dots and norms. On a GPU a team policy: teams of 512 threads, each
// thread striding over the rows with independent sums (ColumnDot; on CUDA,
// columns that start on 16 bytes take PackedColumnDot instead); in double
// one team per 2048 threads the device holds and eight sums, in float two
// teams and four sums. A RangePolicy reduction on Kokkos 4.6 CUDA runs
// blocks of at most 256 threads and sums through shared memory; its best
// shape (at most 42 registers, six blocks per multiprocessor) took 27.4 ms
// for the whole mgs on an H200 at 2^22 x 32 doubles in a probe, this one
// 25.3 (hand-written CUDA 25.1); teams of 256 x 4, 512 x 2 and 1024 x 1 per
// multiprocessor took 26.3, 25.5 and 25.4. In karma-mgs: 25.7 - 25.9 against
// 25.2 - 25.3 (results/mgs/team-dots). In float (probe, 2^22 x 32) one team
// with eight sums took 13.65 ms, two with four 13.19, and 512 x 4 with four,
// 256 x 8 with four and 1024 x 1 with eight 14.3, 15.7 and 13.5; karma-mgs's
// hand-written CUDA takes 12.9 - 13.0 (results/mgs/fused-pointers).
template <class T>
struct DotShape {
  static constexpr int team = 512;
  static constexpr int per_sm = sizeof(T) < 8 ? 2 : 1;  // teams per 2048 threads
  static constexpr int sums = sizeof(T) < 8 ? 4 : 8;
};
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
template <class T>
using DotPolicy = Kokkos::TeamPolicy<Kokkos::IndexType<std::int64_t>,
                                     Kokkos::LaunchBounds<DotShape<T>::team, DotShape<T>::per_sm>>;
// The league of a dot kernel that keeps `per` teams on each 2048 threads the
// device holds.
inline int resident_teams(int per) {
  const auto teams = Kokkos::DefaultExecutionSpace().concurrency() / 2048 * per;
  return static_cast<int>(std::max<std::int64_t>(1, teams));
}
template <class T>
DotPolicy<T> dot_policy(std::int64_t) {
  return DotPolicy<T>(resident_teams(DotShape<T>::per_sm), DotShape<T>::team);
}
#else
template <class T>
using DotPolicy = Policy;
template <class T>
DotPolicy<T> dot_policy(std::int64_t rows) {
  return Rows::blocks(rows).policy();
}
#endif

// Where a level-1 kernel finds its coefficient.
template <class T>
struct FromDevice {
  const T* p;
  KOKKOS_INLINE_FUNCTION T operator()() const { return *p; }
};
template <class T>
struct FromHost {
  T v;
  KOKKOS_INLINE_FUNCTION T operator()() const { return v; }
};

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KARMA_MGS_UNROLL _Pragma("unroll")
#else
#define KARMA_MGS_UNROLL
#endif

// The sum of s, added in pairs (N a power of two): a thread's independent
// partial sums at the end of a dot.
template <class T, int N>
KOKKOS_INLINE_FUNCTION T fold_sums(T (&s)[N]) {
  static_assert((N & (N - 1)) == 0, "a power of two");
  KARMA_MGS_UNROLL
  for (int half = N / 2; half > 0; half /= 2) {
    KARMA_MGS_UNROLL
    for (int k = 0; k < half; ++k) s[k] += s[k + half];
  }
  return s[0];
}

// --- mgs: the level-1 kernels ------------------------------------------------

// a(:, x) . a(:, y); final() takes the square root for a norm. On a GPU
// (DotPolicy) each thread strides over the rows with eight independent
// sums, to keep loads in flight; on a host each item sums a block of rows.
template <class View>
struct ColumnDot {
  using value_type = value_t<View>;
  View a;
  int x, y;
  Rows rows;
  bool root;
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  KOKKOS_INLINE_FUNCTION void operator()(const typename DotPolicy<value_type>::member_type& team,
                                         value_type& sum) const {
    constexpr int sums = DotShape<value_type>::sums;
    const std::int64_t n = rows.rows;
    const std::int64_t stride = std::int64_t{team.league_size()} * team.team_size();
    std::int64_t i = std::int64_t{team.league_rank()} * team.team_size() + team.team_rank();
    value_type s[sums] = {};
    for (; i + (sums - 1) * stride < n; i += sums * stride) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < sums; ++k) s[k] += a(i + k * stride, x) * a(i + k * stride, y);
    }
    for (; i < n; i += stride) s[0] += a(i, x) * a(i, y);
    sum += fold_sums(s);
  }
#else
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, value_type& sum) const {
    value_type s = 0;
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      s += a(i, x) * a(i, y);
    }
    sum += s;
  }
#endif
  KOKKOS_INLINE_FUNCTION void final(value_type& sum) const {
    if (root) sum = math::sqrt(sum);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
// Dots of two contiguous columns that start on 16 bytes (layout left): a
// thread keeps two Packed units of each column in flight, in teams of 512,
// two per 2048 threads the device holds, in both precisions. ColumnDot's
// element loads left float's dot a quarter slower than the hand-written
// kernel's on an H100. A parallel_for with its own ending: each team stores
// its sum and the last team to finish adds them with all its threads, as
// the hand-written kernel does; Kokkos's reduction ending cost the float
// dot 1% more on an H100 (results/mgs/README.md, "16-byte dots").
inline constexpr int packed_dot_team = 512;
inline constexpr int packed_dot_teams = 2;  // per 2048 resident threads
inline constexpr int packed_dot_units = 2;  // in flight a thread and column
using PackedDotPolicy = Kokkos::TeamPolicy<Kokkos::IndexType<std::int64_t>,
                                           Kokkos::LaunchBounds<packed_dot_team, packed_dot_teams>>;

template <class T>
struct PackedColumnDot {
  using P = Packed<T>;
  const T* x;
  const T* y;
  std::int64_t n;
  bool root;
  T* team_sums;          // one a team
  unsigned* teams_done;  // 0 before and after
  T* out;

  KOKKOS_INLINE_FUNCTION T thread_sum(std::int64_t thread, std::int64_t stride) const {
    constexpr int U = packed_dot_units;
    constexpr int S = U * P::width;
    const P* px = reinterpret_cast<const P*>(x);
    const P* py = reinterpret_cast<const P*>(y);
    const std::int64_t units = n / P::width;
    T s[S] = {};
    std::int64_t u = thread;
    for (; u + (U - 1) * stride < units; u += U * stride) {
      P a[U], b[U];
      KARMA_MGS_UNROLL
      for (int k = 0; k < U; ++k) {
        a[k] = px[u + k * stride];
        b[k] = py[u + k * stride];
      }
      KARMA_MGS_UNROLL
      for (int k = 0; k < U; ++k) {
        KARMA_MGS_UNROLL
        for (int e = 0; e < P::width; ++e) s[k * P::width + e] += a[k].v[e] * b[k].v[e];
      }
    }
    for (; u < units; u += stride) {
      const P a = px[u], b = py[u];
      KARMA_MGS_UNROLL
      for (int e = 0; e < P::width; ++e) s[e] += a.v[e] * b.v[e];
    }
    const std::int64_t r = units * P::width + thread;  // rows past the last unit
    if (r < n) s[0] += x[r] * y[r];
    return fold_sums(s);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const PackedDotPolicy::member_type& team) const {
    const int league = team.league_size();
    T v = thread_sum(std::int64_t{team.league_rank()} * team.team_size() + team.team_rank(),
                     std::int64_t{league} * team.team_size());
    team.team_reduce(Kokkos::Sum<T>(v));
    int last = 0;
    if (team.team_rank() == 0) {
      team_sums[team.league_rank()] = v;
      Kokkos::memory_fence();  // the sum is seen before the count
      last = Kokkos::atomic_fetch_add(teams_done, 1u) == static_cast<unsigned>(league - 1);
    }
    team.team_broadcast(last, 0);
    if (!last) return;
    const volatile T* sums = team_sums;  // past the L1 cache
    T total = 0;
    for (int b = team.team_rank(); b < league; b += team.team_size()) total += sums[b];
    team.team_reduce(Kokkos::Sum<T>(total));
    if (team.team_rank() == 0) {
      *out = root ? math::sqrt(total) : total;
      *teams_done = 0;
    }
  }
};
#endif

// a(:, x) *= 1 / r
template <class View, class Coef>
struct ColumnScale {
  View a;
  int x;
  Coef r;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> inverse = value_t<View>(1) / r();
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      a(i, x) *= inverse;
    }
  }
};

// a(:, y) -= c a(:, x)
template <class View, class Coef>
struct ColumnAxpy {
  View a;
  int x, y;
  Coef c;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> coefficient = c();
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      a(i, y) -= coefficient * a(i, x);
    }
  }
};

// --- multi-dot kernels -----------------------------------------------------------

// Sums one value per slot over the rows: Body::row<W>(i, part, tail) adds
// row i's terms to part[0 .. n) and, for a Body with a tail, its last slot's
// term to `tail` (slot n, whose index is only known at run time: an indexed
// register array would be moved to local memory). W > 0: part is W
// registers, indices known at compile time; W == 0: an array in local
// memory, for more columns than registers hold, and on hosts. The partial
// sums are added to the reduction's sums once per item.
template <class Body, int W>
struct MultiRows {
  using T = typename Body::T;
  using value_type = T[];
  unsigned value_count;
  Body body;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, T* sums) const {
    constexpr int P = W > 0 ? W : max_columns + 1;
    const int n = static_cast<int>(value_count) - (Body::has_tail ? 1 : 0);
    T part[P];
    T tail = 0;
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < P; ++k) part[k] = 0;
    } else {
      for (int k = 0; k < n; ++k) part[k] = 0;
    }
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      body.template row<W>(i, part, tail);
    }
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < P; ++k)
        if (k < n) sums[k] += part[k];
    } else {
      for (int k = 0; k < n; ++k) sums[k] += part[k];
    }
    if (Body::has_tail) sums[n] += tail;
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst) const { body.final(dst, value_count); }
};

// run(integral_constant<int, W>) for the first W of the list that holds
// `slots` (the last must).
template <class Run, int... W>
void run_narrowest(unsigned slots, const Run& run, std::integer_sequence<int, W...>) {
  bool done = false;
  ((done || slots > static_cast<unsigned>(W)
        ? void()
        : (run(std::integral_constant<int, W>{}), done = true, void())),
   ...);
}

// Runs the multi-dot `body` with `count` sums into dst (memory space Space);
// no fence. On a GPU the partial sums live in registers, in the narrowest of
// 4, 8, 16 or 32 that holds them, or for a Body with fine_widths of 4, 8,
// 12, ..., 32: a kernel compiled for 32 holds about 250 registers per thread
// whatever the count, the late steps, with few columns left and so few loads
// per row, need the occupancy of a narrow one, and every slot past `count`
// costs predicated instructions in each row. Widths every 4 took mgs-fused
// from 9.89 to 9.49 ms on an H200 (2^22 x 32 doubles, probe) and cgs2 from
// 14.3 to 15.3 ms (karma-mgs): cgs2 keeps powers of two. With fine widths a
// body run at width W > 4 has more than W - 4 slots (sure_slots), which it
// need not test.
template <class Space, class Body, class T>
void multi_reduce(const char* label, const Body& body, std::int64_t rows, T* dst, unsigned count) {
  const Kokkos::View<T*, Space, Unmanaged> out(dst, count);
  // Each thread's running sums live in shared memory (count x 8 bytes a
  // thread), which caps the resident blocks: with an item per resident
  // thread a wide reduction ran in about three waves. Fewer items, each with
  // more rows, fit in one. Measured per step of mgs-fused on an H200, 2^22
  // rows, items = resident threads / share (share 1, 2, 3, 4, 6, 8, 16):
  // 31 sums 504, 440, 449, 406, 544, 384, 629 us; 15 sums 279, 247, 258,
  // 234, 310, 223, 382; 7 sums 120, 107, 132, 99, 124, 149, 262; 1 sum 53,
  // 59, 48, 57, 76, 93, 168: Body::share(W) (mgs-fused: 8, 4 and 3 for 9-32,
  // 5-8 and 1-4 sums; cgs2, measured whole: 4 and 1, 16.6 -> 14.4 ms).
  const auto run = [&](auto width) {
    constexpr int W = decltype(width)::value;
    const Rows r = Rows::spread(rows, Body::share(W));
    Kokkos::parallel_reduce(label, r.policy(), MultiRows<Body, W>{count, body, r}, out);
  };
  const unsigned slots = count - (Body::has_tail ? 1 : 0);
  if (!Rows::gpu || slots > 32) {
    run(std::integral_constant<int, 0>{});
    return;
  }
  using Fine = std::integer_sequence<int, 4, 8, 12, 16, 20, 24, 28, 32>;
  using Coarse = std::integer_sequence<int, 4, 8, 16, 32>;
  run_narrowest(slots, run, std::conditional_t<Body::fine_widths, Fine, Coarse>{});
}

// Slots a body with fine_widths run at width W > 0 surely has (multi_reduce).
// Host-device: the fused step's kernels call it (nvcc warns #20013 otherwise).
KOKKOS_INLINE_FUNCTION constexpr int sure_slots(int w) { return w <= 4 ? 1 : w - 3; }

// --- mgs-fused ---------------------------------------------------------------

// Reduction items as resident threads / share, by register width W (see
// multi_reduce).
constexpr int fused_share(int w) { return w <= 4 ? 3 : w <= 8 ? 4 : 8; }
constexpr int cgs2_share(int w) { return w >= 8 ? 4 : 1; }

// r_cc = sqrt(dst[0]), r_ck = dst[k - c] / r_cc: row c of R from the dots
// a(:, c) . a(:, k), k >= c.
template <class T>
KOKKOS_INLINE_FUNCTION void dots_to_row(T* dst, unsigned count) {
  const T d = math::sqrt(dst[0]);
  dst[0] = d;
  for (unsigned k = 1; k < count; ++k) dst[k] /= d;
}

// part[k - c] += a(:, c) . a(:, k), k = c .. m-1; final(): row c of R.
template <class View>
struct GramRow {
  using T = value_t<View>;
  static constexpr int share(int w) { return fused_share(w); }
  static constexpr bool fine_widths = true;
  static constexpr bool has_tail = false;
  View a;
  int c;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T&) const {
    const int m = static_cast<int>(a.extent(1));
    const T x = a(r, c);
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int t = 0; t < W; ++t)
        if (c + t < m) part[t] += x * a(r, c + t);
    } else {
      for (int k = c; k < m; ++k) part[k - c] += x * a(r, k);
    }
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned count) const {
    if (finalize) dots_to_row(dst, count);
  }
};

// How many steps of mgs-fused share one store of the updated columns: a step
// stores them only every fused_depth steps (see FusedStep). Column counts at
// m = 32, depth 1, 2, 3, 4, 6: 1088, 848, 778, 752, 738.
inline constexpr int fused_depth = 3;

// One right-looking step: q_i = v_i / r_ii, v_k -= r_ik q_i for k > i, and
// the next step's dots part[k - i - 1] += v_{i+1} . v_k (k > i) on the
// updated columns (final(): row i+1 of R). `rrow` is row i of R, indexed by
// column.
//
// Stores of the updated columns are deferred: a step `stale` s > 0 finds the
// columns k >= i in memory as they were before step i - s (q_{i-s} .. q_{i-1}
// stored, not yet applied to them) and applies r_{p,k} q_p for p = i - s ..
// i - 1 first, in that order, from the rows of R at `rstale` (row i - s, then
// the next rows at a stride of m): the same operations in the same order as
// if each step had stored its columns. A step that does not `store` leaves
// columns k > i as they were and writes q_i only. With a store every Depth
// steps, mgs-fused saves most column writes for Depth - 1 extra column reads
// a step.
template <class View, int Depth = fused_depth>
struct FusedStep {
  using T = value_t<View>;
  static constexpr int share(int w) { return fused_share(w); }
  static constexpr bool fine_widths = true;
  static constexpr bool has_tail = false;
  static constexpr int max_stale = Depth > 1 ? Depth - 1 : 1;
  View a;
  int i;
  const T* rrow;
  const T* rstale;  // row i - stale of R, or null with stale == 0
  int stale;        // 0 .. Depth - 1
  bool store;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T&) const {
    const int m = static_cast<int>(a.extent(1));
    if constexpr (W > 0) {
      // Column i + t of row r at col + t ld, each one add from the last:
      // written as a(r, i + t), every access took five or six 64-bit
      // integer instructions (818 in all per row at W = 32, ncu), and
      // mgs-fused took 9.49 ms against 8.49 this way (H200, probe).
      const std::ptrdiff_t ld = static_cast<std::ptrdiff_t>(a.stride(1));
      T* const col = &a(r, i);
      const auto has = [&](int t) { return t <= sure_slots(W) || i + t < m; };
      T qs[max_stale];  // q_{i-stale} .. q_{i-1} of this row
      KARMA_MGS_UNROLL
      for (int p = 0; p < max_stale; ++p)
        if (p < stale) qs[p] = col[(p - stale) * ld];
      // The whole row first: a load after a store to the same array waits
      // for it (the compiler cannot tell the columns apart), so loads and
      // stores interleaved would leave one load in flight per thread.
      T v[W + 1];
      const T* in = col;
      KARMA_MGS_UNROLL
      for (int t = 0; t <= W; ++t, in += ld)
        if (has(t)) v[t] = *in;
      KARMA_MGS_UNROLL
      for (int p = 0; p < max_stale; ++p)
        if (p < stale) {
          const T* rp = rstale + static_cast<std::ptrdiff_t>(p) * m + i;
          KARMA_MGS_UNROLL
          for (int t = 0; t <= W; ++t)
            if (has(t)) v[t] -= rp[t] * qs[p];
        }
      const T* rr = rrow + i;
      const T q = v[0] * (T(1) / rr[0]);
      col[0] = q;
      const T next = v[1] - rr[1] * q;
      if (store) col[ld] = next;
      part[0] += next * next;
      T* out = col + 2 * ld;
      KARMA_MGS_UNROLL
      for (int t = 2; t <= W; ++t, out += ld)
        if (has(t)) {
          const T w = v[t] - rr[t] * q;
          if (store) *out = w;
          part[t - 1] += next * w;
        }
    } else {
      T qs[max_stale];
      for (int p = 0; p < stale; ++p) qs[p] = a(r, i - stale + p);
      const auto current = [&](int k) {
        T v = a(r, k);
        for (int p = 0; p < stale; ++p) v -= rstale[static_cast<std::ptrdiff_t>(p) * m + k] * qs[p];
        return v;
      };
      const T q = current(i) * (T(1) / rrow[i]);
      a(r, i) = q;
      const T next = current(i + 1) - rrow[i + 1] * q;
      if (store) a(r, i + 1) = next;
      part[0] += next * next;
      for (int k = i + 2; k < m; ++k) {
        const T w = current(k) - rrow[k] * q;
        if (store) a(r, k) = w;
        part[k - i - 1] += next * w;
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned count) const {
    if (finalize) dots_to_row(dst, count);
  }
};

// The last column of mgs-fused: q_{m-1} = v_{m-1} / r, v_{m-1} brought up to
// date first where earlier steps deferred it (`stale` rows of R from
// `rstale`, at a stride of m).
template <class View, class Coef>
struct FusedLast {
  View a;
  int j;
  Coef r;
  const value_t<View>* rstale;
  int stale;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> inverse = value_t<View>(1) / r();
    const int m = static_cast<int>(a.extent(1));
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      auto v = a(i, j);
      for (int p = 0; p < stale; ++p)
        v -= rstale[static_cast<std::ptrdiff_t>(p) * m + j] * a(i, j - stale + p);
      a(i, j) = v * inverse;
    }
  }
};

// --- cgs2 --------------------------------------------------------------------

// Pass 1 applied, pass 2 measured, for column c against q_0 .. q_{c-1}:
// w = a(:, c) - Q s1 (stored), part[k] += q_k . w (k < c), tail += w . w.
// final(): s2 = dst[0..c-1], r_cc = sqrt(w.w - |s2|^2) (Pythagoras: after
// one pass, s2 is tiny beside w), column c of R = s1 + s2 and r_cc, written
// to `rcol` (R(0, c), stride m); dst keeps s2 and r_cc for Finish.
template <class View>
struct Project {
  using T = value_t<View>;
  static constexpr int share(int w) { return cgs2_share(w); }
  static constexpr bool fine_widths = false;
  static constexpr bool has_tail = true;  // w . w
  View a;
  int c;
  const T* s1;
  T* rcol;
  int rstride;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T& tail) const {
    T w = a(r, c);
    if constexpr (W > 0) {
      T q[W];  // Q's row, read once
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < c) {
          q[k] = a(r, k);
          w -= q[k] * s1[k];
        }
      if (c > 0) a(r, c) = w;
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < c) part[k] += q[k] * w;
    } else {
      for (int k = 0; k < c; ++k) w -= a(r, k) * s1[k];
      if (c > 0) a(r, c) = w;
      for (int k = 0; k < c; ++k) part[k] += a(r, k) * w;
    }
    tail += w * w;
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned) const {
    if (!finalize) return;
    T s2 = 0;
    for (int k = 0; k < c; ++k) s2 += dst[k] * dst[k];
    const T d = math::sqrt(dst[c] - s2);
    dst[c] = d;
    for (int k = 0; k < c; ++k) rcol[k * rstride] = s1[k] + dst[k];
    rcol[c * rstride] = d;
  }
};

// Pass 2 applied to column j and normalised: q_j = (w - Q s2) / r_jj, with
// p2 = (s2, r_jj) from Project. With a next column the same sweep measures
// its pass 1: part[k] += q_k . a(:, j+1), k < j, tail += q_j . a(:, j+1)
// (no final(): the sums are the coefficients).
template <class View>
struct Finish {
  using T = value_t<View>;
  static constexpr int share(int w) { return cgs2_share(w); }
  static constexpr bool fine_widths = false;
  static constexpr bool has_tail = true;  // q_j . a(:, j+1)
  View a;
  int j;
  const T* p2;
  KOKKOS_INLINE_FUNCTION T finish(const std::int64_t r) const {
    T w = a(r, j);
    for (int k = 0; k < j; ++k) w -= a(r, k) * p2[k];
    const T q = w * (T(1) / p2[j]);
    a(r, j) = q;
    return q;
  }
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T& tail) const {
    const T v = a(r, j + 1);
    T w = a(r, j);
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < j) {
          const T qk = a(r, k);
          w -= qk * p2[k];
          part[k] += qk * v;
        }
    } else {
      for (int k = 0; k < j; ++k) {
        const T qk = a(r, k);
        w -= qk * p2[k];
        part[k] += qk * v;
      }
    }
    const T q = w * (T(1) / p2[j]);
    a(r, j) = q;
    tail += q * v;
  }
  KOKKOS_INLINE_FUNCTION void final(T*, unsigned) const {}
};

// The last column of cgs2: pass 2 and normalisation, no reduction.
template <class View>
struct FinishLast {
  Finish<View> body;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      body.finish(i);
    }
  }
};

// --- the factorizations --------------------------------------------------------

template <class T>
struct Workspace {
  int m;
  bool on_device;   // reduction results stay on the device
  bool over_ranks;  // ... and are summed over the ranks there (run.comm: nccl, gpu-aware MPI)
  Kokkos::View<T**, Kokkos::LayoutRight, DeviceMemory> r_dev;   // R, results on the device
  Kokkos::View<T**, Kokkos::LayoutRight, ResultMemory> r_host;  // R, results through the host
  Kokkos::View<T*, DeviceMemory> coef1, coef2;                  // coefficients kernels read
  Kokkos::View<T*, ResultMemory> sums;                          // reductions bound for MPI
#if defined(KOKKOS_ENABLE_CUDA)
  Kokkos::View<T*, DeviceMemory> team_sums;         // PackedColumnDot's teams ...
  Kokkos::View<unsigned, DeviceMemory> teams_done;  // ... and their count
#endif

  Workspace(int columns, bool device)
      : m(columns),
        on_device(device),
        over_ranks(device && comm::size() > 1),
        r_dev("mgs::R", columns, columns),
        r_host("mgs::R_host", columns, columns),
        coef1("mgs::coef1", columns + 1),
        coef2("mgs::coef2", columns + 1),
        sums("mgs::sums", columns + 1) {
#if defined(KOKKOS_ENABLE_CUDA)
    team_sums = decltype(team_sums)("mgs::team_sums", resident_teams(packed_dot_teams));
    teams_done = decltype(teams_done)("mgs::teams_done");
#endif
  }

  T* rd(int i, int j) const { return r_dev.data() + static_cast<std::ptrdiff_t>(i) * m + j; }
  // Whether a reduction's final() runs in its kernel: on one rank, and in
  // host mode (which finishes on the host); over ranks it runs after the sum.
  bool final_in_kernel() const { return on_device && !over_ranks; }

  // R in double on the host, once the device is done: from r_dev or r_host.
  std::vector<double> r_matrix(bool from_device) const {
    Kokkos::fence();
    std::vector<double> out(static_cast<std::size_t>(m) * m);
    if (from_device) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, r_dev);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) out[i * m + j] = static_cast<double>(h(i, j));
    } else {
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) out[i * m + j] = static_cast<double>(r_host(i, j));
    }
    return out;
  }
};

// Host mode: a multi-dot's local sums into ws.sums, then summed over ranks.
template <class Body, class T>
T* multi_over_ranks(const char* label, const Body& body, std::int64_t rows, Workspace<T>& ws,
                    unsigned count, Tally& t) {
  multi_reduce<ResultMemory>(label, body, rows, ws.sums.data(), count);
  Kokkos::fence();
  ++t.host_waits;
  comm::sum_in_place(ws.sums.data(), count);
  ++t.allreduces;
  return ws.sums.data();
}

// Host mode: `count` values from host-visible memory to device memory,
// ordered on the stream before the next kernel; the host does not wait.
template <class T>
void to_device(T* dst, const T* src, int count) {
  Kokkos::deep_copy(Kokkos::DefaultExecutionSpace(),
                    Kokkos::View<T*, DeviceMemory, Unmanaged>(dst, count),
                    Kokkos::View<const T*, ResultMemory, Unmanaged>(src, count));
}

// Device mode over ranks: the `count` sums at `dst` (device memory) summed
// over the ranks, then what body.final() makes of them, in one thread.
template <class Body, class T>
void final_over_ranks(Body body, T* dst, unsigned count, Tally& t) {
  sum_over_ranks(dst, static_cast<std::int64_t>(count));
  ++t.allreduces;
  if (comm::path().path != comm::Path::nccl) ++t.host_waits;
  body.finalize = true;
  Kokkos::parallel_for(
      "mgs::final_over_ranks", Kokkos::RangePolicy<>(0, 1),
      KOKKOS_LAMBDA(const int) { body.final(dst, count); });
  ++t.launches;
}

// Device mode over ranks: a dot summed over the ranks in place, its square
// root taken for a norm.
template <class T>
void dot_over_ranks(T* dst, bool root, Tally& t) {
  sum_over_ranks(dst, 1);
  ++t.allreduces;
  if (comm::path().path != comm::Path::nccl) ++t.host_waits;
  if (!root) return;
  Kokkos::parallel_for(
      "mgs::root_over_ranks", Kokkos::RangePolicy<>(0, 1),
      KOKKOS_LAMBDA(const int) { *dst = math::sqrt(*dst); });
  ++t.launches;
}

// Runs `dot` into `result` (a device View, or a host value): as
// PackedColumnDot where both columns are contiguous and start on 16 bytes
// on CUDA (counted in t.packed_dots), else as ColumnDot over `dots`.
template <class View, class Result>
void column_dot(const char* label, const DotPolicy<value_t<View>>& dots, const ColumnDot<View>& dot,
                Result&& result, [[maybe_unused]] Workspace<value_t<View>>& ws,
                [[maybe_unused]] Tally& t) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
    using T = value_t<View>;
    const T* x = dot.a.data() + dot.x * static_cast<std::int64_t>(dot.a.stride(1));
    const T* y = dot.a.data() + dot.y * static_cast<std::int64_t>(dot.a.stride(1));
    if (dot.rows.rows > 0 && packed_aligned(x) && packed_aligned(y)) {
      constexpr bool to_device = Kokkos::is_view<std::decay_t<Result>>::value;
      T* out = ws.sums.data();  // host-visible
      if constexpr (to_device) out = result.data();
      const auto league = static_cast<int>(ws.team_sums.extent(0));  // one sum a team
      Kokkos::parallel_for(label, PackedDotPolicy(league, packed_dot_team),
                           PackedColumnDot<T>{x, y, dot.rows.rows, dot.root, ws.team_sums.data(),
                                              ws.teams_done.data(), out});
      if constexpr (!to_device) {
        Kokkos::fence();
        result = *out;
      }
      ++t.packed_dots;
      return;
    }
  }
#endif
  Kokkos::parallel_reduce(label, dots, dot, result);
}

template <class View>
void factor_mgs(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  using Result = Kokkos::View<T, DeviceMemory, Unmanaged>;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const Rows each = Rows::each<typename View::array_layout>(n);
  const DotPolicy<T> dots = dot_policy<T>(n);
  for (int j = 0; j < ws.m; ++j) {
    for (int i = 0; i < j; ++i) {
      const ColumnDot<View> dot{a, i, j, each, false};
      if (ws.on_device) {
        column_dot("mgs::dot", dots, dot, Result(ws.rd(i, j)), ws, t);
        t.kernel(2, 0);
        if (ws.over_ranks) dot_over_ranks(ws.rd(i, j), false, t);
        Kokkos::parallel_for("mgs::axpy", each.policy(),
                             ColumnAxpy<View, FromDevice<T>>{a, i, j, {ws.rd(i, j)}, each});
      } else {
        T s = 0;
        column_dot("mgs::dot", dots, dot, s, ws, t);
        t.kernel(2, 0);
        ++t.host_waits;
        comm::sum_in_place(&s, 1);
        ++t.allreduces;
        ws.r_host(i, j) = s;
        Kokkos::parallel_for("mgs::axpy", each.policy(),
                             ColumnAxpy<View, FromHost<T>>{a, i, j, {s}, each});
      }
      t.kernel(2, 1);
    }
    const ColumnDot<View> norm{a, j, j, each, ws.final_in_kernel()};
    if (ws.on_device) {
      column_dot("mgs::norm", dots, norm, Result(ws.rd(j, j)), ws, t);
      t.kernel(1, 0);
      if (ws.over_ranks) dot_over_ranks(ws.rd(j, j), true, t);
      Kokkos::parallel_for("mgs::scale", each.policy(),
                           ColumnScale<View, FromDevice<T>>{a, j, {ws.rd(j, j)}, each});
    } else {
      T s = 0;
      column_dot("mgs::norm", dots, norm, s, ws, t);
      t.kernel(1, 0);
      ++t.host_waits;
      comm::sum_in_place(&s, 1);
      ++t.allreduces;
      const T r = math::sqrt(s);
      ws.r_host(j, j) = r;
      Kokkos::parallel_for("mgs::scale", each.policy(),
                           ColumnScale<View, FromHost<T>>{a, j, {r}, each});
    }
    t.kernel(1, 1);
  }
}

// Host mode: row i of R from the summed dots a(:, i) . a(:, k), k >= i.
template <class T>
void finish_row(Workspace<T>& ws, int i, const T* s) {
  const T d = math::sqrt(s[0]);
  ws.r_host(i, i) = d;
  for (int k = i + 1; k < ws.m; ++k) ws.r_host(i, k) = s[k - i] / d;
}

template <class View, int Depth = fused_depth>
void factor_mgs_fused(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  const int m = ws.m;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const auto count = [&](int i) { return static_cast<unsigned>(m - i); };
  // Rows of R where the kernels read them: in host mode each row, once
  // summed over ranks, is copied to its place in r_dev.
  const auto row = [&](int i) -> const T* { return ws.rd(i, 0); };
  const auto row_to_device = [&](int i) { to_device(ws.rd(i, 0), &ws.r_host(i, 0), m); };
  // Step i finds the columns i % Depth steps behind; the last of every
  // Depth steps stores them (see FusedStep).
  const auto stale = [](int i) { return i % Depth; };
  const auto stores = [](int i) { return i % Depth == Depth - 1; };

  const GramRow<View> first{a, 0, ws.final_in_kernel()};
  if (ws.on_device) {
    multi_reduce<DeviceMemory>("mgs::fused_gram", first, n, ws.rd(0, 0), count(0));
    if (ws.over_ranks) final_over_ranks(first, ws.rd(0, 0), count(0), t);
  } else {
    finish_row(ws, 0, multi_over_ranks("mgs::fused_gram", first, n, ws, count(0), t));
    row_to_device(0);
  }
  t.kernel(m, 0);
  for (int i = 0; i + 1 < m; ++i) {
    const int s = stale(i);
    const FusedStep<View, Depth> step{
        a, i, row(i), s > 0 ? row(i - s) : nullptr, s, stores(i), ws.final_in_kernel()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::fused_step", step, n, ws.rd(i + 1, i + 1), count(i + 1));
      if (ws.over_ranks) final_over_ranks(step, ws.rd(i + 1, i + 1), count(i + 1), t);
    } else {
      finish_row(ws, i + 1, multi_over_ranks("mgs::fused_step", step, n, ws, count(i + 1), t));
      row_to_device(i + 1);
    }
    t.kernel(m - i + s, stores(i) ? m - i : 1);
  }
  const int j = m - 1, s = stale(j);
  const T* rstale = s > 0 ? row(j - s) : nullptr;
  const Rows each = Rows::each<typename View::array_layout>(n);
  if (ws.on_device)
    Kokkos::parallel_for("mgs::fused_last", each.policy(),
                         FusedLast<View, FromDevice<T>>{a, j, {ws.rd(j, j)}, rstale, s, each});
  else
    Kokkos::parallel_for("mgs::fused_last", each.policy(),
                         FusedLast<View, FromHost<T>>{a, j, {ws.r_host(j, j)}, rstale, s, each});
  t.kernel(1 + s, 1);
}

template <class View>
void factor_cgs2(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  const int m = ws.m;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  std::vector<T> s1(m + 1);  // host mode: pass-1 coefficients of the current column

  // Project column c (pass 1 applied from coef1, pass 2 measured) -> coef2.
  const auto project = [&](int c) {
    const auto count = static_cast<unsigned>(c + 1);
    const Project<View> p{a, c, ws.coef1.data(), ws.rd(0, c), m, ws.final_in_kernel()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::cgs2_project", p, n, ws.coef2.data(), count);
      if (ws.over_ranks) final_over_ranks(p, ws.coef2.data(), count, t);
    } else {
      T* s = multi_over_ranks("mgs::cgs2_project", p, n, ws, count, t);
      T s2 = 0;
      for (int k = 0; k < c; ++k) s2 += s[k] * s[k];
      s[c] = math::sqrt(s[c] - s2);
      for (int k = 0; k < c; ++k) ws.r_host(k, c) = s1[k] + s[k];
      ws.r_host(c, c) = s[c];
      to_device(ws.coef2.data(), s, c + 1);
    }
    t.kernel(c + 1, c > 0 ? 1 : 0);
  };

  project(0);
  for (int j = 0; j + 1 < m; ++j) {
    const auto count = static_cast<unsigned>(j + 1);
    const Finish<View> f{a, j, ws.coef2.data()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::cgs2_finish", f, n, ws.coef1.data(), count);
      if (ws.over_ranks) {
        sum_over_ranks(ws.coef1.data(), static_cast<std::int64_t>(count));
        ++t.allreduces;
      }
    } else {
      const T* s = multi_over_ranks("mgs::cgs2_finish", f, n, ws, count, t);
      for (int k = 0; k <= j; ++k) s1[k] = s[k];
      to_device(ws.coef1.data(), s, j + 1);
    }
    t.kernel(j + 2, 1);
    project(j + 1);
  }
  const Rows each = Rows::each<typename View::array_layout>(n);
  Kokkos::parallel_for("mgs::cgs2_finish", each.policy(),
                       FinishLast<View>{{a, m - 1, ws.coef2.data()}, each});
  t.kernel(m, 1);
}

// For tests of the checks: a(0, 0) += delta.
template <class View>
struct AddToFirst {
  View a;
  value_t<View> delta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t) const { a(0, 0) += delta; }
};

template <class View>
void factor(Algorithm algorithm, const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  switch (algorithm) {
    case Algorithm::mgs:
      factor_mgs(a, ws, t);
      break;
    case Algorithm::mgs_fused:
      factor_mgs_fused(a, ws, t);
      break;
    case Algorithm::cgs2:
      factor_cgs2(a, ws, t);
      break;
  }
}

// One factorization (algorithm mgs) by a hand-written implementation's
// `factor` on the rows x m array at `data` (element (r, j) at data + r *
// row_stride + j * column_stride), R into `r` on the device; its Context (its
// buffers, handles) is made here, once, outside the timed region.
template <class Context, class T, class Factor>
std::function<void()> factorization_by(Factor factor, T* data, std::int64_t rows, int m,
                                       std::int64_t row_stride, std::int64_t column_stride, T* r,
                                       bool on_device, Tally& t) {
  auto context = std::make_shared<Context>();
  return [=, &t] { factor(*context, data, rows, m, row_stride, column_stride, r, on_device, t); };
}

}  // namespace karma::mgs
