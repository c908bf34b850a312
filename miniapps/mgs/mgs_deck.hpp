// karma-mgs's deck: its keys (the schema --help prints and the run rules
// read) and the run's Config read from them, with the checks that need
// more than one key, the number of ranks or the build's vendors.
#pragma once

#include "mgs_cublas.hpp"
#include "mgs_cuda.hpp"
#include "mgs_kernels.hpp"
#include "mgs_matrix.hpp"
#include "mgs_verify.hpp"

#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace karma::mgs {

enum class Implementation { kokkos, native_cuda, cublas };

inline const char* to_string(Implementation i) {
  return i == Implementation::kokkos        ? "kokkos"
         : i == Implementation::native_cuda ? "native-cuda"
                                            : "cublas";
}

// Every kernel karma-mgs measures (karma/kernel_table.hpp): one
// factorization by each algorithm, Kokkos' named after the algorithm, a
// vendor's after both; GFLOP/s.
inline KernelTable mgs_kernels() {
  KernelTable t;
  t.fields["algorithm"] = {"mgs", "mgs-fused", "cgs2"};
  t.fields["vendor"] = {"native-cuda", "cublas"};
  t.kernels = {
      {"{algorithm}", {"kokkos"}, "{algorithm}", "factorization", "GFLOP/s", "flops"},
      {"{algorithm}-{vendor}", {"{vendor}"}, "{algorithm}", "factorization", "GFLOP/s", "flops"}};
  return t;
}

