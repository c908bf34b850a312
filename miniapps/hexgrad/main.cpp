// karma-hexgrad: the deck (hexgrad_deck.hpp) -> the mesh -> the
// implementation as the harness's variant (hexgrad_kernels.hpp, Kokkos;
// hexgrad_cuda.hpp, hand-written CUDA) -> measure -> verify against the
// host reference (hexgrad_verify.hpp) -> report.
#include "hexgrad_cuda.hpp"
#include "hexgrad_deck.hpp"
#include "hexgrad_kernels.hpp"
#include "hexgrad_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/text.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <sstream>
#include <thread>

namespace {

using namespace karma;
using namespace karma::hexgrad;

Mesh make_mesh(const Config& c) {
  // Weak scaling: every rank its own mesh. Strong: one mesh, split.
  const std::uint64_t rank = c.strong ? 0 : static_cast<std::uint64_t>(comm::rank());
  return hexgrad::make_mesh(c.box[0], c.box[1], c.box[2], c.perturbation, c.affine_every,
                            mix(static_cast<std::uint64_t>(c.seed)) ^ mix(~rank));
}

int check_threads() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, hardware / std::max(1, comm::local_size()));
}

// The problem as the results record it.
template <class T, class Index>
nlohmann::json hexgrad_problem(const Config& cfg, const RunSettings& run, const Mesh& mesh,
                               const Errors& local, std::uint64_t footprint) {
  const std::int64_t n = cfg.n_local;
  const char* block_note =
      cfg.implementation == Implementation::native_cuda ? "256 threads per block"
      : cfg.implementation == Implementation::kokkos && is_gpu_space<DefaultSpace>()
          ? "chosen by Kokkos under LaunchBounds<256>"
          : "n/a (host)";
  return {{"implementation", cfg.implementation_name},
          {"layout", to_string(cfg.layout)},
          {"extents", cfg.static_extents ? "static" : "dynamic"},
          {"precision", to_string(cfg.precision)},
          {"element_bytes", sizeof(T)},
          {"elements_per_rank", allgather_json(n)},
          {"elements_global", cfg.n_global},
          {"scaling", cfg.strong ? "strong" : "weak"},
          {"box", cfg.box},
          {"cell_size", mesh.h},
          {"evaluation_point", {cfg.point.xi, cfg.point.eta, cfg.point.zeta}},
          {"perturbation", cfg.perturbation},
          {"affine_every", cfg.affine_every},
          {"affine_elements_global", comm::sum(local.affine_elements)},
          {"seed", cfg.seed},
          {"inject_fault", run.inject_fault},
          {"bytes_per_element", 2 * values_per_element * sizeof(T)},
          {"flops_per_element", flops_per_element},
          {"footprint_bytes_per_rank", footprint},
          {"index_type", sizeof(Index) == 4 ? "int32" : "int64"},
          {"gpu_block", block_note},
          {"bandwidth_from",
           "48 values per element read or written once, all ranks, over the "
           "slowest rank's minimum time"}};
}

// The run in one line, for the verbose output.
std::string hexgrad_summary(const Config& cfg, std::uint64_t footprint) {
  std::ostringstream summary;
  summary << "hexgrad: " << cfg.n_global << " elements (" << (cfg.strong ? "strong" : "weak")
          << " scaling, box [" << text::join(cfg.box) << "]), " << cfg.implementation_name << ", "
          << to_string(cfg.precision) << ", layout " << to_string(cfg.layout) << ", "
          << (cfg.static_extents ? "static" : "dynamic") << " extents, "
          << format_bytes(static_cast<double>(footprint)) << " per rank";
  return summary.str();
}

