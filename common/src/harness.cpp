#include "karma/harness.hpp"

#include "karma/progress.hpp"
#include "karma/timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
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

std::vector<KernelResult> measure(const Context& ctx, std::vector<Variant>& variants,
                                  const Plan& plan) {
  std::set<std::string> names;
  for (const auto& v : variants)
    if (!names.insert(v.name).second)
      throw Error(exit_runtime_error, "internal: two variants are named '" + v.name + "'");

  const std::vector<Turn> order = schedule(variants.size(), plan);
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
  return results;
}

}  // namespace karma
