// Reductions, gathers and exchanges of data in the backend's memory over
// the path the deck chose (run.comm, karma::comm::path()): MPI on host
// memory, NCCL on the device's stream, a GPU-aware MPI on device memory, or
// copies through page-locked host memory. Every call counts as
// communication (comm::seconds_spent): the host's time in it, or with NCCL
// the device's (the host only enqueues, and may block on a full queue while
// the device computes, which is not communication). Collective.
#pragma once

#include "karma/comm.hpp"
#include "karma/peer_memory.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace karma {

namespace device_comm_detail {

template <class T>
using Unmanaged = Kokkos::View<T*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using UnmanagedPinned = Kokkos::View<T*, PinnedHostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Page-locked room for `count` values of T, kept between calls and freed
// when Kokkos finalizes (a static View would outlive it and abort at exit).
template <class T>
T* staging(std::int64_t count) {
  static Kokkos::View<T*, PinnedHostSpace>* room = nullptr;
  if (room == nullptr) {
    room = new Kokkos::View<T*, PinnedHostSpace>();
    Kokkos::push_finalize_hook([] {
      delete room;
      room = nullptr;
    });
  }
  if (static_cast<std::int64_t>(room->extent(0)) < count)
    *room = Kokkos::View<T*, PinnedHostSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "karma::comm::staging"), count);
  return room->data();
}

template <class T>
void copy(T* to, const T* from, std::int64_t count, bool to_host) {
  if (count == 0) return;
  if (to_host)
    Kokkos::deep_copy(UnmanagedPinned<T>(to, count), Unmanaged<const T>(from, count));
  else
    Kokkos::deep_copy(Unmanaged<T>(to, count), UnmanagedPinned<const T>(from, count));
}

}  // namespace device_comm_detail

namespace peer_detail {
#if defined(__CUDA_ARCH__)
__device__ inline unsigned long long nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif
// A peer that has not written after this long is gone: stop the kernel
// (an error at the next fence) rather than spin for ever.
inline constexpr unsigned long long patience_ns = 60ull * 1000 * 1000 * 1000;

}  // namespace peer_detail

// `values` (device memory, `count` of them) summed over the ranks in place,
// in rank order on every rank, so that every rank holds the same bits, by
// one GPU thread (karma/peer_memory.hpp); every rank calls it with the same
// epoch. Its time goes to p.spent_ns.
template <class T>
KOKKOS_INLINE_FUNCTION void peer_sum(const comm::PeerSlots& p, T* values, int count,
                                     unsigned long long epoch) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(T) % 4 == 0 && sizeof(T) / 4 <= comm::peer_words, "4-byte words");
  constexpr int words = sizeof(T) / 4;
  using Store = unsigned long long;
  const unsigned long long start = peer_detail::nanoseconds();
  const Store tag = (epoch & 0xffffffffull) << 32;
  const int generation = static_cast<int>(epoch & 1u) * p.size;
  const auto slot = [&](int sender, int i) {
    return ((generation + sender) * comm::peer_max_values + i) * comm::peer_words;
  };
  for (int q = 0; q < p.size; ++q) {
    if (q == p.rank) continue;
    volatile Store* to = p.peer_inbox[q] + slot(p.rank, 0);
    for (int i = 0; i < count; ++i) {
      unsigned int w[words];
      memcpy(w, values + i, sizeof(T));
      for (int k = 0; k < words; ++k) to[i * comm::peer_words + k] = tag | w[k];
    }
  }
  // Wait for every peer's words of this epoch: one pass reads them all, its
  // loads not waiting on each other, until a pass finds them all there.
  const volatile Store* inbox = p.inbox;
  for (bool arrived = false; !arrived;) {
    arrived = true;
    for (int q = 0; q < p.size; ++q)
      for (int i = 0; q != p.rank && i < count; ++i)
        for (int k = 0; k < words; ++k)
          arrived &= (inbox[slot(q, i) + k] & 0xffffffff00000000ull) == tag;
    if (!arrived && peer_detail::nanoseconds() - start > peer_detail::patience_ns) __trap();
  }
  for (int i = 0; i < count; ++i) {
    T s = 0;
    for (int q = 0; q < p.size; ++q) {
      if (q == p.rank) {
        s += values[i];
        continue;
      }
      unsigned int w[words];
      for (int k = 0; k < words; ++k) w[k] = static_cast<unsigned int>(inbox[slot(q, i) + k]);
      T v;
      memcpy(&v, w, sizeof(T));
      s += v;
    }
    values[i] = s;
  }
  atomicAdd(p.spent_ns, peer_detail::nanoseconds() - start);
