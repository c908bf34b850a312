// The run's results besides the harness's: per storage, what its rebuild
// kernel (pairs/s) and row-statistics kernel (GB/s) add to their results,
// its own figures for the JSON; the steps' log, the problem's record, and
// the table of --verbose.
#pragma once

#include "deck/contact_memory.hpp"
#include "search/contact_steps.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/timing.hpp"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

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

// What the rates are made of: the whole run, all ranks.
struct RunTotals {
  double pairs_all = 0;    // pairs found in all timed steps, all ranks
  double steps_timed = 0;  // timed steps
  double sweeps = 0;       // timed sweeps per step
  double elements = 0;     // elements per copy of the problem
  double ranks = 1;        // copies: every rank's own (replicated), one (partitioned)
};

// A storage's rebuild phases: the name the results show, and the one it is
// timed under (<storage>.<timed>): a partitioned run's ghost exchange, then
// binning, search and fill, or arborx's tree and query.
struct PhaseName {
  const char* shown;
  const char* timed;
};

inline std::vector<PhaseName> phase_names(const NeighbourStorage& st, bool partitioned) {
  std::vector<PhaseName> names;
  if (partitioned) names.push_back({"ghost_exchange", "ghost_exchange"});
  if (st.uses_cells)
    names.insert(names.end(), {{"binning", "binning"}, {"search", "search"}, {"fill", "fill"}});
  else
    names.insert(names.end(), {{"tree", "search"}, {"query", "fill"}});
  return names;
}

// Collective: a storage's phases per timed step, slowest rank.
inline nlohmann::json phases_json(const KernelTimer& phases, const NeighbourStorage& st,
                                  bool partitioned) {
  nlohmann::json j = nlohmann::json::object();
  for (const PhaseName& p : phase_names(st, partitioned))
    j[p.shown] = phase_json(slowest(phases, st.name + "." + p.timed));
  return j;
}

// The rebuild kernel's figures besides the harness's: pairs found per
// second of the whole rebuild (ghost exchange, binning, search and fill, or
// arborx's tree and query), its phases, the overflow handling.
inline void describe_build(KernelResult& b, nlohmann::json phases, const StorageRecord& rec,
                           const KernelResult* linked_list) {
  b.extra["fom"] = {{"value", b.fom},
                    {"units", "pairs/s"},
                    {"higher_is_better", true},
                    {"from", "pairs found in all steps (all ranks) / total rebuild time"}};
  b.extra["phases"] = std::move(phases);
  b.extra["rebuild_s_mean"] = b.time.mean;
  b.extra["overflows"] = rec.overflows;
  b.extra["refills"] = rec.refills;
  if (linked_list && b.time.mean > 0)
    b.extra["speedup_vs_linked_list"] = linked_list->time.mean / b.time.mean;
}

// The row-statistics kernel's figures besides the harness's: effective
// bytes of all sweeps over their total time.
inline void describe_stats(KernelResult& st, const RunTotals& run,
                           const KernelResult* linked_list) {
  st.extra["fom"] = {{"value", st.fom},
                     {"units", "GB/s"},
                     {"higher_is_better", true},
                     {"from", "effective bytes of all sweeps (all ranks) / their total time"}};
  st.extra["time_per_sweep_s"] = st.time.mean;
  st.extra["rows_per_s"] = st.time.mean > 0 ? run.elements * run.ranks / st.time.mean : 0.0;
  if (linked_list && st.time.mean > 0)
    st.extra["speedup_vs_linked_list"] = linked_list->time.mean / st.time.mean;
}

// A whole step of a storage, the figure the step and scaling tables use:
// the whole step's mean time where it was run as one (`whole`, the .step
// kernel), else one rebuild and `sweeps` sweeps of the statistics, each at
// its own fenced mean, as karma 1.0 formed it (kept beside it by name).
inline void describe_step(KernelResult& build, const KernelResult& stats, std::int64_t sweeps,
                          KernelResult* whole) {
  const double kernels = build.time.mean + static_cast<double>(sweeps) * stats.time.mean;
  build.extra["step_s_mean_of_kernels"] = kernels;
  build.extra["step_s_mean"] = whole ? whole->time.mean : kernels;
  build.extra["step_timing"] = whole ? "whole" : "kernels";
  if (!whole) return;
  whole->extra["fom"] = {{"value", whole->fom},
                         {"units", "pairs/s"},
                         {"higher_is_better", true},
                         {"from",
                          "pairs found in all steps (all ranks) / total time of the whole "
                          "steps, each its rebuild and sweeps between two fences"}};
  whole->extra["step_s_mean"] = whole->time.mean;
  whole->extra["step_s_mean_of_kernels"] = kernels;
}

