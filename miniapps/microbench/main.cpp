// karma-microbench: deck -> benchmarks -> for each: its arms (karma, raw,
// ...) -> measure -> checks -> report. karma's arrays against raw pointers
// on the mdspan paper's five benchmarks; the kernels are in kernels.hpp, the
// inputs and checks in checks.hpp, the arms in arms.hpp. See README.md.
#include "benchmarks.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <sstream>

namespace {

using namespace karma;
using namespace karma::microbench;

const std::vector<std::string> families = {"Sum3D", "Stencil3D", "TinyMatrixSum", "Subspan3D",
                                           "MatVec"};
const std::vector<std::string> implementations = {"karma", "raw", "karma-byref", "raw-twin"};

Schema microbench_schema() {
  Schema s;
  s.choice_list("microbench.benchmarks", families, families,
                "benchmark families to run (Hollman et al. 2019): Sum3D, Stencil3D, "
                "TinyMatrixSum and Subspan3D on int arrays, MatVec in double");
  s.choice_list("microbench.where", {"serial", "parallel"}, {"serial", "parallel"},
                "serial: plain loops on the host over host arrays, as in the paper; parallel: "
                "Kokkos kernels on the default execution space (the GPU in a GPU build)");
  s.choice_list("microbench.layouts", {"right", "left"}, {"right", "left"},
                "array layouts: right (C order), left (Fortran order); loops run in memory order");
  s.choice_list("microbench.extents", {"static", "mixed", "dynamic"},
                {"static", "mixed", "dynamic"},
                "static: every extent in the type; mixed: the first at run time, the others in "
                "the type; dynamic: all at run time. MatVec has dynamic extents only");
  s.choice_list("microbench.implementations", {"karma", "raw"}, implementations,
                "karma: karma's arrays; raw: a pointer and hand-written index arithmetic; "
                "karma-byref: karma's serial loops on the caller's arrays, without the local "
                "unmanaged copy (serial Stencil3D, TinyMatrixSum and Subspan3D at their first "
                "size only); raw-twin: raw's code again, so that raw-twin against raw is the "
                "machine's own spread");
  s.choice("microbench.sizes", "standard", {"standard", "tiny"},
           "standard: the measured shapes (README.md); tiny: every benchmark at a few "
           "elements, for tests");
  s.number("microbench.min_time", 0.05,
           "seconds an execution lasts at least: it makes as many calls of the kernel in a row "
           "as the first arm needs for this long (measured before the warm-ups; 0: one call)",
           0.0, 60.0);
  s.run_section(10, 1);
  s.faults({{"karma-input", "one input element of every karma and karma-byref arm off by one"},
            {"raw-input", "the same in every raw and raw-twin arm"}});
  return s;
}

struct Config {
  std::vector<std::string> benchmarks, where, layouts, extents, implementations;
  Sizes sizes = Sizes::standard;
  double min_time = 0;
  std::string fault;  // run.inject_fault
};

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
  return s;
}

Config read_config(const Deck& deck, const RunSettings& run) {
  Config c;
  c.benchmarks = deck.string_list("microbench.benchmarks");
  c.where = deck.string_list("microbench.where");
  c.layouts = deck.string_list("microbench.layouts");
  c.extents = deck.string_list("microbench.extents");
  c.implementations = deck.string_list("microbench.implementations");
  c.sizes = deck.string("microbench.sizes") == "tiny" ? Sizes::tiny : Sizes::standard;
  c.min_time = deck.number("microbench.min_time");
  c.fault = run.inject_fault;
  return c;
}

// The kernel an arm runs (raw-twin runs raw's), and whether a benchmark has
// the arm.
Impl impl_of(const std::string& implementation) {
  return implementation == "karma"         ? Impl::karma
         : implementation == "karma-byref" ? Impl::karma_byref
                                           : Impl::raw;
}
bool has_arm(const Benchmark& b, const std::string& implementation) {
  return implementation != "karma-byref" || b.has_byref;
}

// The benchmarks the deck selects that have one of its implementations, in
// the suite's order; a selection of none is the deck's error.
std::vector<Benchmark> select(const Deck& deck, const Config& c) {
  std::vector<Benchmark> chosen;
  bool any_shape = false;
  for (auto& b : all_benchmarks(c.sizes)) {
    if (!has(c.benchmarks, b.family) || !has(c.where, name_of(b.where)) ||
        !has(c.layouts, b.layout) || !has(c.extents, name_of(b.extents)))
      continue;
    any_shape = true;
    const bool any_arm = std::any_of(c.implementations.begin(), c.implementations.end(),
                                     [&](const auto& i) { return has_arm(b, i); });
    if (any_arm) chosen.push_back(std::move(b));
  }
  if (!any_shape)
    deck.fail("microbench.extents", "no benchmark of " + join(c.benchmarks) + " has " +
                                        join(c.where) + ", " + join(c.layouts) + " and " +
                                        join(c.extents) +
                                        " extents (MatVec has dynamic extents only)");
  if (chosen.empty())
    deck.fail("microbench.implementations",
              join(c.implementations) +
                  " has no arm in the benchmarks chosen (karma-byref: "
                  "serial Stencil3D, TinyMatrixSum and Subspan3D only)");
  return chosen;
}

// The calls an execution makes: as many as the first arm needs to take
// min_time (the slowest rank's time), growing from one call. The calls run
// as executions do, with their checks.
std::int64_t calls_per_execution(const Arm& arm, double min_time) {
  constexpr std::int64_t most = std::int64_t{1} << 30;
  std::int64_t calls = 1;
  while (min_time > 0) {
    Kokkos::fence();
    comm::barrier();
    const auto start = std::chrono::steady_clock::now();
    arm.run(calls);
    Kokkos::fence();
    const double seconds =
        comm::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (arm.after_each) arm.after_each();
    if (seconds >= min_time || calls >= most) break;
    // Aim a little past min_time, at most tenfold a step.
    const double grow = seconds > 0 ? std::min(10.0, 1.4 * min_time / seconds) : 10.0;
    calls = std::min(most, std::max(calls + 1, static_cast<std::int64_t>(calls * grow)));
  }
  return calls;
}

