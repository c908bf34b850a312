#include "karma/harness.hpp"

#include "karma/comm.hpp"
#include "karma/energy.hpp"
#include "karma/profiling.hpp"
#include "karma/progress.hpp"
#include "karma/timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <thread>

namespace karma {

std::vector<Turn> schedule(std::size_t variants, const Plan& plan, const RunSettings& run) {
  std::vector<Turn> order;
  const std::int64_t repetitions = std::max<std::int64_t>(run.repetitions, 0);
  const std::int64_t rounds =
      std::clamp<std::int64_t>(plan.rounds, 1, std::max<std::int64_t>(repetitions, 1));
  const std::int64_t warmup = std::max<std::int64_t>(run.warmup, 0);
  if (plan.warm_up == Plan::WarmUp::rounds)
    for (std::int64_t w = 0; w < warmup; ++w)
      for (std::size_t v = 0; v < variants; ++v) order.push_back({v, 1, false, true, true});
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::int64_t timed = repetitions / rounds + (round < repetitions % rounds ? 1 : 0);
    for (std::size_t v = 0; v < variants; ++v) {
      const bool warm = round == 0 && plan.warm_up == Plan::WarmUp::first_turn && warmup > 0;
      if (warm) order.push_back({v, warmup, false, true, timed == 0});
      if (timed > 0) order.push_back({v, timed, true, !warm, true});
    }
  }
  return order;
}

KernelResult kernel_result(const Variant& variant, const Stats& time) {
  auto per_second = [](double amount, double seconds) {
    return seconds > 0 ? amount / seconds : 0.0;
  };
  KernelResult r;
  r.name = variant.name;
  r.implementation = variant.implementation;
  r.variant = variant.variant;
  r.bytes = variant.bytes;
  r.flops = variant.flops;
  r.code = variant.code;
  r.launch = variant.launch;
  r.time = time;
  const FigureOfMerit& f = variant.fom;
  const bool mean = f.time == FigureOfMerit::Time::mean;
  const double seconds = mean ? time.mean : time.min;
  switch (f.from) {
    case FigureOfMerit::From::bandwidth:
      r.fom = gigabytes_per_second(variant.bytes, seconds);
      r.fom_units = "GB/s";
      break;
    case FigureOfMerit::From::flop_rate:
      r.fom = per_second(variant.flops, seconds) * 1e-9;
      r.fom_units = "GFLOP/s";
      break;
    case FigureOfMerit::From::count_rate:
      r.fom = per_second(f.count, seconds) * f.scale;
      r.fom_units = f.units;
      r.fom_count = f.count;
      break;
  }
  r.extra = variant.extra;
  // Rates at the best and worst times say nothing of work that changes
  // from one execution to the next.
  if (mean) return r;
  if (variant.bytes > 0)
    r.extra["bandwidth_GBps"] = {{"best", gigabytes_per_second(variant.bytes, time.min)},
                                 {"median", gigabytes_per_second(variant.bytes, time.median)},
                                 {"worst", gigabytes_per_second(variant.bytes, time.max)}};
  if (variant.flops > 0)
    r.extra["GFLOPs"] = {{"best", per_second(variant.flops, time.min) * 1e-9},
                         {"median", per_second(variant.flops, time.median) * 1e-9}};
  return r;
}

namespace {

nlohmann::json unavailable(const std::string& reason) {
  return {{"status", "unavailable"}, {"reason", reason}};
}

// What one rank's window ran and saw.
struct WindowRun {
  double t0 = 0, t1 = 0, unix0 = 0, unix1 = 0;
  std::int64_t executions = 0;
  std::int64_t steps = 0;  // changes of the counter seen while the executions ran
};

// Counts a counter's changes from `joules` on, on a thread of its own, so
// that executions longer than a step lose none.
class StepWatch {
 public:
  StepWatch(const energy::Counter* counter, double joules, double interval_s) {
    if (!counter) return;
    // A few reads a step; RAPL's millisecond steps are counted coarsely,
    // which its windows of thousands of steps can afford.
    const auto period = std::chrono::duration<double>(std::clamp(interval_s / 8, 1e-3, 1e-2));
    thread_ = std::thread([this, counter, joules, period]() mutable {
      std::string why;
      while (!stop_.load()) {
        if (const auto now = counter->read(why); now && *now != joules) {
          steps_.fetch_add(1);
          joules = *now;
        }
        std::this_thread::sleep_for(period);
      }
    });
  }
  StepWatch(const StepWatch&) = delete;
  StepWatch& operator=(const StepWatch&) = delete;
  ~StepWatch() { stop(); }
  std::int64_t stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    return steps_.load();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> steps_{0};
  std::thread thread_;
};

// Back-to-back executions until `target` seconds have passed on every rank
// (as many on each, since an execution may hold collectives). A batch lasts
// about `slice_s` at the rate of the batch before it and at most doubles, from
// one execution: the timed median says nothing of the load now, and a window
// that load slows or speeds up must still end on time. A rank alone stops as
// soon as the time is up.
WindowRun run_window(Variant& v, double target, double slice_s, StepWatch& watch) {
  WindowRun w;
  w.t0 = energy::now_s();
  w.unix0 = energy::unix_s();
  const bool alone = comm::size() == 1;
  double batch_start = w.t0;
  for (std::int64_t batch = 1; batch > 0;) {
    std::int64_t done = 0;
    while (done < batch) {
      if (v.before_each) v.before_each();
      v.run();
      Kokkos::fence();
      if (v.after_each) v.after_each();
      ++done;
      if (alone && energy::now_s() - w.t0 >= target) break;
    }
    w.executions += done;
    const double now = energy::now_s();
    const double left = target - (now - w.t0);
    const double per_execution = std::max((now - batch_start) / static_cast<double>(done), 1e-9);
    batch_start = now;
    const double more = left <= 0 ? 0.0
                                  : std::ceil(std::min({std::min(left, slice_s) / per_execution,
                                                        2.0 * static_cast<double>(done), 1e9}));
    batch = static_cast<std::int64_t>(comm::max(more));
  }
  w.t1 = energy::now_s();
  w.unix1 = energy::unix_s();
  w.steps = watch.stop();
  return w;
}

}  // namespace

