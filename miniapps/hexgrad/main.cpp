// karma-hexgrad: deck -> mesh -> register the implementation -> measure ->
// verify -> report. The kernels are in hexgrad_kernels.hpp (Kokkos) and
// hexgrad_cuda.hpp (hand-written CUDA), the host reference and the checks in
// hexgrad_verify.hpp.
#include "hexgrad_cuda.hpp"
#include "hexgrad_kernels.hpp"
#include "hexgrad_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <thread>

namespace {

using namespace karma;
using namespace karma::hexgrad;

enum class Implementation { kokkos, native_cuda, reference };
enum class Fault { none, kernel_sign, reference_sign };

Schema hexgrad_schema() {
  Schema s;
  s.integer("hexgrad.n", std::int64_t{1} << 22,
            "elements: per rank with weak scaling, in all with strong (2^k is accepted)", 1);
  s.integer_list("hexgrad.box", {0, 0, 0},
                 "[nx, ny, nz]: the box of cells the n elements are the first of (x fastest); "
                 "[0, 0, 0] picks a near-cubic box for n",
                 {3}, 0);
  s.choice("hexgrad.layout", "left", {"left", "right"},
           "layout of the (N, 3, 8) arrays: left (element index fastest, coalesced on GPUs) "
           "or right (each element's 24 values together)");
  s.choice("hexgrad.extents", "static", {"static", "dynamic"},
           "static: View<T*[3][8]> (3 and 8 known to the compiler); dynamic: View<T***>");
  s.choice("hexgrad.precision", "double", {"float", "double"}, "element type");
  s.choice("hexgrad.implementation", "kokkos", {"kokkos", "native-cuda", "reference"},
           "kokkos: the Kokkos kernel; native-cuda: the hand-written CUDA kernel (CUDA builds, "
           "layout left); reference: the host loop the checks use, timed");
  s.number("hexgrad.point.xi", 0.0, "reference coordinate xi of the evaluation point", -1.0, 1.0);
  s.number("hexgrad.point.eta", 0.0, "reference coordinate eta of the evaluation point", -1.0, 1.0);
  s.number("hexgrad.point.zeta", 0.0, "reference coordinate zeta of the evaluation point", -1.0,
           1.0);
  s.number("hexgrad.perturbation", 0.1,
           "random move of every vertex, per coordinate, as a fraction of the cell size (<= 0.1 "
           "keeps every element valid at every point)",
           0.0, 0.1);
  s.integer("hexgrad.affine_every", 64,
            "every k-th element (index % k == 0) is a random parallelepiped, whose gradients "
            "are known exactly",
            1);
  s.integer("hexgrad.seed", 2011, "seed of the mesh's random perturbation", 0);
  s.choice("hexgrad.scaling", "weak", {"weak", "strong"},
           "weak: n elements per rank (each rank its own mesh); strong: n elements in all, "
           "split over the ranks");
  s.run_section(100, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(karma::Rule::axis, {"hexgrad.layout", "hexgrad.precision"});
  s.rule(karma::Rule::tuning, {"hexgrad.implementation", "hexgrad.extents"});
  s.faults(
      {{"kernel-sign", "the sign of one reference-element gradient flipped in the timed kernel"},
       {"reference-sign", "the same in the host reference"}});
  s.retired("hexgrad.inject_fault", "use run.inject_fault (the same choices)", "none");
  return s;
}

struct Config {
  std::int64_t n_local = 0;   // elements on this rank
  std::int64_t n_global = 0;  // elements on all ranks
  std::int64_t offset = 0;    // strong scaling: global index of this rank's first element
  std::array<std::int64_t, 3> box{};
  Layout layout = Layout::left;
  bool static_extents = true;
  Precision precision = Precision::double_;
  Implementation implementation = Implementation::kokkos;
  std::string implementation_name;
  Point point;
  double perturbation = 0.1;
  std::int64_t affine_every = 64;
  std::int64_t seed = 0;
  bool strong = false;
};

Config read_config(const Deck& deck) {
  Config c;
  const std::int64_t n = deck.integer("hexgrad.n");
  const std::int64_t ranks = comm::size();
  const std::int64_t rank = comm::rank();
  c.strong = deck.string("hexgrad.scaling") == "strong";
  if (c.strong) {
    if (n < ranks)
      deck.fail("hexgrad.n", "strong scaling splits " + std::to_string(n) + " elements over " +
                                 std::to_string(ranks) + " ranks: it must be at least that many");
    c.n_global = n;
    const Block mine = block_of(n, ranks, rank);
    c.n_local = mine.count;
    c.offset = mine.first;
  } else {
    const auto global = checked_product(n, ranks);
    if (!global)
      deck.fail("hexgrad.n",
                "the global size over " + std::to_string(ranks) + " ranks overflows 64 bits");
    c.n_global = *global;
    c.n_local = n;
  }
  c.precision = precision_from_string(deck.string("hexgrad.precision"));
  // Two arrays of 24 values per element, all ranks together, must be
  // countable in bytes.
  if (!checked_product(c.n_global, std::int64_t{2 * values_per_element} *
                                       (c.precision == Precision::single ? 4 : 8)))
    deck.fail("hexgrad.n", "two arrays of " + std::to_string(c.n_global) +
                               " elements need more than 2^63 bytes: the byte count overflows");

  const auto box = deck.integer_list("hexgrad.box");
  const bool any_set = std::any_of(box.begin(), box.end(), [](auto v) { return v != 0; });
  const std::int64_t box_n = c.strong ? n : c.n_local;  // the elements one mesh holds
  if (any_set) {
    if (std::any_of(box.begin(), box.end(), [](auto v) { return v == 0; }))
      deck.fail("hexgrad.box", "either all three extents are 0 (a box chosen for n) or none is");
    const auto cells = checked_product(box);
    if (!cells) deck.fail("hexgrad.box", "the number of cells overflows 64 bits");
    if (*cells < box_n)
      deck.fail("hexgrad.box", "holds " + std::to_string(*cells) + " cells, fewer than the " +
                                   std::to_string(box_n) + " elements of hexgrad.n");
    c.box = {box[0], box[1], box[2]};
  } else {
    auto side = static_cast<std::int64_t>(std::ceil(std::cbrt(static_cast<double>(box_n))));
    while (side > 1 && (side - 1) * (side - 1) * (side - 1) >= box_n) --side;
    while (side * side * side < box_n) ++side;
    c.box = {side, side, (box_n + side * side - 1) / (side * side)};
  }
  // Vertex counters (3 per vertex) must stay below the affine elements' 2^62.
  const double vertex_ids = static_cast<double>(c.box[0] + 1) * static_cast<double>(c.box[1] + 1) *
                            static_cast<double>(c.box[2] + 1);
  if (3 * vertex_ids >= std::ldexp(1.0, 62))
    deck.fail(any_set ? "hexgrad.box" : "hexgrad.n", "the box has too many vertices to number");

  c.layout = layout_from_string(deck.string("hexgrad.layout"));
  c.static_extents = deck.string("hexgrad.extents") == "static";
  c.implementation_name = deck.string("hexgrad.implementation");
  c.implementation = c.implementation_name == "kokkos"        ? Implementation::kokkos
                     : c.implementation_name == "native-cuda" ? Implementation::native_cuda
                                                              : Implementation::reference;
  if (c.implementation == Implementation::native_cuda) {
    if (!native::available)
      deck.fail("hexgrad.implementation",
                "native-cuda needs a build with CUDA; this build's Kokkos has no CUDA backend");
    if (c.layout != Layout::left)
      deck.fail("hexgrad.layout",
                "native-cuda hard-codes the coalesced (LayoutLeft) strides: use layout left");
  }
  c.point = {deck.number("hexgrad.point.xi"), deck.number("hexgrad.point.eta"),
             deck.number("hexgrad.point.zeta")};
  c.perturbation = deck.number("hexgrad.perturbation");
  c.affine_every = deck.integer("hexgrad.affine_every");
  c.seed = deck.integer("hexgrad.seed");
  return c;
}

// run.inject_fault's fault.
Fault fault_of(const RunSettings& run) {
  return run.inject_fault == "kernel-sign"      ? Fault::kernel_sign
         : run.inject_fault == "reference-sign" ? Fault::reference_sign
                                                : Fault::none;
}

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

std::string join(const std::array<std::int64_t, 3>& v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         "]";
}

// The checks of the gradients, each the worst over the ranks against its
// tolerance; `compare`: against the host reference too (not when the
// reference is what was timed).
template <class T>
std::vector<Check> hexgrad_checks(const Errors& local, bool compare) {
  std::vector<Check> checks;
  const Tolerances tol = tolerances<T>();
  if (compare)
    checks.push_back({"reference", "max over elements of |g - g_ref|_max / (|g_ref|_max kappa)",
                      comm::max(local.reference), tol.reference});
  checks.push_back({"sum-zero", "max over elements, directions of |sum_v g| / sum_v |g|",
                    comm::max(local.sum_zero), tol.sum_zero});
  checks.push_back({"linear-field",
                    "max over elements of |grad f - c|_max / (|c|_max kappa), f = c.x",
                    comm::max(local.linear_field), tol.linear_field});
  checks.push_back({"affine",
                    "max over affine elements of |g - g_exact|_max / (|g_exact|_max kappa)",
                    comm::max(local.affine), tol.affine});
  return checks;
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
          << " scaling, box " << join(cfg.box) << "), " << cfg.implementation_name << ", "
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
  report.checks = hexgrad_checks<T>(local, compare);

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
                hexgrad_schema(), run_hexgrad, &generated::code_table};
  return run_main(argc, argv, app);
}
