// The two collectives a row-distributed y = A x needs, on host buffers.
// Compiled apart (matvec_comm.cpp, plain C++ with MPI) so that mpi.h never
// reaches the sources nvcc compiles; trivial without MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace karma::matvec::exchange {

// `full` holds every rank's block of counts[r] elements, in rank order; on
// entry this rank's block is filled, on return all are (MPI_Allgatherv in place).
void allgatherv_in_place(void* full, const std::vector<std::int64_t>& counts,
                         std::size_t element_bytes);

// Element-wise sum over ranks of `count` floats or doubles, in place.
void allreduce_sum_in_place(void* data, std::int64_t count, std::size_t element_bytes);

}  // namespace karma::matvec::exchange
