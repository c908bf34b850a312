// karma-mgs's common ground (mgs_kernels.hpp): the algorithms, the tally of
// one factorization, memory spaces and policies, how rows map to work items
// and the shape of single dots.
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

}  // namespace karma::mgs
