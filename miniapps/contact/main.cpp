// karma-contact: deck -> scene -> each storage's rebuild and row statistics
// as the core harness's variants, measured step by step (measure_steps) and
// checked after every step -> report. The deck is contact_deck.hpp, the scene
// and a step's work contact_steps.hpp; the geometry, mesh, cell-list search,
// the storages (one interface: contact_storages.hpp) and the row statistics
// are in contact_*.hpp, one concern each; the checks in contact_verify.hpp and
// contact_run_checks.hpp (a partitioned run's owned rows:
// contact_verify_owned.hpp), the memory bounds in contact_memory.hpp, the
// results in contact_report.hpp and contact_partition_report.hpp.
// contact.decomposition: partitioned splits the mesh over the ranks
// (contact_decomposition.hpp) and exchanges ghosts in every rebuild
// (contact_ghosts.hpp).
#include "deck/contact_deck.hpp"
#include "report/contact_partition_report.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma_code_table.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace karma;
using namespace karma::contact;

// What a timed step's checks keep until the step ends.
struct StepRecord {
  StepChecks checks;
  nlohmann::json json;
};

// The checksums of a storage's lists and statistics after its whole step,
// held until its rebuild and sweeps, which the checks read in full, give
// theirs: the two must agree.
struct StepSums {
  bool have = false, complete = false;  // complete: no row left past capacity
  std::uint64_t pairs = 0, stats = 0;
};

// A planted row fault (run.inject_fault self or foreign) is put into the
// checked lists alone, after the whole step ran.
bool planted_in_rows(const Scene& s) {
  return s.last && (s.run.inject_fault == "self" || s.run.inject_fault == "foreign");
}

// Before a storage's timed sweeps: run.inject_fault self or foreign at the
// last step, in the last storage; then run.warmup untimed sweeps.
void before_sweeps(Scene& s, NeighbourStorage& st, bool last_storage) {
  if (!s.timing) return;
  if (s.last && last_storage && !s.part) inject_row_fault(s, st);
  for (std::int64_t w = 0; w < s.run.warmup; ++w) st.row_stats(s.blocks.stats);
}

// After a storage's timed sweeps: its rows and statistics checked against
// the first storage's (check_storage), the bytes its sweeps read, and its
// part of the step's record.
void check_sweeps(Scene& s, NeighbourStorage& st, std::size_t index, StepRecord& step,
                  Tallies& tally, StepSums& whole) {
  s.trace(("stats " + st.name).c_str());
  StorageRecord& rec = s.record(st);
  rec.peak_bytes = std::max(rec.peak_bytes, st.bytes());
  const SignatureSummary sum =
      check_storage(s.cfg, index, st, s.b_z, s.blocks.boxes, s.blocks.stats, s.arrays, step.checks,
                    tally, rec, s.trace);
  if (whole.have && !planted_in_rows(s) &&
      (!whole.complete || sum.entries < 0 || whole.pairs != rec.pair_checksums.back() ||
       whole.stats != rec.stats_checksums.back()))
    ++tally.whole_steps_differ;
  whole.have = false;
  if (sum.entries < 0) return;  // rows past capacity: nothing to count
  // Effective bytes of one sweep: the storage's own structure for the rows
  // it holds, plus the four results per row.
  const double rows = static_cast<double>(s.rows), entries = static_cast<double>(sum.entries);
  rec.stats_bytes +=
      static_cast<double>(s.cfg.sweeps) * (st.structure_bytes(rows, entries) + 32 * rows);
  step.json[st.name] = {{"overflowed", rec.overflows},
                        {"refills", rec.refills},
                        {"capacity", rec.final_capacity},
                        {"bytes", st.bytes()}};
}

// What a storage's rebuild and whole-step variants share: pairs found per
// second of all their time, the rebuild's code, and an energy window that
// rebuilds at the last position, untimed, without faults, counting into a
// copy of the storage's record.
Variant rebuilding(Scene& s, NeighbourStorage& st, const std::string& kind) {
  Variant v;
  v.name = st.name + "." + kind;
  v.implementation = st.implementation;
  v.variant = st.name;
  v.fom = {FigureOfMerit::From::count_rate, 0, "pairs/s", 1, FigureOfMerit::Time::mean};
  v.code = st.build_code;
  if (st.uses_cells) v.code.push_back("karma::contact::bin");
  const auto saved = std::make_shared<StorageRecord>();
  v.before_window = [&s, &st, saved] {
    *saved = s.record(st);
    s.timing = s.last = false;
  };
  v.after_window = [&s, &st, saved] { s.record(st) = *saved; };
  return v;
}

