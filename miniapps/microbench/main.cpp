// karma-microbench: deck -> benchmarks -> for each: its arms (karma, raw,
// ...) -> Google Benchmark -> checks -> report. karma's arrays against raw
// pointers on the mdspan paper's five benchmarks; the deck is
// microbench_deck.hpp, the kernels microbench_kernels.hpp, the inputs and
// checks microbench_verify.hpp, the arms arms.hpp, the measurement by
// Google Benchmark microbench_gbench.hpp. See README.md.
#include "microbench_deck.hpp"
#include "microbench_gbench.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>

namespace {

using namespace karma;
using namespace karma::microbench;

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

// An arm as the core's variant: one execution is one call; what it moves
// and computes, its code, and its hooks for the energy window.
Variant variant_of(const Benchmark& b, Arm& arm, std::int64_t iterations) {
  const double ranks = comm::size();
  Variant v;
  v.name = b.name() + "/" + arm.implementation;
  v.implementation = arm.implementation;
  v.variant = b.name();
  v.run = [&arm] { arm.run(1); };
  v.ends_idle = true;  // every call ends in a fence (call_times) or on the host
  v.bytes = ranks * b.bytes_per_call;
  v.flops = ranks * b.flops_per_call;
  v.code = arm.code;
  v.launch = b.launch();
  v.extra["iterations"] = iterations;
  v.after_each = arm.after_each;
  v.after_window = arm.after_turn;
  return v;
}

// One benchmark measured by Google Benchmark: its arms' repetitions
// interleaved, so that a busy machine slows them alike; each arm's
// repetitions (the slowest rank's) and checks appended to the report. Its
// arrays live only while it runs. Returns how many arms ran.
std::size_t measure_benchmark(const Config& c, const Benchmark& b, Collector& collector,
                              Report& report) {
  std::vector<Arm> arms = make_arms(b, c);
  const std::size_t ran = run_arms(b, arms, collector, c.warmup);
  if (const std::string messages = collector.take_messages(); !messages.empty())
    std::fputs(messages.c_str(), stderr);
  for (Arm& arm : arms) {
    const std::string name = b.name() + "/" + arm.implementation;
    const auto found = collector.samples().find(name);
    const bool here = found != collector.samples().end();
    if (!comm::all(here && !found->second.seconds_per_call.empty())) {
      if (here && !found->second.error.empty())
        throw Error(exit_runtime_error, name + ": " + found->second.error);
      continue;  // left out by --benchmark_filter, on every rank alike
    }
    std::vector<double> seconds = found->second.seconds_per_call;
    comm::max_inplace(seconds);
    Variant v = variant_of(b, arm, found->second.iterations);
    KernelResult k = kernel_result(v, summarize(std::move(seconds)));
    k.extra["energy"] = energy_window(v, k);
    report.kernels.push_back(std::move(k));
    report.checks.push_back({name,
                             "wrong answers: returned sums, or sampled output elements after "
                             "repetitions",
                             comm::sum(static_cast<double>(arm.wrong())), 0});
  }
  return ran;
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

struct Measured {
  std::string min_time;  // as Google Benchmark reads it
  std::int64_t repetitions = 0;
  std::size_t arms = 0;
};

void describe(Report& report, const Config& c, const std::vector<Benchmark>& chosen,
              std::uint64_t bytes, const BenchmarkFlags& flags, const Measured& m) {
  report.problem = {
      {"benchmarks", c.benchmarks},
      {"where", c.where},
      {"layouts", c.layouts},
      {"extents", c.extents},
      {"implementations", c.implementations},
      {"sizes", c.sizes == Sizes::tiny ? "tiny" : "standard"},
      {"benchmarks_run", chosen.size()},
      {"arms_run", m.arms},
      {"repetitions", m.repetitions},
      {"warmup", c.warmup},
      {"google_benchmark",
       {{"version", benchmark_version()},
        {"flags", flags.given},
        {"min_time", m.min_time},
        {"repetitions", m.repetitions},
        {"random_interleaving", flags.interleave}}},
      {"element_types", "int: Sum3D, Stencil3D, TinyMatrixSum, Subspan3D; double: MatVec"},
      {"bytes_per_call",
       "each input element read once, each output element written once (TinyMatrixSum's out "
       "read and written)"},
      {"footprint_bytes_per_rank", bytes},
      {"bandwidth_from",
       "bytes of one call, all ranks, over the slowest rank's time per call of a repetition "
       "(Google Benchmark's real time over its iterations)"}};
  std::ostringstream summary;
  summary << "microbench: " << m.arms << " arms of " << chosen.size() << " benchmarks of "
          << text::join(c.benchmarks) << " (" << text::join(c.where, " and ") << ", "
          << (c.sizes == Sizes::tiny ? "tiny" : "standard") << " sizes), "
          << text::join(c.implementations) << "; Google Benchmark " << benchmark_version() << ", "
          << m.repetitions << " repetitions of at least " << m.min_time << " after " << c.warmup
          << " warm-up call(s)";
  report.summary = summary.str();
}

Report run_microbench(const Context& ctx) {
  const BenchmarkFlags flags = check_benchmark_flags(flags_given());
  const Config c = read_config(ctx.deck, ctx.run);
  const std::vector<Benchmark> chosen = select(ctx.deck, c);
  const std::uint64_t bytes = footprint(chosen, c);
  ctx.require_memory(bytes, "the arrays of the largest benchmark's arms");
  Measured m;
  std::tie(m.min_time, m.repetitions) = start_benchmark(flags, c.min_time, c.repetitions);
  Collector collector(flags, comm::is_root(), comm::is_root() && ctx.verbose());
  Report report;
  for (const Benchmark& b : chosen) m.arms += measure_benchmark(c, b, collector, report);
  collector.finish();
  if (m.arms == 0)
    throw InputError("--benchmark_filter=" + flags.filter + " matches no arm of the " +
                     std::to_string(chosen.size()) + " benchmarks the deck selects");
  describe(report, c, chosen, bytes, flags, m);
  return report;
}

}  // namespace

int main(int argc, char* argv[]) {
  // Google Benchmark's flags are its own (microbench_gbench.hpp); the suite
  // reads the rest.
  take_benchmark_flags(argc, argv);
  const App app{"microbench",
                "karma's arrays against raw pointers and hand-written indexing on the mdspan "
                "paper's Sum3D, Stencil3D, TinyMatrixSum, Subspan3D and MatVec",
                microbench_schema(),
                run_microbench,
                &generated::code_table,
                microbench_kernels()};
  const int code = run_main(argc, argv, app);
  // --version: the core's line, then the Google Benchmark measuring.
  for (int i = 1; i < argc && code == exit_ok; ++i)
    if (std::string(argv[i]) == "--version")
      std::printf("karma-microbench measures with Google Benchmark %s\n", benchmark_version());
  return code;
}