nlohmann::json energy_window(Variant& v, const KernelResult& r) {
  energy::Session& s = energy::session();
  if (!s.requested) return {{"status", "off"}};
  // Collective from here: every rank runs the window if any rank can read
  // its counter, since an execution may hold collectives.
  if (comm::max(s.usable() ? 1.0 : 0.0) == 0) {
    const auto reasons = comm::allgather(s.reason);
    return unavailable(reasons.front().empty() ? "no rank could read its counter"
                                               : reasons.front());
  }
  const double step = comm::max(s.interval_s);
  const double target = energy::window_target(s.window_s, step);
  // Slices of half a step at most: a slice slowed tenfold by load still
  // ends within a second of the target.
  const double slice = std::clamp(step / 2, 1e-3, 0.05);

  bool ok = s.usable() && s.counted;
  const double bracket = energy::bracket_for_step(s.interval_s);
  std::string why;
  const double began = energy::now_s();
  std::optional<energy::Reading> a;
  if (v.before_window) v.before_window();
  comm::barrier();
  if (ok) ok = (a = energy::next_step(*s.counter, 3 * s.interval_s + 1, why, bracket)).has_value();
  comm::barrier();
  Kokkos::fence();
  // The window is measured work too: its Kokkos Tools region around all its
  // executions, outside its clock.
  std::optional<profiling::Region> region(std::in_place, profiling::region_name(r.name));
  StepWatch watch(ok ? &*s.counter : nullptr, ok ? a->joules : 0, s.interval_s);
  const WindowRun w = run_window(v, target, slice, watch);
  region.reset();
  std::optional<energy::Reading> b;
  if (ok) ok = (b = energy::next_step(*s.counter, 3 * s.interval_s + 1, why, bracket)).has_value();
  // A counter that failed gives no more figures; a short window ends only its own.
  const bool counter_failed = s.usable() && s.counted && !ok;
  if (v.after_window) v.after_window();
  const double wall = energy::now_s() - began;

  // This rank's power over [t0, t1]: the counter ran from step a to step b
  // (the change after the last one the watch saw), and the device idled
  // before t0 and after t1.
  double watts = 0;
  const std::int64_t steps = ok ? w.steps + 1 : 0;
  if (ok) {
    const double joules =
        (b->joules - a->joules) - s.idle_W * ((w.t0 - a->at_s) + (b->at_s - w.t1));
    if (const auto few = energy::too_few_steps(steps, w.t1 - w.t0)) {
      ok = false;
      why = *few;
    } else if (joules <= 0) {
      ok = false;
      why = "the counter did not advance over the window";
    } else {
      watts = joules / (w.t1 - w.t0);
    }
  }
  if (counter_failed) s.reason = why;
  const bool counted_failed = s.counted && !ok;
  const auto reasons = comm::allgather(counted_failed ? (why.empty() ? s.reason : why) : "");
  const double window_s = comm::max(w.t1 - w.t0);
  // The fewest steps any counting rank saw: the figure is only as good as that.
  const auto fewest_steps = comm::min(s.counted ? steps : std::numeric_limits<std::int64_t>::max());
  nlohmann::json j = {{"window_s", window_s},
                      {"wall_s", comm::max(wall)},
                      {"executions", w.executions},
                      {"counter_steps", fewest_steps}};
  for (const auto& reason : reasons)
    if (!reason.empty()) {
      j.update(unavailable(reason));
      return j;
    }
  const double total_watts = comm::sum(s.counted ? watts : 0.0);
  const double counters = comm::sum(s.counted ? 1.0 : 0.0);
  j.update({{"status", "measured"},
            {"source", s.counter ? s.counter->source : ""},
            {"counters", static_cast<int>(counters)},
            {"window_unix_s", {w.unix0, w.unix1}},
            {"counter_step_s", step},
            {"average_power_W", total_watts},
            {"joules_per_execution", total_watts * r.time.median},
            {"fom_per_watt", {{"value", r.fom / total_watts}, {"units", r.fom_units + "/W"}}}});
  if (const auto cut = energy::cut_short(fewest_steps, window_s, step)) j["cut_short"] = *cut;
  return j;
}