// A storage's whole step as an application runs it (contact.step_timing
// whole): its rebuild, every phase back to back, then its sweeps, timed as
// one execution between two fences. The whole steps run before every
// rebuild variant, so that a step's grows land in them; after each, its
// lists' and statistics' checksums are kept for check_sweeps.
Variant whole_step(Scene& s, NeighbourStorage& st, StepSums& sums) {
  Variant v = rebuilding(s, st, "step");
  v.run = [&s, &st] {
    rebuild(s, st, /*phases=*/false);
    for (std::int64_t k = 0; k < s.cfg.sweeps; ++k) st.row_stats(s.blocks.stats);
  };
  v.code.insert(v.code.end(), st.stats_code.begin(), st.stats_code.end());
  v.after_turn = [&s, &st, &sums] {
    if (!s.timing) return;
    if (s.last && s.run.inject_fault == "whole-step" && &st == &s.storages.front())
      st.inject(s.cfg.shape.elements_a, /*self=*/true, s.cfg.shape.elements);
    sums = {true, st.overflowed_rows() == 0, 0, 0};
    if (!sums.complete) return;
    st.signatures(s.arrays.current);
    sums.pairs = summarize_signatures(s.arrays.current).checksum;
    sums.stats = stats_checksum(s.blocks.stats, s.arrays.ids);
  };
  return v;
}

// The storages as the harness's variants, two each: the rebuild, once a
// step, and the row-statistics sweeps, `sweeps` a step, each storage
// checked after its sweeps; with whole steps, each storage's whole step
// first (whole_step). A step's work changes as block B moves, so a figure
// is all the work over all its time.
std::vector<Variant> storage_variants(Scene& s, StepRecord& step, Tallies& tally,
                                      std::vector<StepSums>& sums) {
  std::vector<Variant> variants;
  sums.assign(s.storages.size(), StepSums{});
  if (s.cfg.whole_steps)
    for (std::size_t k = 0; k < s.storages.size(); ++k)
      variants.push_back(whole_step(s, s.storages[k], sums[k]));
  for (std::size_t k = 0; k < s.storages.size(); ++k) {
    NeighbourStorage& st = s.storages[k];
    Variant build = rebuilding(s, st, "build");
    build.run = [&s, &st] { rebuild(s, st); };

    Variant stats;
    stats.name = st.name + ".stats";
    stats.implementation = "kokkos";  // every storage's sweeps are karma's kernels
    stats.variant = st.name;
    stats.run = [&s, &st] { st.row_stats(s.blocks.stats); };
    stats.fom.time = FigureOfMerit::Time::mean;
    stats.code = st.stats_code;
    stats.per_step = s.cfg.sweeps;
    const bool last_storage = k + 1 == s.storages.size();
    stats.before_turn = [&s, &st, last_storage] { before_sweeps(s, st, last_storage); };
    stats.after_turn = [&s, &st, &step, &tally, &sums, k] {
      if (s.timing) check_sweeps(s, st, k, step, tally, sums[k]);
    };
    variants.push_back(std::move(build));
    variants.push_back(std::move(stats));
  }
  return variants;
}

// After a timed step's turns: the checks across the storages, the forced
// overflow, a partitioned step's figures over the ranks, the step's record.
template <class Dynamic>
void end_step(Scene& s, StepRecord& step, StepLog& log) {
  StepChecks& checks = step.checks;
  check_step_checksums(checks, log.tally);
  log.shared_bytes = s.blocks.bytes();
  std::int64_t live_bytes = log.shared_bytes;
  for (const auto& st : s.storages) live_bytes += st.bytes();
  if (s.cfg.overflow_check && checks.have_reference) {
    // The check searches the cells, which arborx alone never bins.
    if (std::none_of(s.storages.begin(), s.storages.end(), [](auto& st) { return st.uses_cells; }))
      bin_boxes(s);
    step.json["forced_overflow"] = check_forced_overflow<Dynamic>(
        make_search(s), s.rows, checks.summary.longest, s.arrays, log.tally, live_bytes);
    s.trace("forced overflow");
  }
  if (s.part) {
    reduce_step_over_ranks(checks, log.tally);
    step.json["ghosts"] = ghost_step_json(s.part->ghosts);
    s.part->received.push_back(static_cast<double>(s.part->ghosts.received));
  }
  live_bytes += checks.reference.footprint_bytes() + 2 * s.rows * 16;
  log.peak_tracked = std::max(log.peak_tracked, live_bytes);
  log_step(log, std::move(step.json), checks, s.cfg.shape.elements);
  ++s.tracer.steps;
}