#else
  (void)p;
  (void)values;
  (void)count;
  (void)epoch;
#endif
}

namespace device_comm_detail {
// One GPU thread sums `count` values over the ranks through peer memory.
template <class T>
void peer_sum_in_place(T* values, std::int64_t count) {
  const comm::PeerSlots slots = comm::peer_slots();
  const unsigned long long epoch = comm::next_peer_epoch();
  const int n = static_cast<int>(count);
  Kokkos::parallel_for(
      "karma::comm::peer_sum", Kokkos::RangePolicy<>(0, 1),
      KOKKOS_LAMBDA(const int) { peer_sum(slots, values, n, epoch); });
}

}  // namespace device_comm_detail

// Sums `count` values at `values` (the backend's memory) over the ranks, in
// place. With NCCL the host does not wait: the sum is ordered on the stream
// before the next kernel; a few values go through peer memory where the
// GPUs reach each other's (karma/peer_memory.hpp).
template <class T>
void sum_over_ranks(T* values, std::int64_t count) {
  namespace d = device_comm_detail;
  if (comm::size() == 1 || count == 0) return;
  if (comm::path().path == comm::Path::nccl) {
    if (comm::peer_sums<T>(count))
      d::peer_sum_in_place(values, count);
    else
      comm::nccl_sum_in_place(values, count);
    return;
  }
  const comm::Counting counting;
  if (comm::path().path == comm::Path::host_staging) {
    T* host = d::staging<T>(count);
    d::copy(host, values, count, true);
    comm::sum_in_place(host, count);
    d::copy(values, host, count, false);
  } else {  // host memory, or an MPI that reads device memory
    Kokkos::fence();
    comm::sum_in_place(values, count);
  }
}

// `full` (the backend's memory) holds every rank's block of counts[r]
// values in rank order; this rank's is filled, on return all are.
template <class T>
void gather_over_ranks(T* full, const std::vector<std::int64_t>& counts) {
  namespace d = device_comm_detail;
  if (comm::size() == 1) return;
  if (comm::path().path == comm::Path::nccl) {
    comm::nccl_allgatherv_in_place(full, counts);
    return;
  }
  const comm::Counting counting;
  if (comm::path().path == comm::Path::host_staging) {
    std::int64_t total = 0, mine = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (static_cast<int>(r) == comm::rank()) mine = total;
      total += counts[r];
    }
    T* host = d::staging<T>(total);
    d::copy(host + mine, full + mine, counts[static_cast<std::size_t>(comm::rank())], true);
    comm::allgatherv_in_place(host, counts);
    d::copy(full, host, total, false);
  } else {
    Kokkos::fence();
    comm::allgatherv_in_place(full, counts);
  }
}

// Point-to-point exchange of ints in the backend's memory with `peers`, as
// comm::exchange; the receive buffer holds the result on return (ordered on
// the stream with NCCL).
inline void exchange_with_peers(const std::vector<int>& peers, const int* send,
                                const std::vector<std::int64_t>& send_offsets,
                                const std::vector<std::int64_t>& send_counts, int* recv,
                                const std::vector<std::int64_t>& recv_offsets,
                                const std::vector<std::int64_t>& recv_counts) {
  namespace d = device_comm_detail;
  if (peers.empty()) return;
  if (comm::path().path == comm::Path::nccl) {
    comm::nccl_exchange(peers, send, send_offsets, send_counts, recv, recv_offsets, recv_counts);
    return;
  }
  const comm::Counting counting;
  if (comm::path().path == comm::Path::host_staging) {
    std::int64_t sends = 0, receives = 0;
    for (std::size_t k = 0; k < peers.size(); ++k) {
      sends = std::max(sends, send_offsets[k] + send_counts[k]);
      receives = std::max(receives, recv_offsets[k] + recv_counts[k]);
    }
    int* host_send = d::staging<int>(sends + receives);
    int* host_recv = host_send + sends;
    d::copy(host_send, send, sends, true);
    comm::exchange(peers, host_send, send_offsets, send_counts, host_recv, recv_offsets,
                   recv_counts);
    d::copy(recv, host_recv, receives, false);
  } else {
    Kokkos::fence();  // the kernels that wrote what MPI reads
    comm::exchange(peers, send, send_offsets, send_counts, recv, recv_offsets, recv_counts);
  }
}

}  // namespace karma