namespace {

void require_distinct_names(const std::vector<Variant>& variants) {
  std::set<std::string> names;
  for (const auto& v : variants)
    if (!names.insert(v.name).second)
      throw Error(exit_runtime_error, "internal: two variants are named '" + v.name + "'");
}

// One turn: its executions of one variant, timed or not, within its hooks.
void run_turn(Variant& v, const Turn& t, KernelTimer& timer, const std::string& region_name,
              const std::function<void()>& executed) {
  if (t.opens_turn && v.before_turn) v.before_turn();
  for (std::int64_t i = 0; i < t.count; ++i) {
    if (v.before_each) v.before_each();
    if (t.timed) {
      // Each timed execution in its Kokkos Tools region, opened before the
      // timer's fence and barrier and closed after its last fence.
      const profiling::Region region(region_name);
      timer.time(v.name, v.run, v.ends_idle ? KernelTimer::Ends::idle : KernelTimer::Ends::running);
    } else {
      v.run();
      Kokkos::fence();
    }
    if (v.after_each) v.after_each();
    if (executed) executed();
  }
  if (t.closes_turn && v.after_turn) v.after_turn();
}

std::vector<std::string> region_names(const std::vector<Variant>& variants) {
  std::vector<std::string> regions;
  for (const auto& v : variants) regions.push_back(profiling::region_name(v.name));
  return regions;
}

// Collective: the results of the timed executions, then each variant's
// energy window.
std::vector<KernelResult> results_of(std::vector<Variant>& variants, const KernelTimer& timer) {
  Kokkos::fence();
  const auto stats = timer.finish();
  const auto communication = timer.communication();
  std::vector<KernelResult> results;
  for (const auto& v : variants) {
    results.push_back(kernel_result(v, stats.at(v.name)));
    if (comm::size() > 1) {
      results.back().extra["comm"] = communication.at(v.name);
      results.back().extra["comm"]["path"] = comm::path().name;
    }
  }
  for (std::size_t i = 0; i < variants.size(); ++i)
    results[i].extra["energy"] = energy_window(variants[i], results[i]);
  return results;
}

}  // namespace

std::vector<KernelResult> measure(const Context& ctx, std::vector<Variant>& variants,
                                  const Plan& plan) {
  require_distinct_names(variants);
  const std::vector<Turn> order = schedule(variants.size(), plan, ctx.run);
  const std::vector<std::string> regions = region_names(variants);
  std::int64_t executions = 0;
  for (const auto& t : order) executions += t.count;

  // Progress counts repetitions (warm-ups too) of every variant: one step
  // each time as many executions as there are variants have run.
  const auto per_step = static_cast<std::int64_t>(std::max<std::size_t>(variants.size(), 1));
  std::int64_t done = 0;
  KernelTimer timer;
  Progress progress(ctx, plan.progress_unit, executions / per_step);
  const auto executed = [&] {
    if (++done % per_step == 0) progress.step();
  };
  for (const Turn& t : order) run_turn(variants[t.index], t, timer, regions[t.index], executed);
  return results_of(variants, timer);
}

std::vector<KernelResult> measure_steps(const Context& ctx, std::vector<Variant>& variants,
                                        const Steps& steps) {
  require_distinct_names(variants);
  const std::vector<std::string> regions = region_names(variants);
  const std::int64_t warmup = std::max<std::int64_t>(ctx.run.warmup, 0);
  const std::int64_t count = std::max<std::int64_t>(steps.count, 0);
  KernelTimer timer;
  Progress progress(ctx, "step", warmup + count);
  for (std::int64_t s = 0; s < warmup + count; ++s) {
    const bool timed = s >= warmup;
    const std::int64_t step = timed ? s - warmup : s;
    if (steps.before) steps.before(step, timed);
    for (std::size_t v = 0; v < variants.size(); ++v)
      run_turn(variants[v], {v, timed ? variants[v].per_step : 1, timed, true, true}, timer,
               regions[v], {});
    if (timed && steps.after) steps.after(step);
    progress.step();
  }
  return results_of(variants, timer);
}

}  // namespace karma
