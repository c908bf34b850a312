// karma-matvec's dense product (dense.cpp), as main.cpp calls it.
#pragma once

#include "matvec_deck.hpp"

#include "karma/app.hpp"
#include "karma/harness.hpp"

namespace karma::matvec {

// Runs the product y = A x (or A^T x) of format dense that `cfg` describes
// (layout, precision, variants, BLAS) and reports it: kernels, checks,
// problem, summary.
Report run_dense_product(const Context& ctx, const Config& cfg);

}  // namespace karma::matvec
