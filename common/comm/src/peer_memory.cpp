#include "karma/peer_memory.hpp"

#include "karma/error.hpp"

#include <cstring>
#include <string>
#include <vector>

#if defined(KARMA_HAVE_MPI) && defined(KARMA_HAVE_NCCL)
#include <cuda_runtime.h>
#include <mpi.h>
#endif

namespace karma::comm {

namespace {
PeerSlots slots;
unsigned long long epoch = 0;
}  // namespace

const PeerSlots& peer_slots() { return slots; }
unsigned long long next_peer_epoch() { return ++epoch; }

#if defined(KARMA_HAVE_MPI) && defined(KARMA_HAVE_NCCL)

namespace {
void* own_buffer = nullptr;
// peer_seconds' last read of the device's counter, and the epoch it was at.
double seconds_read = 0;
unsigned long long read_at_epoch = 0;

int rank() { return slots.rank; }
int size() { return slots.size; }
bool all(bool v) {
  int mine = v ? 1 : 0, every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return every != 0;
}

constexpr std::size_t inbox_bytes =
    std::size_t{2} * peer_max_ranks * peer_max_values * peer_words * sizeof(unsigned long long);
// The inbox and the time counter.
constexpr std::size_t own_bytes = inbox_bytes + sizeof(unsigned long long);

// Why this rank's GPU cannot take part ("" when it can): every peer's GPU,
// named by its PCI bus id, visible here and reachable from this one.
std::string peer_access_problem() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "no current GPU";
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return "no PCI bus id";
  std::vector<char> all(sizeof bus * static_cast<std::size_t>(size()));
  MPI_Allgather(bus, sizeof bus, MPI_CHAR, all.data(), sizeof bus, MPI_CHAR, MPI_COMM_WORLD);
  for (int q = 0; q < size(); ++q) {
    if (q == rank()) continue;
    int other = -1, can = 0;
    if (cudaDeviceGetByPCIBusId(&other, &all[sizeof bus * static_cast<std::size_t>(q)]) !=
        cudaSuccess) {
      cudaGetLastError();
      return "rank " + std::to_string(q) + "'s GPU is not visible to rank " +
             std::to_string(rank());
    }
    if (other == device) return "two ranks share a GPU";
    if (cudaDeviceCanAccessPeer(&can, device, other) != cudaSuccess || !can)
      return "GPU " + std::to_string(device) + " cannot reach GPU " + std::to_string(other);
  }
  return "";
}

// This rank's inbox and time counter, zeroed, and their IPC handle; "" or the problem.
std::string allocate_own(cudaIpcMemHandle_t& handle) {
  if (cudaMalloc(&own_buffer, own_bytes) != cudaSuccess) {
    own_buffer = nullptr;
    return "cudaMalloc failed";
  }
  if (cudaMemset(own_buffer, 0, own_bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
    return "cudaMemset failed";
  if (cudaIpcGetMemHandle(&handle, own_buffer) != cudaSuccess) return "no CUDA IPC handle";
  return "";
}

// Every peer's inbox mapped here from the handles of all ranks.
std::string map_peers(const std::vector<cudaIpcMemHandle_t>& handles) {
  for (int q = 0; q < size(); ++q) {
    if (q == rank()) continue;
    void* mapped = nullptr;
    if (cudaIpcOpenMemHandle(&mapped, handles[static_cast<std::size_t>(q)],
                             cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      cudaGetLastError();
      return "cannot map rank " + std::to_string(q) + "'s memory (cudaIpcOpenMemHandle)";
    }
    slots.peer_inbox[q] = static_cast<unsigned long long*>(mapped);
  }
  return "";
}

void release() {
  for (int q = 0; q < peer_max_ranks; ++q) {
    if (slots.peer_inbox[q] != nullptr) cudaIpcCloseMemHandle(slots.peer_inbox[q]);
    slots.peer_inbox[q] = nullptr;
  }
  if (own_buffer != nullptr) cudaFree(own_buffer);
  own_buffer = nullptr;
  slots = PeerSlots{};
  seconds_read = 0;  // slots opened again count from zero
  read_at_epoch = epoch;
}
}  // namespace

std::string open_peer_slots(int this_rank, int ranks, int ranks_here) {
  slots.rank = this_rank;
  slots.size = ranks;
  if (ranks < 2) return "one rank";
  if (ranks > peer_max_ranks) return "more than " + std::to_string(peer_max_ranks) + " ranks";
  if (ranks_here != ranks) return "the ranks span several nodes";
  std::string problem = peer_access_problem();
  cudaIpcMemHandle_t handle{};
  if (problem.empty()) problem = allocate_own(handle);
  std::vector<cudaIpcMemHandle_t> handles(static_cast<std::size_t>(size()));
  MPI_Allgather(&handle, sizeof handle, MPI_BYTE, handles.data(), sizeof handle, MPI_BYTE,
                MPI_COMM_WORLD);
  bool ok = problem.empty();
  if (all(ok)) {
    problem = map_peers(handles);
    ok = problem.empty();
    if (!all(ok)) {
      release();
      return "no peer memory: " +
             (ok ? std::string("another rank could not map the slots") : problem);
    }
  } else {
    release();
    return "no peer memory: " + (ok ? std::string("another rank's GPU cannot take part") : problem);
  }
  slots.available = true;
  slots.inbox = static_cast<unsigned long long*>(own_buffer);
  slots.spent_ns = slots.inbox + inbox_bytes / sizeof(unsigned long long);
  return "peer memory (CUDA IPC): sums of up to " + std::to_string(peer_max_values) +
         " values in one GPU thread";
}

// The counter is read only when a sum has taken an epoch since the last
// read: the copy waits for the device, and contact's phases, timed inside
// its rebuild, would otherwise add two copies each to the rebuild's time.
double peer_seconds() {
  if (!slots.available) return 0;
  if (epoch == read_at_epoch) return seconds_read;
  unsigned long long ns = 0;
  if (cudaMemcpy(&ns, slots.spent_ns, sizeof ns, cudaMemcpyDeviceToHost) != cudaSuccess)
    throw Error(exit_runtime_error, "cudaMemcpy of the peer sums' time failed");
  read_at_epoch = epoch;
  seconds_read = 1e-9 * static_cast<double>(ns);
  return seconds_read;
}

void close_peer_slots() {
  if (!slots.available && own_buffer == nullptr) return;
  cudaDeviceSynchronize();
  MPI_Barrier(MPI_COMM_WORLD);  // no peer writes into this rank's inbox any more
  release();
}

#else

std::string open_peer_slots(int, int, int) {
  return "no peer memory in this build (it comes with NCCL)";
}
void close_peer_slots() {}
double peer_seconds() { return 0; }

#endif

}  // namespace karma::comm
