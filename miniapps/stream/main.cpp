// karma-stream: the deck (stream_deck.hpp) -> the arrays -> the kernels
// (stream_kernels.hpp) as the harness's variants -> measure -> verify
// (stream_verify.hpp) -> report.
#include "stream_deck.hpp"
#include "stream_kernels.hpp"
#include "stream_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/text.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

namespace {

using namespace karma;
using namespace karma::stream;

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
  summary << "stream: " << cfg.local_shape.size() << "D shape [" << text::join(cfg.global_shape)
          << "] (global), " << to_string(cfg.precision) << ", layout " << to_string(cfg.layout)
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
                         DoubleFirst<View>{x.c});
    Kokkos::fence();
  }
  const bool ran_dot = std::any_of(cfg.kernels.begin(), cfg.kernels.end(),
                                   [](auto* k) { return k->kernel == Kernel::dot; });
  report.checks = verification_checks<View, Index>(x, gold, ran_dot, dot_error, global_elements);

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
                stream_schema(),
                run_stream,
                &generated::code_table,
                stream_kernels()};
  return run_main(argc, argv, app);
}
