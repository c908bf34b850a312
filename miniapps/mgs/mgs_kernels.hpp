// Gram-Schmidt QR of a tall N x m multivector A, distributed by rows, in
// Kokkos: A is overwritten by Q, R (m x m) is the same on every rank.
//
//   mgs        the seed paper's modified Gram-Schmidt: level-1 kernels (dot,
//              axpy, norm, scale), m^2 + m launches, one reduction each;
//   mgs-fused  the same arithmetic, right-looking: one kernel per column
//              normalises q_i, updates every later column and computes the
//              next column's dots with them (m + 1 launches);
//   cgs2       classical Gram-Schmidt twice, two multi-dot kernels per
//              column (2m launches).
//
// Every reduction is a local parallel_reduce followed by one sum over the
// ranks. With results kept on the device, reductions write straight into
// device memory, their final() turns sums into entries of R there, and the
// next kernel reads them there: on one rank the host never waits inside a
// factorization (the seed paper's point). Over several ranks the sums are
// added up in device memory first (sum_over_ranks: NCCL on the stream, or a
// GPU-aware MPI), then final() runs in one thread. In host mode each
// reduction lands in host-visible memory, is summed over ranks by MPI, and
// the coefficients the next kernel needs are copied back to the device,
// stream-ordered.
#pragma once

// The kernels by family: mgs_basics.hpp (algorithms, tally, rows, policies),
// mgs_level1.hpp (mgs), mgs_multi.hpp (multi-dot reductions), mgs_fused.hpp
// (mgs-fused), mgs_cgs2.hpp (cgs2), mgs_factor.hpp (workspace and the
// factorizations).
#include "mgs_basics.hpp"
#include "mgs_cgs2.hpp"
#include "mgs_factor.hpp"
#include "mgs_fused.hpp"
#include "mgs_level1.hpp"
#include "mgs_multi.hpp"
