#include "matvec_comm.hpp"

#include "karma/comm.hpp"
#include "karma/error.hpp"

#include <climits>
#include <string>

#ifdef KARMA_HAVE_MPI
#include <mpi.h>
#endif

namespace karma::matvec::exchange {

#ifdef KARMA_HAVE_MPI

namespace {

MPI_Datatype type_for(std::size_t element_bytes) {
  return element_bytes == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE;
}

int mpi_count(std::int64_t v) {
  if (v > INT_MAX)
    throw Error(exit_runtime_error,
                "an MPI message of " + std::to_string(v) + " elements exceeds 2^31 - 1");
  return static_cast<int>(v);
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw Error(exit_runtime_error, std::string(what) + " failed");
}

}  // namespace

void allgatherv_in_place(void* full, const std::vector<std::int64_t>& counts,
                         std::size_t element_bytes) {
  if (comm::size() == 1) return;
  std::vector<int> c(counts.size()), displacements(counts.size());
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    c[r] = mpi_count(counts[r]);
    displacements[r] = mpi_count(offset);
    offset += counts[r];
  }
  const MPI_Datatype t = type_for(element_bytes);
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, t, full, c.data(), displacements.data(), t, MPI_COMM_WORLD),
        "MPI_Allgatherv of x");
}

void allreduce_sum_in_place(void* data, std::int64_t count, std::size_t element_bytes) {
  if (comm::size() == 1) return;
  check(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), type_for(element_bytes), MPI_SUM,
                      MPI_COMM_WORLD),
        "MPI_Allreduce of y");
}

#else

void allgatherv_in_place(void*, const std::vector<std::int64_t>&, std::size_t) {}
void allreduce_sum_in_place(void*, std::int64_t, std::size_t) {}

#endif

}  // namespace karma::matvec::exchange