inline Schema mgs_schema() {
  Schema s;
  s.integer("mgs.n", std::int64_t{1} << 22,
            "rows of the multivector: global (scaling: strong) or per rank (scaling: weak); "
            "any number of ranks, split as evenly as it goes (2^k is accepted)",
            1);
  s.integer("mgs.m", 32, "columns (at most the global number of rows)", 1, max_columns);
  s.choice("mgs.algorithm", "mgs", {"mgs", "mgs-fused", "cgs2"},
           "mgs: the seed paper's level-1 kernels (m^2 + m launches); mgs-fused: the same "
           "arithmetic right-looking, one kernel per column; cgs2: classical Gram-Schmidt "
           "twice, two kernels per column");
  s.choice("mgs.implementation", "kokkos", {"kokkos", "native-cuda", "cublas"},
           "kokkos; or, for algorithm mgs in a CUDA build, hand-written CUDA (native-cuda) or "
           "cuBLAS (cublas)");
  s.choice("mgs.layout", "left", {"left", "right"},
           "N x m array layout: left (columns contiguous) or right (rows contiguous)");
  s.choice("mgs.precision", "double", {"float", "double"}, "element type");
  s.choice("mgs.matrix", "random", {"random", "conditioned"},
           "random: entries uniform in [-1, 1); conditioned: singular values from 1 down to "
           "1 / mgs.condition");
  s.number("mgs.condition", 1e6,
           "condition number of a conditioned matrix (>= 1; at most 1 / (10 m eps), where the "
           "MGS error bound stops saying anything)",
           1.0);
  s.integer("mgs.seed", 2011, "seed of the matrix", 0);
  s.choice("mgs.scaling", "strong", {"strong", "weak"},
           "strong: mgs.n is the global number of rows; weak: rows per rank");
  s.choice("mgs.reductions", "auto", {"auto", "device", "host"},
           "where reduction results go: device keeps them in device memory for the next "
           "kernel (on several ranks summed there: the kokkos implementation with run.comm's "
           "nccl or gpu-aware MPI); host brings each to the host (and through MPI_Allreduce); "
           "auto: device where it can, else host");
  s.run_section(20, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(Rule::axis, {"mgs.layout", "mgs.precision"});
  s.rule(Rule::tuning, {"mgs.algorithm", "mgs.implementation", "mgs.reductions"});
  s.faults({{"q-entry", "after the last repetition, 2 added to Q(0, 0)"}});
  s.retired("mgs.corrupt", "use run.inject_fault: q-entry", false);
  return s;
}

struct Config {
  std::int64_t n_global = 0;
  int m = 0;
  Algorithm algorithm = Algorithm::mgs;
  Implementation implementation = Implementation::kokkos;
  Layout layout = Layout::left;
  Precision precision = Precision::double_;
  MatrixKind matrix = MatrixKind::random;
  double condition = 1;
  std::uint64_t seed = 0;
  bool weak = false;
  bool on_device = true;
};

inline Config read_config(const Deck& deck) {
  Config c;
  const int ranks = comm::size();
  const std::string algorithm = deck.string("mgs.algorithm");
  c.algorithm = algorithm == "mgs"         ? Algorithm::mgs
                : algorithm == "mgs-fused" ? Algorithm::mgs_fused
                                           : Algorithm::cgs2;
  const std::string implementation = deck.string("mgs.implementation");
  c.implementation = implementation == "kokkos"        ? Implementation::kokkos
                     : implementation == "native-cuda" ? Implementation::native_cuda
                                                       : Implementation::cublas;
  c.layout = layout_from_string(deck.string("mgs.layout"));
  c.precision = precision_from_string(deck.string("mgs.precision"));
  c.matrix = deck.string("mgs.matrix") == "random" ? MatrixKind::random : MatrixKind::conditioned;
  c.condition = deck.number("mgs.condition");
  c.seed = static_cast<std::uint64_t>(deck.integer("mgs.seed"));
  c.weak = deck.string("mgs.scaling") == "weak";
  c.m = static_cast<int>(deck.integer("mgs.m"));

  const std::int64_t n = deck.integer("mgs.n");
  c.n_global = n;
  if (c.weak && __builtin_mul_overflow(n, static_cast<std::int64_t>(ranks), &c.n_global))
    deck.fail("mgs.n", "the global number of rows over " + std::to_string(ranks) +
                           " ranks overflows 64 bits");
  if (c.m > c.n_global)
    deck.fail("mgs.m", std::to_string(c.m) +
                           " columns need at least as many rows, but the "
                           "matrix has " +
                           std::to_string(c.n_global) + " (mgs.n" + (c.weak ? " x ranks" : "") +
                           ")");
  const std::int64_t local_rows = block_of(c.n_global, ranks, 0).count;
  const std::int64_t element = c.precision == Precision::single ? 4 : 8;
  if (!checked_product(local_rows, static_cast<std::int64_t>(2 * c.m) * element))
    deck.fail("mgs.n", "two arrays of this size per rank need more than 2^63 bytes");

  if (c.implementation != Implementation::kokkos) {
    if (!native::available)
      deck.fail("mgs.implementation", "'" + implementation +
                                          "' needs a build against a Kokkos with the CUDA "
                                          "backend; this one runs on " +
                                          std::string(Kokkos::DefaultExecutionSpace::name()));
    if (c.implementation == Implementation::cublas && !blas::available)
      deck.fail("mgs.implementation", "'cublas' needs a build with cuBLAS, which was not found");
    if (c.algorithm != Algorithm::mgs)
      deck.fail("mgs.implementation",
                "'" + implementation + "' implements algorithm mgs only, not '" + algorithm + "'");
    if (c.implementation == Implementation::cublas && local_rows > std::numeric_limits<int>::max())
      deck.fail("mgs.n", "cuBLAS takes 32-bit sizes: at most 2^31 - 1 rows per rank");
  }

  const double eps = c.precision == Precision::single ? std::numeric_limits<float>::epsilon()
                                                      : std::numeric_limits<double>::epsilon();
  if (c.matrix == MatrixKind::random) {
    // Deck::origin names a key left at its default "<deck> (default value)".
    const std::string origin = deck.origin("mgs.condition");
    if (origin.size() < 15 || origin.compare(origin.size() - 15, 15, "(default value)") != 0)
      deck.fail("mgs.condition", "applies to mgs.matrix: conditioned, but the matrix is random");
  } else {
    const double limit = max_condition(eps, c.m);
    if (c.condition > limit) {
      std::ostringstream m;
      m << "at most " << limit << " for " << c.m << " columns in " << to_string(c.precision)
        << " (1 / (10 m eps)): beyond it the columns are numerically dependent and no "
           "tolerance of MGS means anything";
      deck.fail("mgs.condition", m.str());
    }
    if (c.n_global > std::numeric_limits<std::int32_t>::max())
      deck.fail("mgs.n",
                "a conditioned matrix has at most 2^31 - 1 rows (its DCT phases are "
                "reduced in 64-bit integers)");
  }

  // Over several ranks, reductions stay on the device where device data
  // moves between ranks without the host (run.comm), in the Kokkos
  // implementation: the vendors' variants sum through the host.
  const std::string reductions = deck.string("mgs.reductions");
  const bool device_path =
      comm::path().path == comm::Path::nccl || comm::path().path == comm::Path::gpu_aware_mpi;
  const bool over_ranks = device_path && c.implementation == Implementation::kokkos;
  if (reductions == "device" && ranks > 1 && !over_ranks)
    deck.fail("mgs.reductions",
              "'device' sums the reductions of " + std::to_string(ranks) +
                  " ranks in device memory, which needs the kokkos implementation and "
                  "run.comm nccl or gpu-aware-mpi (this run: " +
                  comm::path().name + "): use host or auto");
  c.on_device = reductions == "device" || (reductions == "auto" && (ranks == 1 || over_ranks));
  return c;
}

}  // namespace karma::mgs
