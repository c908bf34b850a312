// The run's results from its timers and records: per storage a rebuild
// kernel (pairs/s) and a row-statistics kernel (GB/s), the storage's own
// figures for the JSON, and the table of --verbose.
#pragma once

#include "contact_run_checks.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/timing.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace karma::contact {

inline double sum_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

// Collective: the slowest rank's samples of a timed phase, one per step (or sweep).
inline std::vector<double> slowest(const KernelTimer& timer, const std::string& name) {
  std::vector<double> v = timer.samples(name);
  comm::max_inplace(v);
  return v;
}

inline nlohmann::json phase_json(const std::vector<double>& v) {
  const Stats s = summarize(v);
  return {{"total_s", sum_of(v)}, {"mean_s", s.mean}, {"min_s", s.min}, {"max_s", s.max}};
}

// One storage's slowest-rank times over the run.
struct StorageTimes {
  std::vector<double> search, fill, sweeps;
  std::vector<double> rebuild;  // binning (+ ghost exchange) + search + fill, per step
  double build = 0, stats = 0;  // totals of rebuild and sweeps
  bool uses_cells = true;       // the rebuild includes the cell binning (not arborx's)
};

// Collective: call for the same storages in the same order on every rank.
// `exchange`: a partitioned run's ghost exchange per step (else empty).
// `uses_cells`: false for a storage that bins nothing (arborx builds its tree).
inline StorageTimes storage_times(const KernelTimer& timer, const std::string& name,
                                  const std::vector<double>& binning,
                                  const std::vector<double>& exchange = {},
                                  bool uses_cells = true) {
  StorageTimes t;
  t.uses_cells = uses_cells;
  t.search = slowest(timer, name + ".search");
  t.fill = slowest(timer, name + ".fill");
  t.sweeps = slowest(timer, name + ".stats");
  t.rebuild.resize(t.search.size());
  for (std::size_t k = 0; k < t.rebuild.size(); ++k)
    t.rebuild[k] = (uses_cells ? binning[k] : 0.0) + (exchange.empty() ? 0.0 : exchange[k]) +
                   t.search[k] + t.fill[k];
  t.build = sum_of(t.rebuild);
  t.stats = sum_of(t.sweeps);
  return t;
}

// What the rates are made of: the whole run, all ranks.
struct RunTotals {
  double pairs_all = 0;    // pairs found in all timed steps, all ranks
  double steps_timed = 0;  // timed steps
  double sweeps = 0;       // timed sweeps per step
  double elements = 0;     // elements per copy of the problem
  double ranks = 1;        // copies: every rank's own (replicated), one (partitioned)
};

// The rebuild kernel: pairs found per second of binning, search and fill
// (arborx: of the tree's construction and the query).
inline KernelResult build_result(const std::string& name, const std::string& implementation,
                                 const StorageTimes& t, const StorageTimes* linked_list,
                                 const StorageRecord& rec, const std::vector<double>& binning,
                                 const RunTotals& run, const std::vector<double>& exchange = {}) {
  KernelResult b;
  b.name = name + ".build";
  b.implementation = implementation;
  b.variant = name;
  b.time = summarize(t.rebuild);
  b.fom = t.build > 0 ? run.pairs_all / t.build : 0;
  b.fom_units = "pairs/s";
  b.extra["fom"] = {{"value", b.fom},
                    {"units", "pairs/s"},
                    {"higher_is_better", true},
                    {"from", "pairs found in all steps (all ranks) / total rebuild time"}};
  if (t.uses_cells)
    b.extra["phases"] = {{"binning", phase_json(binning)},
                         {"search", phase_json(t.search)},
                         {"fill", phase_json(t.fill)}};
  else
    b.extra["phases"] = {{"tree", phase_json(t.search)}, {"query", phase_json(t.fill)}};
  if (!exchange.empty()) b.extra["phases"]["ghost_exchange"] = phase_json(exchange);
  b.extra["rebuild_s_mean"] = t.build / run.steps_timed;
  b.extra["overflows"] = rec.overflows;
  b.extra["refills"] = rec.refills;
  if (linked_list && linked_list->build > 0)
    b.extra["speedup_vs_linked_list"] = linked_list->build / t.build;
  return b;
}

