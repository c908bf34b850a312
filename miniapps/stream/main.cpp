// karma-stream: deck -> run -> report. The kernels are in stream_kernels.hpp.
#include "stream_kernels.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

namespace {

using namespace karma;
using stream::Kernel;

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : stream::kernel_table) names.push_back(k.name);
  return names;
}

Schema stream_schema() {
  Schema s;
  s.integer_list("stream.shape", {std::int64_t{1} << 25},
                 "array extents: [n] for 1D, [nx, ny, nz] for 3D; per rank with weak "
                 "scaling, global with strong (2^k is accepted)",
                 {1, 3}, 1);
  s.choice("stream.layout", "right", {"left", "right"},
           "array layout: left (Fortran order) or right (C order); matters for 3D");
  s.choice("stream.precision", "double", {"float", "double"}, "element type");
  s.choice("stream.policy_3d", "auto", {"auto", "range", "mdrange"},
           "how 3D kernels iterate: range (a RangePolicy over items of a few neighbouring "
           "elements, (i, j, k) recovered by multiplications; the dot on a GPU walks the "
           "elements in memory order), mdrange (Kokkos' MDRangePolicy, tiled); auto: range on "
           "GPUs, mdrange on hosts. Only for 3D shapes; range needs fewer than 2^31 elements "
           "per rank");
  s.choice_list("stream.kernels", kernel_names(), kernel_names(),
                "kernels to run; each repetition runs them in the order copy, mul, add, "
                "triad, dot, nstream");
  s.choice("stream.scaling", "weak", {"weak", "strong"},
           "weak: shape is per rank; strong: shape is global and its first extent is split "
           "over the ranks");
  s.run_section(100, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(karma::Rule::axis, {"stream.layout", "stream.precision"});
  s.rule(karma::Rule::tuning, {"stream.policy_3d"});
  s.faults({{"array", "after the timed runs, the first element of c on the last rank doubled"},
            {"dot", "every dot's sum off by one part in a thousand"}});
  return s;
}

struct Config {
  std::vector<std::int64_t> global_shape;
  std::vector<std::int64_t> local_shape;
  Layout layout;
  Precision precision;
  stream::Policy3D policy_3d = stream::Policy3D::mdrange;
  bool policy_3d_by_size = false;  // `auto` on a GPU: the size picked it (read_policy_3d)
  std::vector<const stream::KernelSpec*> kernels;  // in table order
  bool strong;
};

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;  // callers check overflow first
  return p;
}

// Whether `iterations` of `kernels` keep every value and the dot sum finite
// (nstream grows the values about 1.92x an iteration, so a long run would
// verify against infinity); returns how many do, at most `iterations`.
template <class T>
std::int64_t finite_iterations(const std::vector<const stream::KernelSpec*>& kernels,
                               const std::vector<std::int64_t>& global_shape,
                               std::int64_t iterations) {
  double elements = 1;
  for (auto extent : global_shape) elements *= static_cast<double>(extent);
  stream::Gold<T> gold;
  for (std::int64_t it = 0; it < iterations; ++it) {
    const T a = gold.a, b = gold.b, c = gold.c;
    for (const auto* k : kernels) {
      const double dot = gold.apply(k->kernel) * elements;
      if (!std::isfinite(dot) || !std::isfinite(gold.a) || !std::isfinite(gold.b) ||
          !std::isfinite(gold.c))
        return it;
    }
    if (gold.a == a && gold.b == b && gold.c == c) return iterations;  // settled for good
  }
  return iterations;
}

// 32-bit indices where items and elements (stream_kernels.hpp) cannot overflow them;
// Policy3D::range needs them.
bool small_index(const std::vector<std::int64_t>& local_shape) {
  return product(local_shape) <= std::numeric_limits<int>::max() - 64;
}

stream::Policy3D read_policy_3d(const Deck& deck, const std::vector<std::int64_t>& local_shape) {
  const std::string name = deck.string("stream.policy_3d");
  if (local_shape.size() != 3) {
    if (name != "auto")
      deck.fail("stream.policy_3d", "applies to 3D shapes only; stream.shape is 1D");
    return stream::Policy3D::mdrange;
  }
  const bool fits = small_index(local_shape);
  if (name == "range" && !fits)
    deck.fail("stream.policy_3d",
              "range indexes items with 32 bits: the arrays need fewer than 2^31 - 64 "
              "elements per rank, they have " +
                  std::to_string(product(local_shape)));
  if (name == "range" || (name == "auto" && is_gpu_space<Kokkos::DefaultExecutionSpace>() && fits))
    return stream::Policy3D::range;
  return stream::Policy3D::mdrange;
}

