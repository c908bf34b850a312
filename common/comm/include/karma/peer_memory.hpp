// Sums of a few values over the GPUs of one node, written by one GPU thread
// straight into the other ranks' device memory (CUDA IPC, over NVLink or
// PCIe peer access): a reduction then costs stores across the link instead
// of a collective library's launch and protocol, which decides the time of
// the one-value reductions mgs makes hundreds of.
//
// Each rank owns an inbox of two generations (the parity of the epoch) of
// one slot per sender. Every 4-byte word of a value travels in one 8-byte
// store beside the low 32 bits of the sum's epoch, so a reader knows a word
// has arrived by the word alone: no flag to raise after the values, and no
// system-wide fence between the two. A rank can be at most one sum ahead of
// another (it waits for every peer's value of the current sum), so two
// generations never collide. The GPU thread's part is karma::peer_sum
// (device_comm.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace karma::comm {

inline constexpr int peer_max_ranks = 8;
inline constexpr int peer_max_values = 64;  // a slot holds as many 8-byte values
inline constexpr int peer_words = 2;        // 8-byte stores an 8-byte value takes

struct PeerSlots {
  bool available = false;
  int rank = 0, size = 1;
  // [2][size][peer_max_values][peer_words] stores of (epoch << 32 | word); the peers write it
  unsigned long long* inbox = nullptr;
  unsigned long long* spent_ns = nullptr;  // this GPU's nanoseconds in sums so far
  unsigned long long* peer_inbox[peer_max_ranks] = {};
};

// Collective, after the device is chosen: maps every rank's slots into every
// other rank's address space where all ranks share one node and each GPU
// reaches the others'; returns what it found (the results' words).
std::string open_peer_slots(int rank, int size, int local_size);
// Collective, with every device idle: unmaps and frees them.
void close_peer_slots();
const PeerSlots& peer_slots();
// The epoch of the next sum: the same sequence on every rank (collective).
unsigned long long next_peer_epoch();
// Seconds this GPU has spent in sums through peer memory (writing, waiting
// for the peers, adding), as the sums themselves timed it; device idle.
double peer_seconds();

// Whether a sum of `count` values of T goes through peer memory.
template <class T>
bool peer_sums(std::int64_t count) {
  return peer_slots().available && count > 0 && count <= peer_max_values && sizeof(T) <= 8 &&
         std::is_floating_point<T>::value;
}

}  // namespace karma::comm