// Collective, after the last step: the run's totals, and the work of one
// execution of each variant (all ranks): the pairs a rebuild found and the
// bytes a sweep read, on average. A partitioned run's records become the
// whole mesh's.
RunTotals set_work(Scene& s, const StepLog& log, std::int64_t steps,
                   std::vector<Variant>& variants) {
  RunTotals run;
  // Copies of the problem the ranks solved: one each (replicated), or one
  // in all (partitioned).
  run.ranks = s.part ? 1 : comm::size();
  run.pairs_all = log.total_pairs * run.ranks;
  run.steps_timed = static_cast<double>(steps);
  run.sweeps = static_cast<double>(s.cfg.sweeps);
  run.elements = static_cast<double>(s.cfg.shape.elements);
  // The variants: the whole steps first, where run, then each storage's two.
  const std::size_t first = s.cfg.whole_steps ? s.storages.size() : 0;
  for (std::size_t k = 0; k < s.storages.size(); ++k) {
    StorageRecord& rec = s.record(s.storages[k]);
    rec.rank_peak_bytes = comm::max(rec.peak_bytes);
    rec.rank_rows = comm::max(static_cast<std::int64_t>(s.rows));
    if (s.part) {
      rec.stats_bytes = comm::sum(rec.stats_bytes);
      rec.peak_bytes = comm::sum(rec.peak_bytes);
      comm::sum_wrapping_in_place(rec.pair_checksums.data(),
                                  static_cast<std::int64_t>(rec.pair_checksums.size()));
      comm::sum_wrapping_in_place(rec.stats_checksums.data(),
                                  static_cast<std::int64_t>(rec.stats_checksums.size()));
    }
    variants[first + 2 * k].fom.count = run.pairs_all / run.steps_timed;
    variants[first + 2 * k + 1].bytes =
        rec.stats_bytes * run.ranks / (run.steps_timed * run.sweeps);
    if (s.cfg.whole_steps) variants[k].fom.count = run.pairs_all / run.steps_timed;
  }
  return run;
}

// The report: the checks, each kernel's figures besides the harness's, the
// storages' and the problem's records.
Report make_report(const Context& ctx, Scene& s, std::vector<KernelResult> kernels,
                   const StepLog& log, const RunTotals& run, const Estimate& est,
                   const char* dynamic_layout) {
  const Config& cfg = s.cfg;
  Report report;
  // Partitioned ranks hold parts of one mesh: their checksums differ by design.
  report.checks = verification_checks(cfg, log.tally, s.part ? 0 : ranks_differing(s.records));
  // The whole steps ran first in every step; in the results they follow
  // the rebuild and sweeps of every storage.
  const auto whole = static_cast<std::ptrdiff_t>(cfg.whole_steps ? s.storages.size() : 0);
  std::rotate(kernels.begin(), kernels.begin() + whole, kernels.end());
  std::size_t linked_list = kernels.size();
  for (std::size_t k = 0; k < s.storages.size(); ++k)
    if (s.storages[k].kind == Storage::linked_list) linked_list = 2 * k;
  const auto ll = [&](std::size_t offset) {
    return linked_list < kernels.size() ? &kernels[linked_list + offset] : nullptr;
  };
  nlohmann::json storages_json = nlohmann::json::object();
  for (std::size_t k = 0; k < s.storages.size(); ++k) {
    const NeighbourStorage& st = s.storages[k];
    const StorageRecord& rec = s.record(st);
    describe_build(kernels[2 * k], phases_json(s.phases, st, s.part.has_value()), rec, ll(0));
    describe_stats(kernels[2 * k + 1], run, ll(1));
    describe_step(kernels[2 * k], kernels[2 * k + 1], cfg.sweeps,
                  cfg.whole_steps ? &kernels[2 * s.storages.size() + k] : nullptr);
    storages_json[st.name] =
        storage_json(st.kind, rec, run.elements, log.total_entries / run.steps_timed);
    if (st.kind != Storage::dynamic) continue;
    storages_json[st.name]["growth"] = growth_json(rec, cfg.growth_factor);
    const double bound =
        std::max(static_cast<double>(rec.first_capacity),
                 std::ceil(cfg.growth_factor * static_cast<double>(rec.largest_row)));
    report.checks.push_back({"growth bound",
                             "dynamic rows' final capacity over the larger of the first "
                             "capacity and growth_factor x the longest row",
                             static_cast<double>(rec.final_capacity) / bound, 1});
  }
  report.kernels = std::move(kernels);
  report.problem = problem_json(s, est, log, storages_json, run.steps_timed, dynamic_layout);
  if (has_storage(cfg, Storage::arborx))
    report.problem["arborx"] = arborx_json(arborx_float_exact(cfg));
  if (s.part) {
    report.problem["decomposition"] =
        decomposition_json(*s.part, s.phases, s.storages, log.tally, run.steps_timed);
    print_decomposition(report.problem["decomposition"]);
  }
  if (ctx.verbose()) {
    print_table(report.kernels, s.storages.size());
    std::printf("pairs per step (last): %.0f, longest row %s\n",
                log.per_step.empty() ? 0.0 : log.per_step.back()["pairs"].get<double>(),
                log.per_step.empty() ? "-" : log.per_step.back()["max_row"].dump().c_str());
  }
  std::ostringstream summary;
  summary << "contact: n = " << cfg.n << " (" << cfg.shape.elements << " elements), "
          << run.steps_timed << " step(s), " << cfg.sweeps << " sweep(s) each, storages";
  for (const auto& st : s.storages) summary << " " << st.name;
  summary << "; dynamic layout " << dynamic_layout << ", capacity " << cfg.capacity << "; "
          << (cfg.pairs ? "pair" : "row") << " search; " << comm::size() << " rank(s), "
          << (s.part ? "one mesh partitioned (strong scaling)" : "weak scaling");
  report.summary = summary.str();
  return report;
}