// A storage's figures for the JSON: memory, overflow handling, checksums.
// Dynamic rows: each grow, and the high-water memory of the largest rank
// beside what the longest row needs of each of its rows (within the growth
// factor, or the first capacity where rows never outgrew it).
inline nlohmann::json growth_json(const StorageRecord& rec, double growth) {
  auto grows = nlohmann::json::array();
  for (const Grow& g : rec.grows)
    grows.push_back({{"step", g.step},
                     {"timed", g.timed},
                     {"capacity_from", g.from},
                     {"capacity_to", g.to},
                     {"bytes", g.bytes},
                     {"seconds", g.seconds}});
  const double needed =
      static_cast<double>(rec.largest_row) * static_cast<double>(rec.rank_rows) * sizeof(int);
  return {{"growth_factor", growth},
          {"first_capacity", rec.first_capacity},
          {"final_capacity", rec.final_capacity},
          {"longest_row", rec.largest_row},
          {"grows", grows},
          {"high_water_bytes_per_rank", rec.rank_peak_bytes},
          {"entries_bytes_needed_per_rank", needed},
          {"capacity_over_longest_row",
           rec.largest_row > 0
               ? static_cast<double>(rec.final_capacity) / static_cast<double>(rec.largest_row)
               : 0.0}};
}

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

// --verbose: rank 0 alone, figures already reduced over the ranks; the
// kernels in pairs, each storage's rebuild then its statistics (the whole
// steps, where run, after the pairs), and each storage's step.
inline void print_table(const std::vector<KernelResult>& kernels, std::size_t storages) {
  std::printf("\n%-16s %10s %10s %10s %10s %8s %12s %10s %8s %10s\n", "storage", "build ms",
              "binning", "search", "fill", "x LL", "stats ms", "GB/s", "x LL", "step ms");
  const auto speedup = [](const KernelResult& k) {
    return k.extra.value("speedup_vs_linked_list", 0.0);
  };
  bool exchange = false;
  for (std::size_t k = 0; k + 1 < 2 * storages; k += 2) {
    const KernelResult &b = kernels[k], &st = kernels[k + 1];
    const nlohmann::json& phases = b.extra["phases"];
    // arborx's tree and query stand in the search and fill columns.
    const auto ms = [&](const char* phase) {
      return phases.contains(phase) ? 1e3 * phases[phase]["mean_s"].get<double>() : 0.0;
    };
    exchange = exchange || phases.contains("ghost_exchange");
    std::printf("%-16s %10.3f %10.3f %10.3f %10.3f %8.2f %12.4f %10.1f %8.2f %10.3f\n",
                b.variant.c_str(), 1e3 * b.time.mean, ms("binning"), ms("search") + ms("tree"),
                ms("fill") + ms("query"), speedup(b), 1e3 * st.time.mean, st.fom, speedup(st),
                1e3 * b.extra.value("step_s_mean", 0.0));
  }
  if (exchange) std::printf("(build ms includes each storage's ghost exchange)\n");
}

// What the step loop leaves for the report.
struct StepLog {
  Tallies tally;
  nlohmann::json per_step = nlohmann::json::array();
  double total_pairs = 0, total_entries = 0;  // over the timed steps, this rank
  std::int64_t shared_bytes = 0, peak_tracked = 0;
};

