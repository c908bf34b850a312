// karma-mgs: the deck (mgs_deck.hpp) -> A (mgs_matrix.hpp) -> the
// factorization as the harness's variant (Kokkos: mgs_kernels.hpp;
// hand-written CUDA: mgs_cuda.hpp; cuBLAS: mgs_cublas.hpp) -> measure ->
// verify (mgs_verify.hpp) -> report.
#include "mgs_cublas.hpp"
#include "mgs_cuda.hpp"
#include "mgs_deck.hpp"
#include "mgs_kernels.hpp"
#include "mgs_matrix.hpp"
#include "mgs_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>

namespace {

using namespace karma;
using namespace karma::mgs;

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
  const Verified verified =
      verify_factorization(a0.view, a.view, r, cfg.algorithm,
                           cfg.matrix == MatrixKind::conditioned ? cfg.condition : 0.0);
  report.checks = verified.checks;

  KernelResult& k = report.kernels[0];
  k.extra["launches_per_factorization"] = tally.launches;
  k.extra["allreduces_per_factorization"] = tally.allreduces;
  k.extra["host_waits_per_factorization"] = tally.host_waits;
  k.extra["columns_read"] = tally.column_reads;
  k.extra["columns_written"] = tally.column_writes;
  if (cfg.implementation == Implementation::kokkos && cfg.algorithm == Algorithm::mgs)
    k.extra["packed_dots_per_factorization"] = tally.packed_dots;

  describe_problem<T>(report, cfg, name, mine, footprint, verified.condition_estimate, tally);
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
                mgs_schema(),
                run_mgs,
                &generated::code_table,
                mgs_kernels()};
  return run_main(argc, argv, app);
}
