// The run's checks, step by step: what they count over the run (Tallies),
// how each step's storages are checked against the first one's rows, and
// the verification lines of the report.
#pragma once

#include "deck/contact_config.hpp"
#include "verification/contact_verify_owned.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace karma::contact {

using Trace = std::function<void(const char*)>;

inline std::string hex(std::uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%016" PRIx64, v);
  return text;
}

// What the checks count over the whole run, on this rank.
struct Tallies {
  std::int64_t bf_wrong = 0, sample_wrong = 0, variants_wrong = 0, stats_wrong = 0;
  MeshCheck mesh_wrong;
  double mesh_seconds = 0;  // the check of every row, all steps
  std::int64_t overflow_left = 0, forced_failures = 0;
  std::int64_t checksum_steps_differ = 0, stats_checksum_steps_differ = 0;
  // Steps whose whole-step lists or statistics differ from the rebuild's.
  std::int64_t whole_steps_differ = 0;
  StructureErrors structure;
  std::int64_t forced_overflows = 0, forced_refills = 0, forced_rows_refilled = 0;
  // Partitioned runs, over all ranks: steps whose crossing halves differ,
  // and steps whose pairs counted by their owners are not half the entries.
  std::int64_t cross_steps_wrong = 0, owner_steps_wrong = 0;
  std::int64_t cross_pairs = 0;  // pairs held by two ranks, all steps
};

// The rows the device scan checks each step: half anywhere, half in the
// layers that meet (A's top, B's bottom).
inline std::vector<Index> sample_rows(const Config& cfg) {
  std::vector<Index> ids;
  const Index nn = cfg.n;
  for (std::int64_t k = 0; k < cfg.sample_rows; ++k) {
    const std::uint64_t r =
        mix64(cfg.seed ^ (0xa0761d6478bd642fULL + static_cast<std::uint64_t>(k)));
    if (k % 2 == 0)
      ids.push_back(static_cast<Index>(r % static_cast<std::uint64_t>(cfg.shape.elements)));
    else if (k % 4 == 1)
      ids.push_back((nn - 1) * nn * nn +
                    static_cast<Index>(r % static_cast<std::uint64_t>(nn * nn)));
    else
      ids.push_back(cfg.shape.elements_a +
                    static_cast<Index>(r % static_cast<std::uint64_t>(4 * nn * nn)));
  }
  return ids;
}

// What a step's checks keep while its storages are checked one after another.
struct StepChecks {
  Rows reference;  // the first storage's rows, sorted
  SignatureSummary summary;
  bool have_reference = false;
  std::vector<std::uint64_t> pair_sums, stats_sums;  // one per checked storage
  CrossRanks cross;   // partitioned: the first storage's crossing halves
  double pairs = -1;  // partitioned: pairs counted by their owners, all ranks
};

// The sampled rows, and the row signatures of the first storage and of the
// one being compared, made once for the run (in this order: see make_blocks).
// Partitioned runs: the rows' global ids, and the nodes the check of every
// row computes boxes from.
struct CheckArrays {
  Kokkos::View<Index*, Memory> samples;
  Signatures reference, current;
  GlobalIds ids;
  Coords xyz;
};

inline CheckArrays make_check_arrays(Index rows, const std::vector<Index>& sample_ids,
                                     const GlobalIds& ids = {}, const Coords& xyz = {}) {
  CheckArrays a;
  a.samples = Kokkos::View<Index*, Memory>("contact::samples", sample_ids.size());
  a.reference = make_signatures(rows, ids);
  a.current = make_signatures(rows, ids);
  a.ids = ids;
  a.xyz = xyz;
  auto h = Kokkos::create_mirror_view(a.samples);
  for (std::size_t k = 0; k < sample_ids.size(); ++k) h(k) = sample_ids[k];
  Kokkos::deep_copy(a.samples, h);
  return a;
}

// The first storage's rows of a step, sorted, against the rules, the device
// scan of the sampled rows, the mesh's own structure and (small problems) a
// host brute force.
inline void check_reference_rows(const Config& cfg, std::int64_t b_z, const Boxes& boxes,
                                 const Rows& reference, const CheckArrays& arrays, Tallies& t,
                                 const Trace& trace, StepChecks& step) {
  const StructureErrors se =
      cfg.partitioned
          ? owned_structure_errors(reference, arrays.ids.ids, cfg.shape.elements, step.cross)
          : structure_errors(reference);
  trace("structure");
  t.structure.out_of_range += se.out_of_range;
  t.structure.self += se.self;
  t.structure.duplicates += se.duplicates;
  t.structure.asymmetric += se.asymmetric;
  if (arrays.samples.extent(0) > 0)
    t.sample_wrong += sample_rows_wrong(boxes, arrays.samples, arrays.reference);
  trace("sampled rows");
  Kokkos::fence();
  Kokkos::Timer mesh_timer;
  const MeshCheck mc = cfg.partitioned ? owned_mesh_rows_wrong(cfg.shape, b_z, arrays.xyz, boxes,
                                                               arrays.ids.ids, reference)
                                       : mesh_rows_wrong(cfg.shape, b_z, boxes, reference);
  t.mesh_seconds += mesh_timer.seconds();
  t.mesh_wrong.rows_wrong += mc.rows_wrong;
  t.mesh_wrong.boxes_outside += mc.boxes_outside;
  trace("all rows");
  if (cfg.shape.elements <= cfg.brute_force_max) {
    const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, boxes);
    t.bf_wrong += brute_force_rows_wrong(host_boxes, to_host(reference));
  }
}

