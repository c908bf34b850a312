#include "mgs_comm.hpp"

#include "karma/comm.hpp"
#include "karma/error.hpp"

#ifdef KARMA_HAVE_MPI
#include <mpi.h>
#endif

namespace karma::mgs {

namespace {

#ifdef KARMA_HAVE_MPI
template <class T>
void allreduce(T* values, int count, MPI_Datatype type) {
  if (comm::size() == 1 || count == 0) return;
  if (MPI_Allreduce(MPI_IN_PLACE, values, count, type, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    throw Error(exit_runtime_error, "MPI_Allreduce failed");
}
#endif

}  // namespace

#ifdef KARMA_HAVE_MPI
void sum_over_ranks(float* values, int count) { allreduce(values, count, MPI_FLOAT); }
void sum_over_ranks(double* values, int count) { allreduce(values, count, MPI_DOUBLE); }
void sum_over_ranks(long double* values, int count) { allreduce(values, count, MPI_LONG_DOUBLE); }
#else
void sum_over_ranks(float*, int) {}
void sum_over_ranks(double*, int) {}
void sum_over_ranks(long double*, int) {}
#endif

}  // namespace karma::mgs
