// karma-matvec's sparse product (csr.cpp), as main.cpp calls it.
#pragma once

#include "matvec_deck.hpp"

#include "karma/app.hpp"
#include "karma/harness.hpp"

namespace karma::matvec {

// Runs the product y = A x of format csr that `cfg` describes (pattern,
// precision, variants) and reports it: kernels, checks, problem, summary.
Report run_csr_product(const Context& ctx, const Config& cfg);

}  // namespace karma::matvec