// Checks storage `index` of a step after its sweeps (untimed): its row
// signatures against the first storage's, the first one's rows in full
// (check_reference_rows), and the statistics the sweeps left against the
// rows. Returns the signature summary of the storage's rows, or entries -1
// when rows are still past capacity and nothing could be checked.
inline SignatureSummary check_storage(const Config& cfg, std::size_t index,
                                      const NeighbourStorage& st, std::int64_t b_z,
                                      const Boxes& boxes, const RowStats& stats,
                                      const CheckArrays& arrays, StepChecks& step, Tallies& t,
                                      StorageRecord& rec, const Trace& trace) {
  if (const std::int64_t left = st.overflowed_rows(); left > 0) {
    t.overflow_left += left;
    SignatureSummary none;
    none.entries = -1;
    return none;
  }
  const Signatures& sig = index == 0 ? arrays.reference : arrays.current;
  st.signatures(sig);
  const SignatureSummary sum = summarize_signatures(sig);
  trace("signatures");
  if (index == 0) {
    step.summary = sum;
    step.have_reference = true;
    step.reference = st.sorted_rows();
    trace("canonical");
    check_reference_rows(cfg, b_z, boxes, step.reference, arrays, t, trace, step);
  } else {
    t.variants_wrong += signatures_differing(sig, arrays.reference);
  }
  t.stats_wrong += stats_rows_wrong(stats, step.reference);
  trace("stats checked");
  rec.pair_checksums.push_back(sum.checksum);
  rec.stats_checksums.push_back(stats_checksum(stats, arrays.ids));
  step.pair_sums.push_back(rec.pair_checksums.back());
  step.stats_sums.push_back(rec.stats_checksums.back());
  return sum;
}

// Every storage of a step must give the same checksums.
inline void check_step_checksums(const StepChecks& step, Tallies& t) {
  auto differ = [](const std::vector<std::uint64_t>& v) {
    return std::any_of(v.begin(), v.end(), [&](auto x) { return x != v.front(); });
  };
  if (differ(step.pair_sums)) ++t.checksum_steps_differ;
  if (differ(step.stats_sums)) ++t.stats_checksum_steps_differ;
}

// Partitioned runs, collective: the step's figures over all ranks (entries,
// empty rows, checksums: sums; longest row: the maximum) in place of this
// rank's, the pairs counted by their owners, and the checks that need every
// rank: the crossing halves match, the owners' pairs are half the entries.
inline void reduce_step_over_ranks(StepChecks& step, Tallies& t) {
  SignatureSummary& s = step.summary;
  s.entries = comm::sum(s.entries);
  s.empty = comm::sum(s.empty);
  s.longest = comm::max(s.longest);
  const std::int64_t sizes = comm::max(static_cast<std::int64_t>(step.pair_sums.size()));
  if (sizes == static_cast<std::int64_t>(step.pair_sums.size()) &&
      comm::all(step.pair_sums.size() == step.stats_sums.size())) {
    comm::sum_wrapping_in_place(step.pair_sums.data(), sizes);
    comm::sum_wrapping_in_place(step.stats_sums.data(), sizes);
  }
  const CrossRanks& c = step.cross;
  std::uint64_t hashes[2] = {c.up_hash, c.down_hash};
  comm::sum_wrapping_in_place(hashes, 2);
  const std::int64_t up = comm::sum(c.up), down = comm::sum(c.down);
  const std::int64_t owners = comm::sum(step.have_reference ? c.owner_pairs : 0);
  if (up != down || hashes[0] != hashes[1]) ++t.cross_steps_wrong;
  if (!step.have_reference || 2 * owners != s.entries) ++t.owner_steps_wrong;
  t.cross_pairs += up;
  step.pairs = static_cast<double>(owners);
}

