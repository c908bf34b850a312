// The one measurement loop of the suite. A mini-app registers the variants it
// measures (what one execution runs, moves and computes, and which
// implementation it is); measure() runs them all: the deck's warm-ups and
// repetitions (run.warmup, run.repetitions: Context::run) in interleaved
// rounds, fences and barriers, the slowest rank's time, progress, and a
// KernelResult each with its bandwidth and flop rates. Work that changes
// from step to step (contact's moving scene) is measured by measure_steps():
// the same executions, turns and results, a step at a time.
//
//   std::vector<karma::Variant> variants;
//   variants.push_back({"copy", "kokkos", "copy", [&] { copy(a, c); }, bytes, 0});
//   Report report;
//   report.kernels = karma::measure(ctx, variants, karma::Plan{});
#pragma once

#include "karma/app.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace karma {

// How a variant's figure of merit is computed from its times.
struct FigureOfMerit {
  enum class From { bandwidth, flop_rate, count_rate };
  From from = From::bandwidth;
  // count_rate: `count` items per execution, reported in `units` after
  // multiplying the rate by `scale` (e.g. elements, "Melements/s", 1e-6).
  double count = 0;
  std::string units;
  double scale = 1;
  // best: one execution's work over the best (minimum) time. mean: for work
  // that differs between executions (a step's), the mean work per execution
  // over the mean time, i.e. all the work over all its time; bytes, flops
  // and count are then means per execution.
  enum class Time { best, mean };
  Time time = Time::best;
};

struct Variant {
  std::string name;            // the kernel's name in the JSON and the table
  std::string implementation;  // "kokkos", "native-cuda", "cublas", "cblas", "reference"
  std::string variant;         // how it is done, e.g. "team-per-row"
  std::function<void()> run;   // one execution, timed between fences after a barrier
  double bytes = 0;            // moved by one execution, all ranks together
  double flops = 0;            // done by one execution, all ranks together
  // run() returns with the device idle (it waited for a result it read back):
  // its time needs no closing fence.
  bool ends_idle = false;
  FigureOfMerit fom;
  nlohmann::json extra = nlohmann::json::object();  // further figures for the JSON
  // What its execution runs, for its code version (karma/code_version.hpp),
  // which must not follow the run: the qualified names of every functor and
  // function its launch may run in this build (all that a choice made at
  // run time picks among), and the launch's shape, what the code or the
  // deck fixes (a policy, elements per item, a constant team size). What is
  // chosen from the run's sizes, threads, ranks or device goes in `extra`.
  std::vector<std::string> code;
  nlohmann::json launch = nlohmann::json::object();
  // Untimed, around every execution (warm-ups too): e.g. restore the input,
  // or check a value the execution returned.
  std::function<void()> before_each;
  std::function<void()> after_each;
  // Untimed, around each turn (the variant's executions within one round):
  // e.g. poison the output first, then check it.
  std::function<void()> before_turn;
  std::function<void()> after_turn;
  // Untimed, around the energy window (karma/energy.hpp), which runs the
  // variant back-to-back with before_each and after_each: e.g. save and put
  // back state that many more executions would disturb.
  std::function<void()> before_window;
  std::function<void()> after_window;
  // measure_steps(): timed executions in each step's turn.
  std::int64_t per_step = 1;
};

// The order of executions; their numbers are the deck's (RunSettings). The
// repetitions are split into `rounds` rounds (an even share each, the first
// rounds taking the rest); in every round each variant, in registration
// order, takes one turn of its share, so neighbours in time see the same
// machine state. every_repetition interleaves single executions (STREAM's
// order); rounds == 1 runs each variant's repetitions in one block (a
// library's idle threads never overlap another's kernels).
struct Plan {
  enum class WarmUp {
    first_turn,  // `warmup` untimed executions open each variant's first turn
    rounds,      // `warmup` untimed rounds of one execution of every variant come first
  };
  static constexpr std::int64_t every_repetition = std::numeric_limits<std::int64_t>::max();
  std::int64_t rounds = 1;  // clamped to [1, repetitions]
  WarmUp warm_up = WarmUp::first_turn;
  std::string progress_unit = "repetition";  // what the progress line counts
};

// One entry of the execution order: `count` executions of variant `index`,
// timed or not, as one turn.
struct Turn {
  std::size_t index = 0;
  std::int64_t count = 0;
  bool timed = false;
  bool opens_turn = true;   // before_turn runs before it
  bool closes_turn = true;  // after_turn runs after it
};

// The order in which measure() runs `variants` executions under `plan`,
// `run.warmup` warm-ups and `run.repetitions` repetitions.
std::vector<Turn> schedule(std::size_t variants, const Plan& plan, const RunSettings& run);

// Collective: runs every variant as `plan` and the deck's run section
// (ctx.run) say and returns one result each, in registration order. The
// variants' bytes, flops and extra are read after the last execution, so a
// variant that counts its traffic as it runs can set them from a hook.
std::vector<KernelResult> measure(const Context& ctx, std::vector<Variant>& variants,
                                  const Plan& plan);

// A stepped measurement: the scene changes every step, so each step opens
// with `before`, then every variant takes one turn, in registration order
// (run.warmup untimed warm-up steps first, one execution each; timed steps:
// `per_step` timed executions each), then `after`. Progress counts steps.
struct Steps {
  std::int64_t count = 0;  // timed steps
  // Untimed, before a step's turns: its index among the timed steps (0 ..
  // count - 1), or among the warm-up steps with `timed` false.
  std::function<void(std::int64_t step, bool timed)> before;
  // Untimed, after a timed step's turns: e.g. checks across the variants.
  std::function<void(std::int64_t step)> after;
};

// Collective: runs `steps` over `variants` and returns one result each, in
// registration order, as measure() does (energy windows included). A
// variant's hooks see the warm-up steps too; before_each and after_each
// run around every execution.
std::vector<KernelResult> measure_steps(const Context& ctx, std::vector<Variant>& variants,
                                        const Steps& steps);

// A variant's result from the statistics of its (slowest-rank) times:
// bandwidth_GBps (best, median, worst) when it moves bytes, GFLOPs (best,
// median) when it computes, and its figure of merit.
KernelResult kernel_result(const Variant& variant, const Stats& time);
// Collective: the variant's energy over a window of back-to-back executions
// after its timed ones, as the results' kernels[].energy (docs/results-format.md):
// average power over the window (the idle power measured at the start taken
// off the window's ends), energy per execution at the median time, and the
// figure of merit per watt. No figure, with the reason, when the counter
// cannot be read or the window came out too short.
nlohmann::json energy_window(Variant& variant, const KernelResult& result);

}  // namespace karma
