// karma-mgs: deck -> run -> report. The Kokkos factorizations are in
// mgs_kernels.hpp, the hand-written CUDA one in mgs_cuda.hpp, the cuBLAS one
// in mgs_cublas.hpp, the input in mgs_matrix.hpp, the checks in mgs_verify.hpp.
#include "mgs_cublas.hpp"
#include "mgs_cuda.hpp"
#include "mgs_kernels.hpp"
#include "mgs_matrix.hpp"
#include "mgs_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

namespace {

using namespace karma;
using mgs::Algorithm;
using mgs::MatrixKind;

enum class Implementation { kokkos, native_cuda, cublas };

const char* to_string(Implementation i) {
  return i == Implementation::kokkos        ? "kokkos"
         : i == Implementation::native_cuda ? "native-cuda"
                                            : "cublas";
}

Schema mgs_schema() {
  Schema s;
  s.integer("mgs.n", std::int64_t{1} << 22,
            "rows of the multivector: global (scaling: strong) or per rank (scaling: weak); "
            "any number of ranks, split as evenly as it goes (2^k is accepted)",
            1);
  s.integer("mgs.m", 32, "columns (at most the global number of rows)", 1, mgs::max_columns);
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
  s.rule(karma::Rule::axis, {"mgs.layout", "mgs.precision"});
  s.rule(karma::Rule::tuning, {"mgs.algorithm", "mgs.implementation", "mgs.reductions"});
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

Config read_config(const Deck& deck) {
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
    if (!mgs::native::available)
      deck.fail("mgs.implementation", "'" + implementation +
                                          "' needs a build against a Kokkos with the CUDA "
                                          "backend; this one runs on " +
                                          std::string(Kokkos::DefaultExecutionSpace::name()));
    if (c.implementation == Implementation::cublas && !mgs::blas::available)
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
    const double limit = mgs::max_condition(eps, c.m);
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

std::string variant_name(const Config& c) {
  std::string name = mgs::to_string(c.algorithm);
  if (c.implementation != Implementation::kokkos)
    name += std::string("-") + to_string(c.implementation);
  return name;
}

// One factorization of `a` by the deck's implementation; the vendors' own
// buffers are made here, outside the timed region.
template <class T, class View>
std::function<void()> factorization(const Config& cfg, const View& a, mgs::Workspace<T>& ws,
                                    mgs::Tally& tally) {
  const auto rows = static_cast<std::int64_t>(a.extent(0));
  const auto row_stride = static_cast<std::int64_t>(a.stride(0));
  const auto column_stride = static_cast<std::int64_t>(a.stride(1));
  switch (cfg.implementation) {
    case Implementation::native_cuda:
      return mgs::native::factorization<T>(a.data(), rows, cfg.m, row_stride, column_stride,
                                           ws.rd(0, 0), cfg.on_device, tally);
    case Implementation::cublas:
      return mgs::blas::factorization<T>(a.data(), rows, cfg.m, row_stride, column_stride,
                                         ws.rd(0, 0), cfg.on_device, tally);
    case Implementation::kokkos:
      break;
  }
  return [&cfg, a, &ws, &tally] { mgs::factor(cfg.algorithm, a, ws, tally); };
}

// The definition factorization() runs (karma/code_version.hpp).
std::string code_of(const Config& cfg) {
  switch (cfg.implementation) {
    case Implementation::native_cuda:
      return "karma::mgs::native::factor_mgs";
    case Implementation::cublas:
      return "karma::mgs::blas::factor_mgs";
    case Implementation::kokkos:
      break;
  }
  switch (cfg.algorithm) {
    case mgs::Algorithm::mgs_fused:
      return "karma::mgs::factor_mgs_fused";
    case mgs::Algorithm::cgs2:
      return "karma::mgs::factor_cgs2";
    case mgs::Algorithm::mgs:
      break;
  }
  return "karma::mgs::factor_mgs";
}

// The report's account of the problem: its fields and the summary line.
template <class T>
void describe_problem(Report& report, const Config& cfg, const std::string& name, const Block& mine,
                      std::uint64_t footprint, double condition_estimate, const mgs::Tally& tally) {
  const int m = cfg.m;
  report.problem = {
      {"n", cfg.n_global},
      {"m", m},
      {"rows_per_rank", allgather_json(mine.count)},
      {"algorithm", mgs::to_string(cfg.algorithm)},
      {"implementation", to_string(cfg.implementation)},
      {"layout", to_string(cfg.layout)},
      {"precision", to_string(cfg.precision)},
      {"element_bytes", sizeof(T)},
      {"matrix", cfg.matrix == MatrixKind::random ? "random" : "conditioned"},
      {"condition", cfg.matrix == MatrixKind::conditioned ? nlohmann::json(cfg.condition)
                                                          : nlohmann::json(nullptr)},
      {"condition_estimate", condition_estimate},
      {"seed", cfg.seed},
      {"scaling", cfg.weak ? "weak" : "strong"},
      {"reductions", cfg.on_device ? "device" : "host"},
      {"footprint_bytes_per_rank", footprint},
      {"flops_from", "2 N m^2 per factorization, whatever the algorithm does"},
      {"bytes_from",
       "(columns read + columns written) x N x element size, counted launch by "
       "launch: the least each algorithm must move (see the README)"}};
  const auto fewest = static_cast<std::int64_t>(comm::min(static_cast<double>(mine.count)));
  const auto most = static_cast<std::int64_t>(comm::max(static_cast<double>(mine.count)));
  std::ostringstream summary;
  summary << "mgs: " << name << ", " << cfg.n_global << " x " << m << " "
          << to_string(cfg.precision) << ", layout " << to_string(cfg.layout) << ", "
          << (cfg.matrix == MatrixKind::random ? std::string("random")
                                               : "condition " + std::to_string(cfg.condition))
          << ", " << comm::size() << " rank(s) of " << fewest
          << (fewest == most ? "" : " to " + std::to_string(most)) << " rows, reductions on the "
          << (cfg.on_device ? "device" : "host") << "; " << tally.launches << " launches and "
          << tally.allreduces << " allreduces per factorization";
  report.summary = summary.str();
}

template <class T, class L>
Report run_typed(const Context& ctx, const Config& cfg) {
  using View = UnmanagedArray<T**, L, DefaultMemory>;
  const int m = cfg.m;
  const Block mine = block_of(cfg.n_global, comm::size(), comm::rank());
  const std::uint64_t footprint = 2 * sizeof(T) * static_cast<std::uint64_t>(mine.count) * m;
  ctx.require_memory(footprint + (1 << 20), "A and a copy of it, " + std::to_string(mine.count) +
                                                " x " + std::to_string(m) + " " +
                                                to_string(cfg.precision) + " on a rank");

  constexpr std::size_t alignment = 256;
  const auto a0 = allocate_aligned<T**, L>("mgs::A0", alignment, mine.count, m);
  const auto a = allocate_aligned<T**, L>("mgs::A", alignment, mine.count, m);
  mgs::generate(a0.view, mine.first, cfg.n_global, cfg.matrix, cfg.condition, cfg.seed);

  mgs::Workspace<T> ws(m, cfg.on_device);
  const std::string name = variant_name(cfg);
  const double n = static_cast<double>(cfg.n_global);
  mgs::Tally tally;
  std::vector<Variant> variants(1);
  Variant& v = variants[0];
  v.name = name;
  v.implementation = to_string(cfg.implementation);
  v.variant = mgs::to_string(cfg.algorithm);
  v.flops = 2.0 * n * m * m;
  v.fom.from = FigureOfMerit::From::flop_rate;
  v.run = factorization<T>(cfg, a.view, ws, tally);
  v.code = {code_of(cfg)};
  // Every factorization starts from A; its traffic is counted as it runs.
  v.before_each = [&] {
    Kokkos::deep_copy(a.view, a0.view);
    tally = {};
  };
  v.after_each = [&v, &tally, n] {
    v.bytes = static_cast<double>(tally.column_reads + tally.column_writes) * n * sizeof(T);
  };
  Plan plan;
  plan.progress_unit = "factorization";
  Report report;
  report.kernels = measure(ctx, variants, plan);

  if (ctx.run.inject_fault == "q-entry" && comm::rank() == 0 && mine.count > 0) {
    Kokkos::parallel_for("mgs::corrupt", mgs::Policy(0, 1), mgs::AddToFirst<View>{a.view, T(2)});
  }
  // R: where the implementation left it (vendors keep it on the device).
  const bool r_on_device = cfg.on_device || cfg.implementation != Implementation::kokkos;
  const std::vector<double> r = ws.r_matrix(r_on_device);
  const double orthogonality = mgs::orthogonality_error(mgs::gram(a.view), m);
  const double residual = mgs::residual_error(a0.view, a.view, r);
  const double condition_estimate = mgs::condition_from_gram(mgs::gram(a0.view), m);
  const double kappa = cfg.matrix == MatrixKind::conditioned ? cfg.condition : condition_estimate;
  const double eps = std::numeric_limits<T>::epsilon();
  const mgs::Tolerances tol = mgs::tolerances(cfg.algorithm, eps, m, kappa);

  report.checks.push_back({"orthogonality", "||Q^T Q - I||_F", orthogonality, tol.orthogonality});
  report.checks.push_back({"residual", "||A - QR||_F / ||A||_F", residual, tol.residual});
  report.checks.push_back({"R", "entries of R off the upper triangle or with a diagonal <= 0",
                           mgs::r_shape_violations(r, m), 0.0});

  KernelResult& k = report.kernels[0];
  k.extra["launches_per_factorization"] = tally.launches;
  k.extra["allreduces_per_factorization"] = tally.allreduces;
  k.extra["host_waits_per_factorization"] = tally.host_waits;
  k.extra["columns_read"] = tally.column_reads;
  k.extra["columns_written"] = tally.column_writes;
  if (cfg.implementation == Implementation::kokkos && cfg.algorithm == Algorithm::mgs)
    k.extra["packed_dots_per_factorization"] = tally.packed_dots;

  describe_problem<T>(report, cfg, name, mine, footprint, condition_estimate, tally);
  return report;
}

Report run_mgs(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  return dispatch_precision(cfg.precision, [&](auto t) {
    using T = decltype(t);
    return dispatch_layout(cfg.layout, [&](auto l) { return run_typed<T, decltype(l)>(ctx, cfg); });
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"mgs",
                "Gram-Schmidt QR (modified, fused, or classical twice) of a tall N x m "
                "multivector distributed by rows over MPI ranks",
                mgs_schema(), run_mgs, &generated::code_table};
  return run_main(argc, argv, app);
}