// Forced overflow: capacity 8 (less than the longest row) must overflow,
// then grow, refill and give exactly the reference lists. Returns the
// step's record of it; adds the array's bytes to `live_bytes`.
template <class Dynamic>
nlohmann::json check_forced_overflow(const Search& search, Index elements, std::int64_t max_row,
                                     const CheckArrays& arrays, Tallies& t,
                                     std::int64_t& live_bytes) {
  const std::int64_t forced_capacity =
      std::max<std::int64_t>(0, std::min<std::int64_t>(8, max_row - 1));
  Dynamic forced("contact::forced", elements, forced_capacity);
  fill_dynamic(search, forced);
  const std::int64_t asked = forced.max_count();
  const bool overflowed = forced.overflowed_rows() > 0 && asked == max_row;
  t.forced_overflows += overflowed ? 1 : 0;
  t.forced_rows_refilled +=
      recover_dynamic(search, forced, OverflowedRows(elements), /*over_ranks=*/false, 1.0).refilled;
  const std::int64_t again = forced.max_count();
  ++t.forced_refills;
  live_bytes += forced.footprint_bytes();
  bool same = overflowed && again == forced.capacity();
  if (same) {
    array_signatures(DynamicAccess<Dynamic>{forced}, arrays.current);
    same = signatures_differing(arrays.current, arrays.reference) == 0;
  }
  if (!same && max_row > 0) ++t.forced_failures;
  return {{"capacity", forced_capacity}, {"largest_count", asked}, {"overflowed", overflowed}};
}

// Collective: how many ranks' checksums differ from rank 0's (every rank
// solved the same problem).
inline std::int64_t ranks_differing(const std::vector<StorageRecord>& records) {
  std::string pairs, stats;
  for (const auto& r : records) {
    for (auto x : r.pair_checksums) pairs += hex(x);
    for (auto x : r.stats_checksums) stats += hex(x);
  }
  const auto all_pairs = comm::allgather(pairs), all_stats = comm::allgather(stats);
  auto differing = [](const std::vector<std::string>& v) {
    return std::count_if(v.begin(), v.end(), [&](const auto& x) { return x != v.front(); });
  };
  return differing(all_pairs) + differing(all_stats);
}

// The run's checks, summed over ranks.
inline std::vector<Check> verification_checks(const Config& cfg, const Tallies& t,
                                              std::int64_t ranks_differ) {
  auto global = [](std::int64_t v) { return static_cast<double>(comm::sum(v)); };
  std::vector<Check> checks;
  if (cfg.shape.elements <= cfg.brute_force_max)
    checks.push_back({"brute force", "rows differing from a host O(N^2) search, all steps",
                      global(t.bf_wrong), 0});
  if (cfg.sample_rows > 0)
    checks.push_back({"sampled rows",
                      "of " + std::to_string(cfg.sample_rows) +
                          " rows per step, those differing from an O(N) device scan",
                      global(t.sample_wrong), 0});
  checks.push_back(
      {"all rows",
       "rows differing from a search over the mesh's structure (candidates from element "
       "indices, not the cell grid), plus boxes outside their elements' bounds, all steps",
       global(t.mesh_wrong.rows_wrong + t.mesh_wrong.boxes_outside), 0});
  checks.push_back({"structure", "self pairs, duplicates, asymmetric and out-of-range entries",
                    global(t.structure.total()), 0});
  if (cfg.partitioned) {
    // Already over all ranks (reduce_step_over_ranks).
    checks.push_back({"crossing pairs",
                      "steps where the pairs held across ranks are not held by both owners "
                      "(halves summed over ranks differ in count or hash)",
                      static_cast<double>(t.cross_steps_wrong), 0});
    checks.push_back({"pair owners",
                      "steps where the pairs counted once, by the owner of their lower id, "
                      "are not half the entries of all ranks' rows",
                      static_cast<double>(t.owner_steps_wrong), 0});
  }
  if (cfg.storages.size() > 1)
    checks.push_back(
        {"storages agree", "rows differing from the first storage's", global(t.variants_wrong), 0});
  checks.push_back({"pair checksums",
                    "steps whose pair checksums differ between storages, plus ranks "
                    "whose checksums differ from rank 0's",
                    global(t.checksum_steps_differ) + static_cast<double>(ranks_differ), 0});
  checks.push_back({"row statistics", "rows whose statistics differ from their lists",
                    global(t.stats_wrong), 0});
  checks.push_back({"stats checksums",
                    "steps whose row-statistics checksums differ between storages",
                    global(t.stats_checksum_steps_differ), 0});
  checks.push_back({"overflow recovered", "rows still past capacity after a refill",
                    global(t.overflow_left), 0});
  if (cfg.whole_steps)
    checks.push_back({"whole steps",
                      "steps and storages whose whole step's lists or statistics differ in "
                      "checksum from its checked rebuild and sweeps",
                      global(t.whole_steps_differ), 0});
  if (cfg.overflow_check)
    checks.push_back({"forced overflow",
                      "steps where capacity 8 did not overflow or differed after growing "
                      "and refilling",
                      global(t.forced_failures), 0});
  return checks;
}

}  // namespace karma::contact