// The arms of one benchmark that the deck asks for, each with its own
// arrays; the fault, where asked, in the arms of its side.
std::vector<Arm> make_arms(const Benchmark& b, const Config& c) {
  std::vector<Arm> arms;
  for (const auto& implementation : implementations) {
    if (!has(c.implementations, implementation) || !has_arm(b, implementation)) continue;
    const bool karma_side = implementation.rfind("karma", 0) == 0;
    const bool corrupt = c.fault == (karma_side ? "karma-input" : "raw-input");
    Arm arm = b.make_arm(impl_of(implementation), corrupt);
    arm.implementation = implementation;
    arm.code = code_of(b, impl_of(implementation));
    arms.push_back(std::move(arm));
  }
  return arms;
}

// One benchmark measured: its arms interleaved execution by execution, so
// that a busy machine slows them alike; their results and checks appended
// to the report. Its arrays live only while it runs.
void measure_benchmark(const Context& ctx, const Config& c, const Benchmark& b, Report& report) {
  std::vector<Arm> arms = make_arms(b, c);
  const std::int64_t calls = calls_per_execution(arms.front(), c.min_time);
  const double ranks = comm::size();
  std::vector<Variant> variants;
  for (const Arm& arm : arms) {
    Variant v;
    v.name = b.name() + "/" + arm.implementation;
    v.implementation = arm.implementation;
    v.variant = b.name();
    v.run = [&arm, calls] { arm.run(calls); };
    v.ends_idle = true;  // every call ends in a fence (call_times) or on the host
    v.bytes = ranks * static_cast<double>(calls) * b.bytes_per_call;
    v.flops = ranks * static_cast<double>(calls) * b.flops_per_call;
    v.code = arm.code;
    v.launch = b.launch();
    v.extra["calls_per_execution"] = calls;
    v.after_each = arm.after_each;
    v.after_turn = arm.after_turn;
    v.after_window = arm.after_turn;
    variants.push_back(std::move(v));
  }
  Plan plan;
  plan.rounds = Plan::every_repetition;
  plan.warm_up = Plan::WarmUp::rounds;
  plan.progress_unit = b.name() + ": repetition";
  for (KernelResult& k : measure(ctx, variants, plan)) {
    const double n = static_cast<double>(calls);
    k.extra["time_per_call_s"] = {{"min", k.time.min / n}, {"median", k.time.median / n}};
    report.kernels.push_back(std::move(k));
  }
  for (std::size_t i = 0; i < arms.size(); ++i)
    report.checks.push_back({variants[i].name,
                             "wrong answers: returned sums, or sampled output elements after turns",
                             comm::sum(static_cast<double>(arms[i].wrong())), 0});
}

// Each benchmark's arms together: the most memory a benchmark of the
// selection takes in the default memory space (on a GPU build the serial
// arrays are the host's, and small).
std::uint64_t footprint(const std::vector<Benchmark>& chosen, const Config& c) {
  double most = 0;
  for (const auto& b : chosen) {
    if (b.where == Where::serial && is_gpu_space<DefaultSpace>()) continue;
    const auto arms = std::count_if(c.implementations.begin(), c.implementations.end(),
                                    [&](const auto& i) { return has_arm(b, i); });
    most = std::max(most, static_cast<double>(arms) * b.footprint);
  }
  return static_cast<std::uint64_t>(most);
}

void describe(Report& report, const Config& c, const std::vector<Benchmark>& chosen,
              std::uint64_t bytes) {
  report.problem = {
      {"benchmarks", c.benchmarks},
      {"where", c.where},
      {"layouts", c.layouts},
      {"extents", c.extents},
      {"implementations", c.implementations},
      {"sizes", c.sizes == Sizes::tiny ? "tiny" : "standard"},
      {"benchmarks_run", chosen.size()},
      {"min_time_s", c.min_time},
      {"element_types", "int: Sum3D, Stencil3D, TinyMatrixSum, Subspan3D; double: MatVec"},
      {"bytes_per_call",
       "each input element read once, each output element written once (TinyMatrixSum's out "
       "read and written)"},
      {"footprint_bytes_per_rank", bytes},
      {"bandwidth_from",
       "bytes of an execution's calls, all ranks, over the slowest rank's minimum time"}};
  std::ostringstream summary;
  summary << "microbench: " << chosen.size() << " benchmarks of " << join(c.benchmarks) << " ("
          << join(c.where, " and ") << ", " << (c.sizes == Sizes::tiny ? "tiny" : "standard")
          << " sizes), " << join(c.implementations) << "; each execution at least " << c.min_time
          << " s of calls";
  report.summary = summary.str();
}

Report run_microbench(const Context& ctx) {
  const Config c = read_config(ctx.deck, ctx.run);
  const std::vector<Benchmark> chosen = select(ctx.deck, c);
  const std::uint64_t bytes = footprint(chosen, c);
  ctx.require_memory(bytes, "the arrays of the largest benchmark's arms");
  Report report;
  for (const Benchmark& b : chosen) measure_benchmark(ctx, c, b, report);
  describe(report, c, chosen, bytes);
  return report;
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"microbench",
                "karma's arrays against raw pointers and hand-written indexing on the mdspan "
                "paper's Sum3D, Stencil3D, TinyMatrixSum, Subspan3D and MatVec",
                microbench_schema(), run_microbench, &generated::code_table};
  return run_main(argc, argv, app);
}