// The row-statistics kernel: effective bytes of all sweeps over their total time.
inline KernelResult stats_result(const std::string& name, const StorageTimes& t,
                                 const StorageTimes* linked_list, const StorageRecord& rec,
                                 const RunTotals& run) {
  KernelResult st;
  st.name = name + ".stats";
  st.implementation = "kokkos";  // every storage's sweeps are karma's kernels
  st.variant = name;
  st.time = summarize(t.sweeps);
  st.bytes = rec.stats_bytes * run.ranks / (run.steps_timed * run.sweeps);
  st.fom = gigabytes_per_second(rec.stats_bytes * run.ranks, t.stats);
  st.fom_units = "GB/s";
  st.extra["fom"] = {{"value", st.fom},
                     {"units", "GB/s"},
                     {"higher_is_better", true},
                     {"from", "effective bytes of all sweeps (all ranks) / their total time"}};
  st.extra["time_per_sweep_s"] = t.stats / (run.steps_timed * run.sweeps);
  st.extra["rows_per_s"] = run.elements * run.ranks * run.steps_timed * run.sweeps / t.stats;
  if (linked_list && linked_list->stats > 0)
    st.extra["speedup_vs_linked_list"] = linked_list->stats / t.stats;
  return st;
}

// A storage's figures for the JSON: memory, overflow handling, checksums.
inline nlohmann::json storage_json(Storage s, const StorageRecord& rec, double elements,
                                   double mean_entries) {
  auto hexes = [](const std::vector<std::uint64_t>& v) {
    auto a = nlohmann::json::array();
    for (auto x : v) a.push_back(hex(x));
    return a;
  };
  const bool list = s == Storage::linked_list;
  return {
      {"peak_bytes", rec.peak_bytes},
      {"bytes_per_element", static_cast<double>(rec.peak_bytes) / elements},
      {"bytes_per_element_used", (list ? 4.0 : 8.0) + (list ? 8.0 : 4.0) * mean_entries / elements},
      {"overflows", rec.overflows},
      {"refills", rec.refills},
      {"rows_refilled", rec.rows_refilled},
      {"final_capacity", rec.final_capacity},
      {"pair_checksums", hexes(rec.pair_checksums)},
      {"stats_checksums", hexes(rec.stats_checksums)}};
}

// --verbose: rank 0 alone, figures already reduced over the ranks.
inline void print_table(const std::vector<std::string>& names,
                        const std::vector<StorageTimes>& times,
                        const std::vector<const StorageRecord*>& records,
                        const StorageTimes* linked_list, const std::vector<double>& binning,
                        const RunTotals& run, const std::vector<double>& exchange = {}) {
  std::printf("\n%-16s %10s %10s %10s %10s %8s %12s %10s %8s\n", "storage", "build ms", "binning",
              "search", "fill", "x LL", "stats ms", "GB/s", "x LL");
  const double per = 1e3 / run.steps_timed;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const StorageTimes& t = times[k];
    std::printf("%-16s %10.3f %10.3f %10.3f %10.3f %8.2f %12.4f %10.1f %8.2f\n", names[k].c_str(),
                t.build * per, t.uses_cells ? sum_of(binning) * per : 0.0, sum_of(t.search) * per,
                sum_of(t.fill) * per,
                linked_list && linked_list->build > 0 ? linked_list->build / t.build : 0.0,
                t.stats * 1e3 / (run.steps_timed * run.sweeps),
                gigabytes_per_second(records[k]->stats_bytes * run.ranks, t.stats),
                linked_list && linked_list->stats > 0 ? linked_list->stats / t.stats : 0.0);
  }
  if (!exchange.empty())
    std::printf("(build ms includes the ghost exchange: %.3f ms a step)\n", sum_of(exchange) * per);
}

}  // namespace karma::contact