Config read_config(const Deck& deck, const RunSettings& run) {
  Config c;
  c.layout = layout_from_string(deck.string("stream.layout"));
  c.precision = precision_from_string(deck.string("stream.precision"));
  c.strong = deck.string("stream.scaling") == "strong";
  const auto chosen = deck.string_list("stream.kernels");
  for (const auto& k : stream::kernel_table)
    if (std::find(chosen.begin(), chosen.end(), k.name) != chosen.end()) c.kernels.push_back(&k);

  const auto shape = deck.integer_list("stream.shape");
  const std::int64_t ranks = comm::size();
  c.global_shape = shape;
  c.local_shape = shape;
  if (c.strong) {
    if (shape[0] < ranks)
      deck.fail("stream.shape", "strong scaling splits the first extent (" +
                                    std::to_string(shape[0]) + ") over " + std::to_string(ranks) +
                                    " ranks: it must be at least the number of ranks");
    c.local_shape[0] = block_of(shape[0], ranks, comm::rank()).count;
  } else {
    // Weak scaling: the global problem is ranks copies of the deck's.
    const auto global = checked_product(shape[0], ranks);
    if (!global)
      deck.fail("stream.shape",
                "the global size over " + std::to_string(ranks) + " ranks overflows 64 bits");
    c.global_shape[0] = *global;
  }

  // Three arrays of the whole global problem must be countable in bytes.
  const std::int64_t element_bytes = c.precision == Precision::single ? 4 : 8;
  if (!checked_product(c.global_shape, 3 * element_bytes))
    deck.fail("stream.shape",
              "3 arrays of this shape need more than 2^63 bytes: the byte count overflows");

  std::int64_t iterations = 0;
  if (__builtin_add_overflow(run.warmup, run.repetitions, &iterations))
    iterations = std::numeric_limits<std::int64_t>::max();
  const std::int64_t finite =
      c.precision == Precision::single
          ? finite_iterations<float>(c.kernels, c.global_shape, iterations)
          : finite_iterations<double>(c.kernels, c.global_shape, iterations);
  if (finite < iterations)
    deck.fail(run.warmup > run.repetitions ? "run.warmup" : "run.repetitions",
              "run.warmup + run.repetitions = " + std::to_string(iterations) +
                  " iterations of these kernels take the arrays' " + to_string(c.precision) +
                  " values or the dot sum past their range after " + std::to_string(finite) +
                  " (nstream nearly doubles them every iteration): at " + "most " +
                  std::to_string(finite) + " in all");
  c.policy_3d = read_policy_3d(deck, c.local_shape);
  c.policy_3d_by_size = c.local_shape.size() == 3 && deck.string("stream.policy_3d") == "auto" &&
                        is_gpu_space<Kokkos::DefaultExecutionSpace>();
  return c;
}

