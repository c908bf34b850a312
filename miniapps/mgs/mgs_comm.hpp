// In-place sums over MPI ranks of whole arrays: one MPI_Allreduce per call,
// so a multi-dot of k values costs one collective, not k. Compiled as plain
// C++ in its own library (mgs_comm.cpp) so that mpi.h never reaches nvcc.
// With one rank it returns at once and makes no MPI call.
#pragma once

namespace karma::mgs {

void sum_over_ranks(float* values, int count);
void sum_over_ranks(double* values, int count);
void sum_over_ranks(long double* values, int count);

}  // namespace karma::mgs
