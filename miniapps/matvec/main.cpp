// karma-matvec: the deck (matvec_deck.hpp) -> the product of its format,
// each wiring A, x and y -> its variants -> measure -> verify -> report:
// dense.cpp (matvec_kernels.hpp's kernels beside the vendor's GEMV,
// matvec_blas.hpp) or csr.cpp (csr_kernels.hpp); what both share is
// matvec_app.hpp, their check of y matvec_verify.hpp.
#include "matvec_csr.hpp"
#include "matvec_deck.hpp"
#include "matvec_dense.hpp"

#include "karma/app.hpp"
#include "karma_code_table.hpp"

namespace {

using namespace karma;
using namespace karma::matvec;

Report run_matvec(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  if (cfg.csr) return run_csr_product(ctx, cfg);
  return run_dense_product(ctx, cfg);
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"matvec",
                "y = A x for a dense A in either layout (Kokkos variants beside BLAS GEMV) or a "
                "sparse A in compressed rows",
                matvec_schema(), run_matvec, &generated::code_table};
  return run_main(argc, argv, app);
}
