#include "karma/harness.hpp"

#include "karma/comm.hpp"
#include "karma/energy.hpp"
#include "karma/profiling.hpp"
#include "karma/progress.hpp"
#include "karma/timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace karma {

std::vector<Turn> schedule(std::size_t variants, const Plan& plan) {
  std::vector<Turn> order;
  const std::int64_t repetitions = std::max<std::int64_t>(plan.repetitions, 0);
  const std::int64_t rounds =
      std::clamp<std::int64_t>(plan.rounds, 1, std::max<std::int64_t>(repetitions, 1));
  const std::int64_t warmup = std::max<std::int64_t>(plan.warmup, 0);
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
  r.time = time;
  const FigureOfMerit& f = variant.fom;
  switch (f.from) {
    case FigureOfMerit::From::bandwidth:
      r.fom = gigabytes_per_second(variant.bytes, time.min);
      r.fom_units = "GB/s";
      break;
    case FigureOfMerit::From::flop_rate:
      r.fom = per_second(variant.flops, time.min) * 1e-9;
      r.fom_units = "GFLOP/s";
      break;
    case FigureOfMerit::From::count_rate:
      r.fom = per_second(f.count, time.min) * f.scale;
      r.fom_units = f.units;
      break;
  }
  r.extra = variant.extra;
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
  const double target = std::max(s.window_s, 1.2 * energy::min_updates * step);
  const double per_execution = std::max(r.time.median, 1e-9);
  auto batch = static_cast<std::int64_t>(std::ceil(std::min(target / per_execution, 1e9)));

  bool ok = s.usable() && s.counted;
  std::string why;
  std::optional<energy::Reading> a;
  if (v.before_window) v.before_window();
  comm::barrier();
  if (ok) ok = (a = energy::next_step(*s.counter, 3 * s.interval_s + 1, why)).has_value();
  comm::barrier();
  Kokkos::fence();
  // The window is measured work too: its Kokkos Tools region around all its
  // executions, outside its clock.
  std::optional<profiling::Region> region(std::in_place, profiling::region_name(r.name));
  const double t0 = energy::now_s(), unix0 = energy::unix_s();
  std::int64_t executions = 0;
  while (true) {
    for (std::int64_t i = 0; i < batch; ++i) {
      if (v.before_each) v.before_each();
      v.run();
      Kokkos::fence();
      if (v.after_each) v.after_each();
    }
    executions += batch;
    // The executions may run faster here than the timed ones did (a busy
    // host slowed those): more until the window is long enough, as many on
    // every rank, since an execution may hold collectives.
    const double elapsed = energy::now_s() - t0;
    const double more =
        elapsed >= target
            ? 0.0
            : std::ceil(
                  std::min(1.1 * (target - elapsed) / std::max(elapsed / executions, 1e-9), 1e9));
    batch = static_cast<std::int64_t>(comm::max(more));
    if (batch == 0) break;
  }
  const double t1 = energy::now_s(), unix1 = energy::unix_s();
  region.reset();
  std::optional<energy::Reading> b;
  if (ok) ok = (b = energy::next_step(*s.counter, 3 * s.interval_s + 1, why)).has_value();
  // A counter that failed gives no more figures; a short window ends only its own.
  const bool counter_failed = s.usable() && s.counted && !ok;
  if (v.after_window) v.after_window();

  // This rank's power over [t0, t1]: the counter ran from step a to step b,
  // and the device idled before t0 and after t1.
  double watts = 0;
  if (ok) {
    const double joules = (b->joules - a->joules) - s.idle_W * ((t0 - a->at_s) + (b->at_s - t1));
    if (const auto short_by = energy::too_short(t1 - t0, s.interval_s)) {
      ok = false;
      why = *short_by;
    } else if (joules <= 0) {
      ok = false;
      why = "the counter did not advance over the window";
    } else {
      watts = joules / (t1 - t0);
    }
  }
  if (counter_failed) s.reason = why;
  const bool counted_failed = s.counted && !ok;
  const auto reasons = comm::allgather(counted_failed ? (why.empty() ? s.reason : why) : "");
  const double window_s = comm::max(t1 - t0);
  nlohmann::json j;
  for (const auto& reason : reasons)
    if (!reason.empty()) {
      j = unavailable(reason);
      j["window_s"] = window_s;
      j["executions"] = executions;
      return j;
    }
  const double total_watts = comm::sum(s.counted ? watts : 0.0);
  const double counters = comm::sum(s.counted ? 1.0 : 0.0);
  j = {{"status", "measured"},
       {"source", s.counter ? s.counter->source : ""},
       {"counters", static_cast<int>(counters)},
       {"window_s", window_s},
       {"window_unix_s", {unix0, unix1}},
       {"executions", executions},
       {"counter_step_s", step},
       {"average_power_W", total_watts},
       {"joules_per_execution", total_watts * r.time.median},
       {"fom_per_watt", {{"value", r.fom / total_watts}, {"units", r.fom_units + "/W"}}}};
  return j;
}

std::vector<KernelResult> measure(const Context& ctx, std::vector<Variant>& variants,
                                  const Plan& plan) {
  std::set<std::string> names;
  for (const auto& v : variants)
    if (!names.insert(v.name).second)
      throw Error(exit_runtime_error, "internal: two variants are named '" + v.name + "'");

  const std::vector<Turn> order = schedule(variants.size(), plan);
  std::vector<std::string> regions;
  for (const auto& v : variants) regions.push_back(profiling::region_name(v.name));
  std::int64_t executions = 0;
  for (const auto& t : order) executions += t.count;

  // Progress counts repetitions (warm-ups too) of every variant: one step
  // each time as many executions as there are variants have run.
  const auto per_step = static_cast<std::int64_t>(std::max<std::size_t>(variants.size(), 1));
  std::int64_t done = 0;
  KernelTimer timer;
  Progress progress(ctx, plan.progress_unit, executions / per_step);
  for (const Turn& t : order) {
    Variant& v = variants[t.index];
    if (t.opens_turn && v.before_turn) v.before_turn();
    for (std::int64_t i = 0; i < t.count; ++i) {
      if (v.before_each) v.before_each();
      if (t.timed) {
        // Each timed execution in its Kokkos Tools region, opened before the
        // timer's fence and barrier and closed after its last fence.
        const profiling::Region region(regions[t.index]);
        timer.time(v.name, v.run);
      } else {
        v.run();
        Kokkos::fence();
      }
      if (v.after_each) v.after_each();
      if (++done % per_step == 0) progress.step();
    }
    if (t.closes_turn && v.after_turn) v.after_turn();
  }
  Kokkos::fence();

  const auto stats = timer.finish();
  std::vector<KernelResult> results;
  for (const auto& v : variants) results.push_back(kernel_result(v, stats.at(v.name)));
  for (std::size_t i = 0; i < variants.size(); ++i)
    results[i].extra["energy"] = energy_window(variants[i], results[i]);
  return results;
}

}  // namespace karma
