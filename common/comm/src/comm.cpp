#include "karma/comm.hpp"

#include "karma/error.hpp"
#include "karma/peer_memory.hpp"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#ifdef KARMA_HAVE_MPI
#include <mpi.h>
// Open MPI declares MPIX_Query_cuda_support here (its CUDA-aware build).
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#ifdef KARMA_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace karma::comm {

namespace {
int counting_depth = 0;
double host_seconds = 0;
PathChoice chosen;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Counting::Counting() {
  if (counting_depth++ == 0) start_ = now();
}

Counting::~Counting() {
  if (--counting_depth == 0) host_seconds += now() - start_;
}

const PathChoice& path() { return chosen; }

#ifdef KARMA_HAVE_MPI

namespace {
MPI_Comm node_comm = MPI_COMM_NULL;
// Only for all_arrive_within: its barrier can never match a collective that
// other ranks are in on MPI_COMM_WORLD.
MPI_Comm failure_comm = MPI_COMM_NULL;
int cached_rank = 0, cached_size = 1, cached_local_rank = 0, cached_local_size = 1,
    cached_nodes = 1;
bool we_initialized = false;
void nccl_shutdown();
}  // namespace

void init(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    MPI_Init(argc, argv);
    we_initialized = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &cached_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &cached_size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, cached_rank, MPI_INFO_NULL, &node_comm);
  MPI_Comm_rank(node_comm, &cached_local_rank);
  MPI_Comm_size(node_comm, &cached_local_size);
  MPI_Comm_dup(MPI_COMM_WORLD, &failure_comm);
  int leader = cached_local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &cached_nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

void finalize() {
  close_peer_slots();
  nccl_shutdown();
  if (node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
  if (failure_comm != MPI_COMM_NULL) MPI_Comm_free(&failure_comm);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (we_initialized && !finalized) MPI_Finalize();
}

bool initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

int rank() { return cached_rank; }
int size() { return cached_size; }
int local_rank() { return cached_local_rank; }
int local_size() { return cached_local_size; }
int node_count() { return cached_nodes; }

void barrier() {
  if (cached_size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

void abort(int exit_code) {
  if (cached_size > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

bool all_arrive_within(double seconds) {
  if (cached_size == 1) return true;
  MPI_Request request;
  MPI_Ibarrier(failure_comm, &request);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    // The request stays pending: the caller aborts the job next.
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

namespace {
template <class T>
T reduce(T v, MPI_Datatype type, MPI_Op op) {
  if (cached_size == 1) return v;
  const Counting counting;
  T out{};
  MPI_Allreduce(&v, &out, 1, type, op, MPI_COMM_WORLD);
  return out;
}
}  // namespace

double max(double v) { return reduce(v, MPI_DOUBLE, MPI_MAX); }
double min(double v) { return reduce(v, MPI_DOUBLE, MPI_MIN); }
double sum(double v) { return reduce(v, MPI_DOUBLE, MPI_SUM); }
std::int64_t sum(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_SUM); }
std::int64_t max(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_MAX); }
std::int64_t min(std::int64_t v) { return reduce(v, MPI_INT64_T, MPI_MIN); }
bool all(bool v) { return reduce(v ? 1 : 0, MPI_INT, MPI_MIN) != 0; }

void max_inplace(std::vector<double>& v) {
  if (cached_size == 1 || v.empty()) return;
  const Counting counting;
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
}

namespace {
int message_count(std::int64_t count) {
  if (count > std::numeric_limits<int>::max())
    throw Error(exit_runtime_error,
                "an MPI message of " + std::to_string(count) + " elements exceeds 2^31 - 1");
  return static_cast<int>(count);
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw Error(exit_runtime_error, std::string(what) + " failed");
}

template <class T>
void sum_array(T* values, std::int64_t count, MPI_Datatype type) {
  if (cached_size == 1 || count == 0) return;
  const Counting counting;
  check(MPI_Allreduce(MPI_IN_PLACE, values, message_count(count), type, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce of an array");
}
template <class T>
void gather_array(T* full, const std::vector<std::int64_t>& counts, MPI_Datatype type) {
  if (cached_size == 1) return;
  const Counting counting;
  std::vector<int> sizes(counts.size()), displacements(counts.size());
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    sizes[r] = message_count(counts[r]);
    displacements[r] = message_count(offset);
    offset += counts[r];
  }
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, type, full, sizes.data(), displacements.data(), type,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
}
}  // namespace

void sum_in_place(float* values, std::int64_t count) { sum_array(values, count, MPI_FLOAT); }
void sum_in_place(double* values, std::int64_t count) { sum_array(values, count, MPI_DOUBLE); }
void sum_in_place(long double* values, std::int64_t count) {
  sum_array(values, count, MPI_LONG_DOUBLE);
}

void allgatherv_in_place(float* full, const std::vector<std::int64_t>& counts) {
  gather_array(full, counts, MPI_FLOAT);
}
void allgatherv_in_place(double* full, const std::vector<std::int64_t>& counts) {
  gather_array(full, counts, MPI_DOUBLE);
}

std::vector<std::string> allgather(const std::string& s) {
  if (cached_size == 1) return {s};
  const Counting counting;
  int length = static_cast<int>(s.size());
  std::vector<int> lengths(cached_size), offsets(cached_size, 0);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < cached_size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(s.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < cached_size; ++r) out.push_back(all.substr(offsets[r], lengths[r]));
  return out;
}

void sum_wrapping_in_place(std::uint64_t* values, std::int64_t count) {
  // Unsigned addition wraps, in MPI's reduction as in C.
  sum_array(values, count, MPI_UINT64_T);
}

std::vector<std::int64_t> exchange_counts(const std::vector<int>& peers,
                                          const std::vector<std::int64_t>& send_counts) {
  const Counting counting;
  std::vector<std::int64_t> recv(peers.size(), 0);
  std::vector<MPI_Request> requests(2 * peers.size());
  for (std::size_t k = 0; k < peers.size(); ++k) {
    MPI_Irecv(&recv[k], 1, MPI_INT64_T, peers[k], 71, MPI_COMM_WORLD, &requests[2 * k]);
    MPI_Isend(&send_counts[k], 1, MPI_INT64_T, peers[k], 71, MPI_COMM_WORLD, &requests[2 * k + 1]);
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall of the exchanged counts");
  return recv;
}

void exchange(const std::vector<int>& peers, const int* send,
              const std::vector<std::int64_t>& send_offsets,
              const std::vector<std::int64_t>& send_counts, int* recv,
              const std::vector<std::int64_t>& recv_offsets,
              const std::vector<std::int64_t>& recv_counts) {
  const Counting counting;
  std::vector<MPI_Request> requests;
  requests.reserve(2 * peers.size());
  for (std::size_t k = 0; k < peers.size(); ++k) {
    if (recv_counts[k] == 0) continue;
    requests.emplace_back();
    MPI_Irecv(recv + recv_offsets[k], message_count(recv_counts[k]), MPI_INT, peers[k], 72,
              MPI_COMM_WORLD, &requests.back());
  }
  for (std::size_t k = 0; k < peers.size(); ++k) {
    if (send_counts[k] == 0) continue;
    requests.emplace_back();
    MPI_Isend(send + send_offsets[k], message_count(send_counts[k]), MPI_INT, peers[k], 72,
              MPI_COMM_WORLD, &requests.back());
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall of an exchange");
}

bool gpu_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string gpu_aware_how() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return std::string("MPIX_Query_cuda_support() = ") + (gpu_aware() ? "1" : "0");
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "this Open MPI was built without CUDA support (MPIX_CUDA_AWARE_SUPPORT = 0)";
#else
  return "this MPI's headers declare no MPIX_Query_cuda_support";
#endif
}

std::int64_t sum_on_device(std::int64_t v, int device_id) {
  if (cached_size == 1) return v;
  MPI_Comm device_comm;
  MPI_Comm_split(node_comm, device_id < 0 ? 0 : device_id, cached_local_rank, &device_comm);
  std::int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, device_comm);
  MPI_Comm_free(&device_comm);
  return out;
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// NCCL: one communicator over MPI_COMM_WORLD, made when the path is chosen.
#ifdef KARMA_HAVE_NCCL
namespace {
ncclComm_t nccl_comm = nullptr;
cudaStream_t nccl_stream = nullptr;
// Start and stop events of each NCCL operation since the last
// seconds_spent(): the device's time in them, read once it is idle.
std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events;
std::size_t events_used = 0;
double nccl_seconds = 0;

void nccl_check(ncclResult_t code, const char* what) {
  if (code != ncclSuccess)
    throw Error(exit_runtime_error, std::string(what) + " failed: " + ncclGetErrorString(code));
}

void cuda_check(cudaError_t code, const char* what) {
  if (code != cudaSuccess)
    throw Error(exit_runtime_error, std::string(what) + " failed: " + cudaGetErrorString(code));
}

void nccl_shutdown() {
  if (nccl_comm != nullptr) ncclCommDestroy(nccl_comm);
  nccl_comm = nullptr;
}

void nccl_init(void* stream) {
  // NVLink multicast (NVLS) stays off unless the environment says otherwise:
  // the suite's messages are small, and on shared nodes it can take GPUs out
  // of service.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  ncclUniqueId id;
  if (cached_rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  nccl_check(ncclCommInitRank(&nccl_comm, cached_size, id, cached_rank), "ncclCommInitRank");
  nccl_stream = static_cast<cudaStream_t>(stream);
}

// Events around one operation, recorded on the stream.
class Timed {
 public:
  Timed() {
    if (events_used == events.size()) {
      events.emplace_back();
      cuda_check(cudaEventCreate(&events.back().first), "cudaEventCreate");
      cuda_check(cudaEventCreate(&events.back().second), "cudaEventCreate");
    }
    pair_ = events[events_used++];
    cuda_check(cudaEventRecord(pair_.first, nccl_stream), "cudaEventRecord");
  }
  ~Timed() { cudaEventRecord(pair_.second, nccl_stream); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  std::pair<cudaEvent_t, cudaEvent_t> pair_;
};

double settle_nccl_seconds() {
  for (std::size_t k = 0; k < events_used; ++k) {
    float ms = 0;
    cuda_check(cudaEventSynchronize(events[k].second), "cudaEventSynchronize");
    cuda_check(cudaEventElapsedTime(&ms, events[k].first, events[k].second),
               "cudaEventElapsedTime");
    nccl_seconds += 1e-3 * ms;
  }
  events_used = 0;
  return nccl_seconds;
}

template <class T>
ncclDataType_t nccl_type() {
  return std::is_same_v<T, float> ? ncclFloat32 : ncclFloat64;
}

template <class T>
void nccl_sum(T* values, std::int64_t count) {
  if (cached_size == 1 || count == 0) return;
  const Timed timed;
  nccl_check(ncclAllReduce(values, values, static_cast<std::size_t>(count), nccl_type<T>(), ncclSum,
                           nccl_comm, nccl_stream),
             "ncclAllReduce");
}

template <class T>
void nccl_gather(T* full, const std::vector<std::int64_t>& counts) {
  if (cached_size == 1) return;
  const Timed timed;
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    // Each rank's block, broadcast from its owner in place.
    nccl_check(ncclBroadcast(full + offset, full + offset, static_cast<std::size_t>(counts[r]),
                             nccl_type<T>(), static_cast<int>(r), nccl_comm, nccl_stream),
               "ncclBroadcast");
    offset += counts[r];
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
}
}  // namespace

bool nccl_built() { return true; }
std::string nccl_version() {
  return std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
         std::to_string(NCCL_PATCH);
}
void nccl_sum_in_place(float* values, std::int64_t count) { nccl_sum(values, count); }
void nccl_sum_in_place(double* values, std::int64_t count) { nccl_sum(values, count); }
void nccl_allgatherv_in_place(float* full, const std::vector<std::int64_t>& counts) {
  nccl_gather(full, counts);
}
void nccl_allgatherv_in_place(double* full, const std::vector<std::int64_t>& counts) {
  nccl_gather(full, counts);
}
void nccl_exchange(const std::vector<int>& peers, const int* send,
                   const std::vector<std::int64_t>& send_offsets,
                   const std::vector<std::int64_t>& send_counts, int* recv,
                   const std::vector<std::int64_t>& recv_offsets,
                   const std::vector<std::int64_t>& recv_counts) {
  const Timed timed;
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t k = 0; k < peers.size(); ++k) {
    if (recv_counts[k] > 0)
      nccl_check(ncclRecv(recv + recv_offsets[k], static_cast<std::size_t>(recv_counts[k]),
                          ncclInt32, peers[k], nccl_comm, nccl_stream),
                 "ncclRecv");
    if (send_counts[k] > 0)
      nccl_check(ncclSend(send + send_offsets[k], static_cast<std::size_t>(send_counts[k]),
                          ncclInt32, peers[k], nccl_comm, nccl_stream),
                 "ncclSend");
  }
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
}
#else
namespace {
void nccl_shutdown() {}
void nccl_init(void*) {}
double settle_nccl_seconds() { return 0; }
}  // namespace
#endif

double seconds_spent() { return host_seconds + settle_nccl_seconds() + peer_seconds(); }

PathChoice choose_path(const std::string& requested, bool device_memory, bool shared_devices,
                       void* stream) {
  PathChoice c;
  c.requested = requested;
  const std::string mpi_says = gpu_aware_how();
  const bool nccl_usable = nccl_built() && !shared_devices;
  const std::string nccl_says = !nccl_built() ? "this build has no NCCL (none found at build time)"
                                : shared_devices
                                    ? "NCCL needs a GPU a rank, and ranks share GPUs here"
                                    : "this build has NCCL " + nccl_version();
  if (!device_memory) {
    c.path = Path::host_memory;
    c.name = "host memory";
    c.why = "the backend's memory is host memory: MPI reads it where it is";
    if (requested == "nccl" || requested == "gpu-aware-mpi")
      c.why = requested + " moves device memory, and this backend's memory is host memory";
    c.available = requested == "auto" || requested == "host-staging";
  } else if (requested == "nccl" || (requested == "auto" && nccl_usable)) {
    c.path = Path::nccl;
    c.name = "nccl";
    c.why = nccl_says + (requested == "auto" ? " (auto takes NCCL first)" : "");
    if (!nccl_usable) c.why = "nccl, but " + nccl_says;
    c.available = nccl_usable;
  } else if (requested == "gpu-aware-mpi" || (requested == "auto" && gpu_aware())) {
    c.path = Path::gpu_aware_mpi;
    c.name = "gpu-aware MPI";
    c.why = mpi_says + (requested == "auto" ? "; " + nccl_says : "");
    if (!gpu_aware()) c.why = "gpu-aware-mpi, but " + mpi_says;
    c.available = gpu_aware();
  } else {
    c.path = Path::host_staging;
    c.name = "host staging";
    c.why = requested == "auto" ? nccl_says + "; " + mpi_says : "asked for (run.comm)";
  }
  if (c.path == Path::nccl && c.available && cached_size > 1) {
    nccl_init(stream);
    const std::string peers = open_peer_slots(cached_rank, cached_size, cached_local_size);
    c.small_sums = peer_slots().available ? peers : "nccl (" + peers + ")";
  }
  chosen = c;
  return c;
}

#else  // a single-rank suite

void init(int*, char***) {}
void finalize() {}
bool initialized() { return false; }
int rank() { return 0; }
int size() { return 1; }
int local_rank() { return 0; }
int local_size() { return 1; }
int node_count() { return 1; }
void barrier() {}
void abort(int exit_code) { std::exit(exit_code); }
double max(double v) { return v; }
double min(double v) { return v; }
double sum(double v) { return v; }
std::int64_t sum(std::int64_t v) { return v; }
std::int64_t max(std::int64_t v) { return v; }
std::int64_t min(std::int64_t v) { return v; }
bool all(bool v) { return v; }
void sum_wrapping_in_place(std::uint64_t*, std::int64_t) {}
std::vector<std::int64_t> exchange_counts(const std::vector<int>& peers,
                                          const std::vector<std::int64_t>&) {
  return std::vector<std::int64_t>(peers.size(), 0);  // a single rank has no peers
}
void exchange(const std::vector<int>&, const int*, const std::vector<std::int64_t>&,
              const std::vector<std::int64_t>&, int*, const std::vector<std::int64_t>&,
              const std::vector<std::int64_t>&) {}
bool gpu_aware() { return false; }
std::string gpu_aware_how() { return "built without MPI"; }
void max_inplace(std::vector<double>&) {}
void sum_in_place(float*, std::int64_t) {}
void sum_in_place(double*, std::int64_t) {}
void sum_in_place(long double*, std::int64_t) {}
void allgatherv_in_place(float*, const std::vector<std::int64_t>&) {}
void allgatherv_in_place(double*, const std::vector<std::int64_t>&) {}
std::vector<std::string> allgather(const std::string& s) { return {s}; }
bool all_arrive_within(double) { return true; }
std::int64_t sum_on_device(std::int64_t v, int) { return v; }
std::string library_version() { return "none"; }
double seconds_spent() { return host_seconds; }
PathChoice choose_path(const std::string& requested, bool device_memory, bool, void*) {
  PathChoice c;
  c.requested = requested;
  // One rank: nothing moves between ranks, whatever was asked.
  c.path = device_memory ? Path::host_staging : Path::host_memory;
  c.name = device_memory ? "host staging" : "host memory";
  c.why = "built without MPI: one rank, nothing to exchange";
  chosen = c;
  return c;
}

#endif

// A build without NCCL (or without MPI, which NCCL's start needs).
#if !defined(KARMA_HAVE_MPI) || !defined(KARMA_HAVE_NCCL)
namespace {
[[noreturn]] void no_nccl() {
  throw Error(exit_runtime_error, "an NCCL operation in a build without NCCL");
}
}  // namespace
bool nccl_built() { return false; }
std::string nccl_version() { return "none"; }
void nccl_sum_in_place(float*, std::int64_t) { no_nccl(); }
void nccl_sum_in_place(double*, std::int64_t) { no_nccl(); }
void nccl_allgatherv_in_place(float*, const std::vector<std::int64_t>&) { no_nccl(); }
void nccl_allgatherv_in_place(double*, const std::vector<std::int64_t>&) { no_nccl(); }
void nccl_exchange(const std::vector<int>&, const int*, const std::vector<std::int64_t>&,
                   const std::vector<std::int64_t>&, int*, const std::vector<std::int64_t>&,
                   const std::vector<std::int64_t>&) {
  no_nccl();
}
#endif

}  // namespace karma::comm
