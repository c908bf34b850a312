#include "karma/comm.hpp"

#include "karma/error.hpp"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#ifdef KARMA_HAVE_MPI
#include <mpi.h>
// Open MPI declares MPIX_Query_cuda_support here (its CUDA-aware build).
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace karma::comm {

#ifdef KARMA_HAVE_MPI

namespace {
MPI_Comm node_comm = MPI_COMM_NULL;
// Only for all_arrive_within: its barrier can never match a collective that
// other ranks are in on MPI_COMM_WORLD.
MPI_Comm failure_comm = MPI_COMM_NULL;
int cached_rank = 0, cached_size = 1, cached_local_rank = 0, cached_local_size = 1,
    cached_nodes = 1;
bool we_initialized = false;
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
  check(MPI_Allreduce(MPI_IN_PLACE, values, message_count(count), type, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce of an array");
}
template <class T>
void gather_array(T* full, const std::vector<std::int64_t>& counts, MPI_Datatype type) {
  if (cached_size == 1) return;
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

#endif

}  // namespace karma::comm