template <class DynamicLayout>
Report run_typed(const Context& ctx, const Config& cfg) {
  using Dynamic = DynamicRaggedRight<int, Memory, DynamicLayout>;
  const char* dynamic_layout =
      std::is_same<DynamicLayout, Kokkos::LayoutLeft>::value ? "left" : "right";

  // --- memory, before anything is allocated -------------------------------------------
  const Estimate est = estimate(cfg);
  {
    std::ostringstream what;
    what << cfg.shape.elements << " elements, neighbour lists of at most " << est.entries_bound
         << " entries in " << cfg.storages.size() << " storage(s) and their checks";
    ctx.require_memory(est.total, what.str());
  }
  refuse_uncountable(cfg, est);

  // --- the scene, the storages, the checks' arrays (untimed) -----------------------------
  Scene scene(cfg, ctx.run);
  make_scene<Dynamic>(scene);

  // --- every storage measured and checked, step by step ----------------------------------
  StepRecord step;
  StepLog log;
  RunTotals run;
  std::vector<StepSums> sums;
  std::vector<Variant> variants = storage_variants(scene, step, log.tally, sums);
  // run.warmup warm-up steps at the start position first (the harness runs
  // them): kernels loaded, caches and pools warm.
  Steps steps;
  steps.count = last_step(cfg) - first_step(cfg) + 1;
  steps.before = [&](std::int64_t k, bool timed) {
    move_to(scene, first_step(cfg) + k, timed);
    if (timed)
      step = StepRecord{
          {}, {{"step", scene.step}, {"b_bottom", static_cast<double>(scene.b_z) / unit}}};
  };
  steps.after = [&, count = steps.count](std::int64_t k) {
    end_step<Dynamic>(scene, step, log);
    if (k + 1 == count) run = set_work(scene, log, count, variants);
  };
  std::vector<KernelResult> kernels = measure_steps(ctx, variants, steps);
  return make_report(ctx, scene, std::move(kernels), log, run, est, dynamic_layout);
}

Report run_contact(const Context& ctx) {
  const Config cfg = read_config(ctx.deck, ctx.run);
  if (cfg.dynamic_left) return run_typed<Kokkos::LayoutLeft>(ctx, cfg);
  return run_typed<Kokkos::LayoutRight>(ctx, cfg);
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{
      "contact",
      "contact detection between two moving blocks of hexahedra: neighbour lists in "
      "linked lists, compressed rows or dynamic ragged rows, and row statistics over them",
      contact_schema(),
      run_contact,
      &generated::code_table,
      contact_kernels()};
  return run_main(argc, argv, app);
}