std::string join_shape(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// 256-byte aligned arrays: see karma::allocate_aligned.
template <class DataType, class Layout>
AlignedArray<DataType, Layout> allocate_array(const std::string& label,
                                              const std::vector<std::int64_t>& shape) {
  constexpr std::size_t alignment = 256;
  if (shape.size() == 1) return allocate_aligned<DataType, Layout>(label, alignment, shape[0]);
  return allocate_aligned<DataType, Layout>(label, alignment, shape[0], shape[1], shape[2]);
}

// The report's account of the problem: its fields and the summary line.
template <class T, class Index>
void describe_problem(Report& report, const Config& cfg, double global_elements,
                      std::uint64_t footprint) {
  report.problem = {{"dimensions", cfg.local_shape.size()},
                    {"shape_global", cfg.global_shape},
                    {"shape_per_rank", allgather_json(cfg.local_shape)},
                    {"elements_global", global_elements},
                    {"layout", to_string(cfg.layout)},
                    {"precision", to_string(cfg.precision)},
                    {"element_bytes", sizeof(T)},
                    {"scaling", cfg.strong ? "strong" : "weak"},
                    {"footprint_bytes_per_rank", footprint},
                    {"index_type", sizeof(Index) == 4 ? "int32" : "int64"},
                    {"policy_3d", cfg.local_shape.size() != 3                ? "none"
                                  : cfg.policy_3d == stream::Policy3D::range ? "range"
                                                                             : "mdrange"},
                    {"bandwidth_from", "total bytes over the slowest rank's minimum time"}};
  std::ostringstream summary;
  summary << "stream: " << cfg.local_shape.size() << "D shape " << join_shape(cfg.global_shape)
          << " (global), " << to_string(cfg.precision) << ", layout " << to_string(cfg.layout)
          << (cfg.local_shape.size() == 3
                  ? cfg.policy_3d == stream::Policy3D::range ? ", range policy" : ", MDRangePolicy"
                  : "")
          << ", " << (cfg.strong ? "strong" : "weak") << " scaling, "
          << format_bytes(static_cast<double>(footprint)) << " per rank";
  report.summary = summary.str();
}

template <class DataType, class Layout, class Index>
Report run_typed(const Context& ctx, const Config& cfg) {
  using View = UnmanagedArray<DataType, Layout, DefaultMemory>;
  using T = typename View::non_const_value_type;
  const std::int64_t local_elements = product(cfg.local_shape);
  const std::uint64_t footprint = 3 * sizeof(T) * static_cast<std::uint64_t>(local_elements);
  ctx.require_memory(footprint, "3 arrays of " + std::to_string(local_elements) + " " +
                                    to_string(cfg.precision) + " per rank");

  const auto a = allocate_array<DataType, Layout>("stream::a", cfg.local_shape);
  const auto b = allocate_array<DataType, Layout>("stream::b", cfg.local_shape);
  const auto c = allocate_array<DataType, Layout>("stream::c", cfg.local_shape);
  const stream::Arrays<View> x{a.view, b.view, c.view, cfg.policy_3d};
  stream::initialize<View, Index>(x);
  const stream::DotResult dot_result = stream::make_dot_result();

  const double global_elements = comm::sum(static_cast<double>(local_elements));
  const std::string& fault = ctx.run.inject_fault;
  stream::Gold<T> gold, saved_gold;
  double dot = 0, dot_error = 0, saved_dot_error = 0;
  std::vector<Variant> variants;
  for (const auto* k : cfg.kernels) {
    Variant v;
    v.name = v.variant = k->name;
    v.implementation = "kokkos";
    v.bytes = k->arrays_touched * sizeof(T) * global_elements;
    v.flops = k->flops_per_element * global_elements;
    v.code = cfg.policy_3d_by_size ? stream::code_of_auto_3d(k->kernel, x)
                                   : stream::code_of(k->kernel, x);
    v.launch = cfg.policy_3d_by_size ? stream::launch_of_auto_3d(k->kernel, x)
                                     : stream::launch_of(k->kernel, x);
    v.ends_idle = k->kernel == Kernel::dot;  // execute() waits for the sum it returns
    v.run = [&, k] {
      dot = stream::execute<View, Index>(k->kernel, x, dot_result);
      if (k->kernel == Kernel::dot) dot = comm::sum(dot) * (fault == "dot" ? 1.001 : 1.0);
    };
    // The scalar recurrence follows every execution, so the arrays can be
    // checked at the end and each dot at once.
    v.after_each = [&, k] {
      const double per_element = gold.apply(k->kernel);
      if (k->kernel != Kernel::dot) return;
      const double expected = per_element * global_elements;
      const double e = std::abs(dot - expected) / std::abs(expected);
      dot_error = (e == e) ? std::max(dot_error, e) : std::numeric_limits<double>::infinity();
    };
    // The energy window runs a kernel thousands of times, past the range of
    // the recurrence: the arrays and the recurrence are put back after it.
    v.before_window = [&] {
      saved_gold = gold;
      saved_dot_error = dot_error;
    };
    v.after_window = [&] {
      gold = saved_gold;
      dot_error = saved_dot_error;
      stream::initialize<View, Index>(x, {gold.a, gold.b, gold.c});
      Kokkos::fence();
    };
    variants.push_back(std::move(v));
  }
  Plan plan;
  plan.rounds = Plan::every_repetition;  // every repetition runs each kernel once
  plan.warm_up = Plan::WarmUp::rounds;

  Report report;
  report.kernels = measure(ctx, variants, plan);

  if (fault == "array" && comm::rank() == comm::size() - 1 && local_elements > 0) {
    Kokkos::parallel_for("stream::inject_fault", Kokkos::RangePolicy<>(0, 1),
                         stream::DoubleFirst<View>{x.c});
    Kokkos::fence();
  }
  // Every element of every array is compared with the scalar recurrence.
  const double tolerance = 100 * std::numeric_limits<T>::epsilon();
  const std::pair<const char*, std::pair<View, T>> arrays[] = {
      {"a", {x.a, gold.a}}, {"b", {x.b, gold.b}}, {"c", {x.c, gold.c}}};
  for (const auto& [name, array] : arrays) {
    const double e = comm::max(stream::max_relative_error<View, Index>(array.first, array.second));
    report.checks.push_back({std::string("array ") + name, "max relative error", e, tolerance});
  }
  const bool ran_dot = std::any_of(cfg.kernels.begin(), cfg.kernels.end(),
                                   [](auto* k) { return k->kernel == Kernel::dot; });
  if (ran_dot) {
    // The elements' own error, plus the bound for summing N doubles.
    const double dot_tolerance =
        tolerance + global_elements * std::numeric_limits<double>::epsilon();
    report.checks.push_back({"dot", "max relative error over all runs", dot_error, dot_tolerance});
  }

  describe_problem<T, Index>(report, cfg, global_elements, footprint);
  return report;
}

Report run_stream(const Context& ctx) {
  const Config cfg = read_config(ctx.deck, ctx.run);
  const bool small = small_index(cfg.local_shape);
  return dispatch_precision(cfg.precision, [&](auto t) {
    using T = decltype(t);
    return dispatch_layout(cfg.layout, [&](auto l) {
      using L = decltype(l);
      if (cfg.local_shape.size() == 1)
        return small ? run_typed<T*, L, int>(ctx, cfg) : run_typed<T*, L, std::int64_t>(ctx, cfg);
      return small ? run_typed<T***, L, int>(ctx, cfg) : run_typed<T***, L, std::int64_t>(ctx, cfg);
    });
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"stream",
                "memory bandwidth of copy, mul, add, triad, dot and nstream (BabelStream's "
                "kernels) over 1D or 3D arrays",
                stream_schema(), run_stream, &generated::code_table};
  return run_main(argc, argv, app);
}