template <class T, class L, bool Static, class Index>
Report run_typed(const Context& ctx, const Config& cfg) {
  using DataType = std::conditional_t<Static, T* [dims][vertices], T***>;
  using View = UnmanagedArray<DataType, L, DefaultMemory>;
  constexpr std::size_t alignment = 256;
  const std::int64_t n = cfg.n_local;

  const std::uint64_t footprint =
      2 * (static_cast<std::uint64_t>(n) * values_per_element * sizeof(T) + alignment);
  ctx.require_memory(footprint, "coordinates and gradients of " + std::to_string(n) + " " +
                                    to_string(cfg.precision) + " elements per rank");
  auto allocate = [&](const std::string& label) {
    if constexpr (Static)
      return allocate_aligned<DataType, L>(label, alignment, n);
    else
      return allocate_aligned<DataType, L>(label, alignment, n, dims, vertices);
  };
  const auto x_owner = allocate("hexgrad::x");
  const auto g_owner = allocate("hexgrad::g");
  const View x = x_owner.view;
  const View g = g_owner.view;
  const Mesh mesh = make_mesh(cfg);
  fill_mesh<Index>(x, mesh, cfg.offset);
  // Unwritten gradients must fail the checks.
  Kokkos::deep_copy(g, std::numeric_limits<T>::quiet_NaN());

  const ReferenceGradients<double> exact = reference_gradients(cfg.point);
  const Fault fault = fault_of(ctx.run);
  const ReferenceGradients<double> timed =
      fault == Fault::kernel_sign ? with_flipped_sign(exact) : exact;
  const ReferenceGradients<double> checked =
      fault == Fault::reference_sign ? with_flipped_sign(exact) : exact;
  const ReferenceGradients<T> r = convert<T>(timed);

  const double global_n = static_cast<double>(cfg.n_global);
  std::vector<Variant> variants(1);
  Variant& v = variants[0];
  v.name = "gradients";
  v.implementation = cfg.implementation_name;
  v.variant = std::string(to_string(cfg.layout)) + (cfg.static_extents ? "-static" : "-dynamic");
  v.bytes = 2.0 * values_per_element * sizeof(T) * global_n;
  v.flops = static_cast<double>(flops_per_element) * global_n;
  v.fom = {FigureOfMerit::From::count_rate, global_n, "Melements/s", 1e-6};
  typename View::HostMirror hx, hg;
  if (cfg.implementation == Implementation::reference) {
    hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    hg = Kokkos::create_mirror_view(g);
    Kokkos::deep_copy(hg, g);
    v.run = [&] { reference_gradients(hx, hg, timed); };
    v.code = {"karma::hexgrad::reference_gradients"};
  } else if (cfg.implementation == Implementation::kokkos) {
    const typename View::const_type xc = x;
    v.run = [=] { gradients<Index>(xc, g, r); };
    v.code = {"karma::hexgrad::gradients"};
  } else {
    v.run = native::launcher<T, Index>(x, g, n, r);
    v.code = {"karma::hexgrad::native::launcher"};
  }
  Report report;
  report.kernels = measure(ctx, variants, Plan{});

  const bool compare = cfg.implementation != Implementation::reference;
  const Errors local =
      compare ? check_arrays(x, g, checked, cfg.affine_every, cfg.offset, true, check_threads())
              : check(hx, hg, checked, cfg.affine_every, cfg.offset, false, check_threads());
  report.checks = verification_checks<T>(local, compare);

  KernelResult& k = report.kernels[0];
  const Stats& s = k.time;
  k.extra["elements_per_second"] = {{"best", s.min > 0 ? global_n / s.min : 0.0},
                                    {"median", s.median > 0 ? global_n / s.median : 0.0}};
  // Each timed repetition is one launch between fences: at small n this is
  // the launch-and-synchronise latency, not throughput.
  k.extra["time_per_launch_us"] = {{"min", s.min * 1e6}, {"median", s.median * 1e6}};
  if (cfg.implementation == Implementation::kokkos && desired_occupancy<T, L>() > 0)
    k.extra["desired_occupancy_percent"] = desired_occupancy<T, L>();

  report.problem = hexgrad_problem<T, Index>(cfg, ctx.run, mesh, local, footprint);
  report.summary = hexgrad_summary(cfg, footprint);
  return report;
}

Report run_hexgrad(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  // 32-bit indices where every offset into an array, 24 n, fits them.
  const bool small_index =
      cfg.n_local <= (std::numeric_limits<int>::max() - 256) / values_per_element;
  return dispatch_precision(cfg.precision, [&](auto t) {
    using T = decltype(t);
    return dispatch_layout(cfg.layout, [&](auto l) {
      using L = decltype(l);
      if (cfg.static_extents)
        return small_index ? run_typed<T, L, true, int>(ctx, cfg)
                           : run_typed<T, L, true, std::int64_t>(ctx, cfg);
      return small_index ? run_typed<T, L, false, int>(ctx, cfg)
                         : run_typed<T, L, false, std::int64_t>(ctx, cfg);
    });
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"hexgrad",
                "gradients of the 8 trilinear basis functions of N hexahedral elements "
                "(Edwards et al. 2011): Kokkos, hand-written CUDA or the host reference",
                hexgrad_schema(),
                run_hexgrad,
                &generated::code_table,
                hexgrad_kernels()};
  return run_main(argc, argv, app);
}
