// The MPI calls the core needs, as free functions that are trivial in a
// build without MPI (KARMA_ENABLE_MPI=OFF), so no mini-app needs #ifdefs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::comm {

void init(int* argc, char*** argv);
void finalize();
bool initialized();

int rank();
int size();
inline bool is_root() { return rank() == 0; }

// Ranks sharing a node (MPI_Comm_split_type shared): device selection and
// memory checks are per node.
int local_rank();
int local_size();
int node_count();

void barrier();
[[noreturn]] void abort(int exit_code);
// True when every rank calls this within `seconds` of the first; false on
// the ranks that waited longer, which then must abort: the others are
// elsewhere (in a collective, or still computing). Safe to call while other
// ranks are inside a collective of this module.
bool all_arrive_within(double seconds);

double max(double v);
double min(double v);
double sum(double v);
std::int64_t sum(std::int64_t v);
std::int64_t max(std::int64_t v);
std::int64_t min(std::int64_t v);
bool all(bool v);
// Element-wise sum over ranks modulo 2^64, in place: checksums that are
// wrapping sums of hashes, split over ranks, add up to the whole one.
void sum_wrapping_in_place(std::uint64_t* values, std::int64_t count);
// Element-wise maximum over ranks, in place.
void max_inplace(std::vector<double>& v);
// Element-wise sum over ranks of `count` values in host memory, in place:
// one MPI_Allreduce for the whole array (a multi-dot of k values costs one
// collective, not k). Returns at once with one rank.
void sum_in_place(float* values, std::int64_t count);
void sum_in_place(double* values, std::int64_t count);
void sum_in_place(long double* values, std::int64_t count);
// `full` (host memory) holds every rank's block of counts[r] elements, in
// rank order; on entry this rank's block is filled, on return all are
// (MPI_Allgatherv in place, counted in elements: up to 2^31 - 1 a block).
void allgatherv_in_place(float* full, const std::vector<std::int64_t>& counts);
void allgatherv_in_place(double* full, const std::vector<std::int64_t>& counts);
// Every rank's string, on every rank, in rank order.
std::vector<std::string> allgather(const std::string& s);
// Point-to-point exchange of ints with `peers`, a symmetric relation (each
// peer of this rank lists this rank): this rank sends send_counts[k] ints
// from send + send_offsets[k] to peers[k] and receives recv_counts[k] into
// recv + recv_offsets[k]. `send` and `recv` may be device memory when
// gpu_aware() says the MPI reads it. exchange_counts: each peer's count.
std::vector<std::int64_t> exchange_counts(const std::vector<int>& peers,
                                          const std::vector<std::int64_t>& send_counts);
void exchange(const std::vector<int>& peers, const int* send,
              const std::vector<std::int64_t>& send_offsets,
              const std::vector<std::int64_t>& send_counts, int* recv,
              const std::vector<std::int64_t>& recv_offsets,
              const std::vector<std::int64_t>& recv_counts);
// Whether this MPI sends from and receives into CUDA device memory: Open
// MPI's MPIX_Query_cuda_support() at run time, where <mpi-ext.h> declares
// it; false where it cannot say (other MPIs, no MPI). gpu_aware_how() says
// how the answer was found, for the results.
bool gpu_aware();
std::string gpu_aware_how();
// Sum over the ranks of this node that share device_id.
std::int64_t sum_on_device(std::int64_t v, int device_id);

std::string library_version();  // "none" without MPI

// How device data moves between ranks (the deck's run.comm): "host memory"
// (a host backend: MPI reads the data where it is), "host staging" (copied
// through page-locked host memory), "gpu-aware MPI" (MPI reads and writes
// device memory), "nccl" (NCCL, ordered on the device's stream).
enum class Path { host_memory, host_staging, gpu_aware_mpi, nccl };
struct PathChoice {
  Path path = Path::host_memory;
  std::string name = "host memory";
  std::string requested = "auto";
  std::string why;        // why this path: what was asked and what is available
  bool available = true;  // false: the path asked for is not on this machine (why says so)
  // nccl: how sums of a few values go (karma/peer_memory.hpp), and why.
  std::string small_sums;
};
// Collective, once after the device is chosen. `requested`: auto,
// host-staging, gpu-aware-mpi or nccl; `device_memory`: the backend's
// memory is not host memory; `stream`: the backend's stream (cudaStream_t),
// for NCCL. auto takes NCCL where built, else a GPU-aware MPI, else host
// staging; a path asked for by name that this machine lacks comes back
// with available false.
// `shared_devices`: some ranks share a GPU, which NCCL refuses.
PathChoice choose_path(const std::string& requested, bool device_memory, bool shared_devices,
                       void* stream);
const PathChoice& path();
// Whether this build has NCCL, and the version it was built with.
bool nccl_built();
std::string nccl_version();
// NCCL's operations on device memory, ordered on the chosen stream (the
// host does not wait); only with path() == nccl.
void nccl_sum_in_place(float* values, std::int64_t count);
void nccl_sum_in_place(double* values, std::int64_t count);
void nccl_allgatherv_in_place(float* full, const std::vector<std::int64_t>& counts);
void nccl_allgatherv_in_place(double* full, const std::vector<std::int64_t>& counts);
void nccl_exchange(const std::vector<int>& peers, const int* send,
                   const std::vector<std::int64_t>& send_offsets,
                   const std::vector<std::int64_t>& send_counts, int* recv,
                   const std::vector<std::int64_t>& recv_offsets,
                   const std::vector<std::int64_t>& recv_counts);

// Seconds this rank has spent communicating and waiting for its peers since
// the start: the host's time inside this module's exchanges and reductions
// (the outermost call counts, see Counting), plus the device's time in NCCL
// operations, timed by events on the stream, and in sums through peer
// memory (karma/peer_memory.hpp); call it with the device idle.
double seconds_spent();
// Counts the time from construction to destruction as communication, unless
// an enclosing Counting already does (a staged exchange: copies and MPI).
class Counting {
 public:
  Counting();
  ~Counting();
  Counting(const Counting&) = delete;
  Counting& operator=(const Counting&) = delete;

 private:
  double start_ = -1;
};

}  // namespace karma::comm