// One step's record in the JSON, and the run's totals: the pairs and rows
// the first storage found.
inline void log_step(StepLog& log, nlohmann::json step_json, const StepChecks& checks,
                     Index elements) {
  const std::int64_t entries = checks.have_reference ? checks.summary.entries : -1;
  const double pairs =
      checks.pairs >= 0 ? checks.pairs : (entries >= 0 ? static_cast<double>(entries) / 2 : 0.0);
  const double counted = static_cast<double>(std::max<std::int64_t>(entries, 0));
  step_json["pairs"] = pairs;
  step_json["entries"] = entries;
  step_json["max_row"] = checks.summary.longest;
  step_json["mean_row"] = counted / static_cast<double>(elements);
  step_json["empty_rows"] = checks.summary.empty;
  step_json["pair_checksum"] = checks.pair_sums.empty() ? "" : hex(checks.pair_sums[0]);
  step_json["stats_checksum"] = checks.stats_sums.empty() ? "" : hex(checks.stats_sums[0]);
  log.total_pairs += pairs;
  log.total_entries += counted;
  log.per_step.push_back(std::move(step_json));
}

// What the JSON records of the problem and the run besides the kernels.
// Collective (the time of the full row checks is the slowest rank's).
inline nlohmann::json problem_json(const Scene& scene, const Estimate& est, const StepLog& log,
                                   const nlohmann::json& storages_json, double steps_timed,
                                   const char* dynamic_layout) {
  const Config& cfg = scene.cfg;
  const MeshShape& shape = cfg.shape;
  std::vector<std::string> names;
  for (Storage s : cfg.storages) names.push_back(name_of(s));
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const char* scaling =
      cfg.partitioned
          ? "strong: one mesh partitioned over the ranks (recursive bisection of the x-y plane), "
            "ghosts exchanged every step; figures are of the whole mesh, over all ranks"
          : "weak: every rank builds and checks its own copy of the whole problem";
  return {{"n", cfg.n},
          {"elements", shape.elements},
          {"elements_a", shape.elements_a},
          {"elements_b", shape.elements_b},
          {"nodes", shape.nodes},
          {"steps", cfg.steps},
          {"steps_timed", steps_timed},
          {"sweeps", cfg.sweeps},
          {"storage", names},
          {"capacity", cfg.capacity},
          {"seed", cfg.seed},
          {"cell_size", static_cast<double>(cfg.cell) / unit},
          {"grid_cells", scene.blocks.cells.grid.cells},
          {"dynamic_layout", dynamic_layout},
          {"lanes", cfg.lanes},
          {"search", cfg.pairs ? "pairs" : "rows"},
          {"list_stripes", cfg.list_stripes},
          {"fixed_point_units_per_h", unit},
          {"scaling", scaling},
          {"pairs_all_steps_per_rank", log.total_pairs},
          {"per_step", log.per_step},
          {"storages", storages_json},
          {"memory",
           {{"estimate_bytes_per_rank", est.total},
            {"entries_bound", est.entries_bound},
            {"max_row_bound", est.max_row_bound},
            {"shared_bytes", log.shared_bytes},
            {"peak_tracked_bytes", log.peak_tracked},
            {"host_max_rss_bytes", static_cast<double>(usage.ru_maxrss) * 1024.0}}},
          {"overflow_check",
           {{"enabled", cfg.overflow_check},
            {"overflows", log.tally.forced_overflows},
            {"refills", log.tally.forced_refills},
            {"rows_refilled", log.tally.forced_rows_refilled}}},
          {"verification",
           {{"all_rows",
             "every row of the first storage, every step, against a search over the "
             "mesh's structure; the other storages' rows against it by signature"},
            {"all_rows_seconds", comm::max(log.tally.mesh_seconds)},
            {"boxes_outside_bounds", log.tally.mesh_wrong.boxes_outside},
            {"brute_force", shape.elements <= cfg.brute_force_max},
            {"sample_rows", scene.sample_ids.size()},
            {"inject_fault", scene.run.inject_fault},
            {"search_fault", scene.search_fault < 0
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json{{"element", scene.search_fault},
                                                  {"rows_changed", scene.search_fault_rows}}}}},
          {"stats_bytes_from",
           "per sweep: the storage's structure for the entries it holds (linked-list: 4 B head + "
           "8 B per node; csr: 8 B offset + 4 B per entry; dynamic: 8 B count + 4 B per entry) "
           "plus 32 B of results per row"}};
}

}  // namespace karma::contact
