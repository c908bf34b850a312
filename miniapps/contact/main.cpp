// karma-contact: deck -> run -> report. The geometry, mesh, cell-list search,
// the three storages and the row statistics are in contact_*.hpp, one
// concern each; the checks in contact_verify.hpp.
#include "contact_storages.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/progress.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <sstream>
#include <tuple>

namespace {

using namespace karma;
using namespace karma::contact;

Schema contact_schema() {
  Schema s;
  s.integer("contact.n", 16,
            "block A is n x n x n elements of size 1, block B 2n x 2n x n of size 0.5: "
            "N = 5 n^3 elements (16: 20k, 64: 1.3M, 126: 10M, the MATAR paper's size)",
            1);
  s.integer("contact.steps", standard_steps,
            "steps; each moves block B down 0.05, rebuilds the lists and computes the row "
            "statistics (30: from 0.5 above A to 1.0 inside it; 0: one rebuild at the start)",
            0);
  s.integer("contact.sweeps", 100,
            "timed row-statistics sweeps per step (10000 reproduces the MATAR paper)", 1);
  s.choice_list("contact.storage", storage_names, storage_names,
                "neighbour-list storages, run side by side on the same search: linked-list "
                "(HOSS: a head per element, a node pool with an atomic counter), csr-two-pass "
                "(count, scan, fill), dynamic-ragged (rows of fixed capacity, grown on overflow)");
  s.choice("contact.search", "pairs", {"pairs", "rows"},
           "pairs: each overlapping pair is found once and written into both rows, with atomics "
           "(push_back, a swapped-in list head, an atomic cursor); rows: each row is searched and "
           "written by its own thread, without atomics on the rows");
  s.integer("contact.capacity", 32,
            "dynamic-ragged: first capacity of a row; the linked-list pool and the compressed "
            "values start with N x capacity entries too",
            1);
  s.integer("contact.seed", 2021, "seed of the node perturbations", 0);
  s.number("contact.cell_size", 1.0, "edge of a search cell, in units of block A's element size",
           0.25, 16.0);
  s.choice("contact.dynamic_layout", "auto", {"auto", "right", "left"},
           "dynamic-ragged storage: right (a row contiguous), left (slot k of neighbouring rows "
           "contiguous: coalesced on GPUs), auto (left on GPUs, right on CPUs)");
  s.integer("contact.lanes", 0,
            "vector lanes sharing a row in the statistics of compressed (and right-layout "
            "dynamic) rows on a GPU: 1, 2, 4, 8, 16 or 32 (0: 8 on GPUs; CPUs use 1)",
            0, 32);
  s.integer("contact.list_stripes", 0,
            "linked-list: counters the node pool is split into, element i taking nodes from "
            "stripe i mod stripes (0: 1 on CPUs, one counter as in HOSS; 4096 on GPUs, where "
            "one counter serialises the whole device)",
            0, 1 << 20);
  s.integer("contact.brute_force_max_elements", 25000,
            "check every row against a host O(N^2) search at every step when N is at most this", 0);
  s.integer("contact.sample_rows", 64,
            "rows checked at every step against an O(N) scan of all boxes on the device", 0);
  s.boolean("contact.overflow_check", true,
            "every step, also build dynamic rows of capacity 8 (less for tiny decks): they must "
            "overflow, grow, refill and agree with the other storages");
  s.choice("contact.inject_fault", "none", {"none", "self", "foreign", "search"},
           "testing: at the last step corrupt one entry of the last storage (self: a self-pair; "
           "foreign: a far element) or make the search miss one element's pairs with lower ids "
           "in every storage alike (search: an element of B's bottom layer whose rows are not "
           "sampled), which verification must catch");
  s.integer("run.warmup", 1,
            "untimed rebuilds and sweeps at the start position before the timed steps", 0);
  s.string("run.results_dir", ".",
           "directory for the results JSON when --output is not given (created if missing)");
  return s;
}

struct Config {
  int n = 0;
  MeshShape shape;
  std::int64_t steps = 0, sweeps = 0, capacity = 0, warmup = 0;
  std::uint64_t seed = 0;
  int cell = unit;
  std::vector<Storage> storages;
  bool dynamic_left = false;
  int lanes = 1;
  std::int64_t brute_force_max = 0, sample_rows = 0;
  bool overflow_check = true;
  bool pairs = true;
  int list_stripes = 1;
  std::string inject;
};

Config read_config(const Deck& deck) {
  Config c;
  const std::int64_t n = deck.integer("contact.n");
  // Element ids are 32-bit (as node indices of the lists): 5 n^3 < 2^31. The
  // count itself is computed with overflow checks, so that the message
  // about a huge n does not print a wrapped one.
  std::int64_t n3 = 0, elements = 0;
  if (__builtin_mul_overflow(n, n, &n3) || __builtin_mul_overflow(n3, n, &n3) ||
      __builtin_mul_overflow(n3, std::int64_t{5}, &elements)) {
    char count[32];
    std::snprintf(count, sizeof(count), "%.2g", 5.0 * static_cast<double>(n) * n * n);
    deck.fail("contact.n", "n = " + std::to_string(n) + " gives 5 n^3 = " + count +
                               " elements, more than 2^63 - 1 (a 64-bit count); element ids "
                               "are 32-bit, so n is at most 754");
  }
  if (n > 754)
    deck.fail("contact.n", "n = " + std::to_string(n) +
                               " gives 5 n^3 = " + std::to_string(elements) +
                               " elements; element ids are 32-bit, so n is at most 754");
  c.n = static_cast<int>(n);
  c.shape = mesh_shape(c.n);
  c.steps = deck.integer("contact.steps");
  // Block B must stay inside 32-bit fixed-point coordinates.
  if (c.steps > 100000) deck.fail("contact.steps", "at most 100000 steps");
  c.sweeps = deck.integer("contact.sweeps");
  c.capacity = deck.integer("contact.capacity");
  if (c.capacity > (std::int64_t{1} << 30)) deck.fail("contact.capacity", "at most 2^30");
  c.warmup = deck.integer("run.warmup");
  c.seed = static_cast<std::uint64_t>(deck.integer("contact.seed"));
  c.cell = static_cast<int>(std::lround(deck.number("contact.cell_size") * unit));
  for (const auto& name : deck.string_list("contact.storage"))
    for (std::size_t k = 0; k < storage_names.size(); ++k)
      if (storage_names[k] == name) c.storages.push_back(static_cast<Storage>(k));
  const std::string layout = deck.string("contact.dynamic_layout");
  c.dynamic_left = layout == "left" || (layout == "auto" && on_gpu);
  const std::int64_t lanes = deck.integer("contact.lanes");
  if (lanes != 0 && (lanes & (lanes - 1)) != 0)
    deck.fail("contact.lanes",
              "must be a power of two (1, 2, 4, 8, 16 or 32), or 0, got " + std::to_string(lanes));
  c.lanes = !on_gpu ? 1 : (lanes == 0 ? 8 : static_cast<int>(lanes));
  c.brute_force_max = deck.integer("contact.brute_force_max_elements");
  c.sample_rows = deck.integer("contact.sample_rows");
  c.overflow_check = deck.boolean("contact.overflow_check");
  c.inject = deck.string("contact.inject_fault");
  c.pairs = deck.string("contact.search") == "pairs";
  const std::int64_t stripes = deck.integer("contact.list_stripes");
  c.list_stripes = stripes > 0 ? static_cast<int>(stripes) : (on_gpu ? 4096 : 1);
  return c;
}

std::int64_t first_step(const Config& c) { return c.steps == 0 ? 0 : 1; }
std::int64_t last_step(const Config& c) { return c.steps; }

// --- memory: bounds from the geometry, before anything is allocated ---------------

struct Estimate {
  std::int64_t entries_bound = 0;  // neighbour entries (2 per pair) at any step
  std::int64_t max_row_bound = 0;
  std::int64_t cells = 0;
  std::int64_t cell_items_bound = 0;
  std::uint64_t shared = 0, verification = 0, total = 0;
  std::uint64_t storage[3] = {0, 0, 0};
};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

Estimate estimate(const Config& c) {
  const MeshShape& s = c.shape;
  const std::int64_t n = c.n, N = s.elements;
  Estimate e;
  // Box extents: an element plus its nodes' perturbation and the inflation.
  const std::int64_t box_a = h_a + 2 * (perturb_a + inflate),
                     box_b = h_b + 2 * (perturb_b + inflate);
  // Within a block a box reaches only its 26 neighbours (the perturbation
  // and inflation, 0.25 h, are less than half an element). Across blocks:
  const std::int64_t a_sees_b = (box_a + box_b) / h_b + 1, b_sees_a = (box_a + box_b) / h_a + 1;
  // Layers that can touch the other block at the deepest position.
  const std::int64_t deepest = std::min(b_bottom(c.n, first_step(c)), b_bottom(c.n, last_step(c)));
  const std::int64_t b_low = deepest - perturb_b - inflate;
  const std::int64_t a_top = n * h_a + perturb_a + inflate;
  const std::int64_t layers_a =
      std::clamp<std::int64_t>(n - floor_div(b_low - perturb_a - inflate, h_a) + 1, 0, n);
  const std::int64_t layers_b =
      a_top < b_low ? 0 : std::clamp<std::int64_t>(floor_div(a_top - b_low, h_b) + 2, 0, n);
  e.entries_bound = 26 * N + layers_a * n * n * a_sees_b * a_sees_b * a_sees_b +
                    layers_b * 4 * n * n * b_sees_a * b_sees_a * b_sees_a;
  e.max_row_bound = 26 + (layers_a > 0 ? a_sees_b * a_sees_b * a_sees_b : 0);
  // Cells: the grid is largest at the first or the last position.
  const Grid g0 = make_grid(c.n, b_bottom(c.n, first_step(c)), c.cell);
  const Grid g1 = make_grid(c.n, b_bottom(c.n, last_step(c)), c.cell);
  e.cells = std::max(g0.cells, g1.cells);
  auto per_dim = [&](std::int64_t extent) { return extent / c.cell + 2; };
  const std::int64_t ca = per_dim(box_a), cb = per_dim(box_b);
  e.cell_items_bound = s.elements_a * ca * ca * ca + s.elements_b * cb * cb * cb;

  const std::uint64_t N8 = static_cast<std::uint64_t>(N);
  const std::uint64_t E = static_cast<std::uint64_t>(e.entries_bound);
  const std::uint64_t first = N8 * static_cast<std::uint64_t>(c.capacity);
  e.shared = static_cast<std::uint64_t>(s.nodes) * 12 + N8 * 24 +
             static_cast<std::uint64_t>(e.cells) * 12 + 8 +
             static_cast<std::uint64_t>(e.cell_items_bound) * 4 + N8 * 32;  // + row statistics
  const std::uint64_t dynamic_rows =
      N8 * 8 + N8 * 4 * static_cast<std::uint64_t>(std::max(c.capacity, e.max_row_bound));
  for (Storage st : c.storages) {
    const int k = static_cast<int>(st);
    // Growth makes every stripe as large as the fullest one: room for 25%
    // imbalance and a few rows per stripe.
    if (st == Storage::linked_list)
      e.storage[k] = N8 * 4 + 8 * std::max(first, E + (c.list_stripes > 1 ? E / 4 : 0)) +
                     8 * static_cast<std::uint64_t>(c.list_stripes) *
                         (stripe_pad + 4 * static_cast<std::uint64_t>(e.max_row_bound));
    if (st == Storage::csr) e.storage[k] = N8 * 12 + 8 + 4 * std::max(first, E);
    if (st == Storage::dynamic) e.storage[k] = dynamic_rows;
  }
  // The first storage's rows sorted (and the row sizes on the way), two
  // sets of row signatures, and the capacity-8 rows of the overflow check.
  e.verification =
      (N8 * 8 + 8 + E * 4) + N8 * 8 + 2 * N8 * 16 +
      (c.overflow_check ? N8 * 8 + N8 * 4 * static_cast<std::uint64_t>(e.max_row_bound) : 0);
  e.total = e.shared + e.verification + e.storage[0] + e.storage[1] + e.storage[2];
  return e;
}

std::string hex(std::uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%016" PRIx64, v);
  return text;
}

// Per-step slowest-rank samples of a timed phase.
std::vector<double> slowest(const KernelTimer& timer, const std::string& name) {
  std::vector<double> v = timer.samples(name);
  comm::max_inplace(v);
  return v;
}

double sum_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

nlohmann::json phase_json(const std::vector<double>& v) {
  const Stats s = summarize(v);
  return {{"total_s", sum_of(v)}, {"mean_s", s.mean}, {"min_s", s.min}, {"max_s", s.max}};
}

// What the checks count over the whole run, on this rank.
struct Tallies {
  std::int64_t bf_wrong = 0, sample_wrong = 0, variants_wrong = 0, stats_wrong = 0;
  MeshCheck mesh_wrong;
  double mesh_seconds = 0;  // the check of every row, all steps
  std::int64_t overflow_left = 0, forced_failures = 0;
  std::int64_t checksum_steps_differ = 0, stats_checksum_steps_differ = 0;
  StructureErrors structure;
  std::int64_t forced_overflows = 0, forced_refills = 0, forced_rows_refilled = 0;
};

// Refuses, on every rank, a problem whose counts the kernels cannot hold.
void refuse_uncountable(const Config& cfg, const Estimate& est, Index elements) {
  if (est.max_row_bound >= max_row_for_int_sum)
    throw Error(exit_runtime_error,
                "rows of up to " + std::to_string(est.max_row_bound) +
                    " entries: the statistics' 32-bit sums could overflow",
                /*collective=*/true);
  const bool want_ll =
      std::count(cfg.storages.begin(), cfg.storages.end(), Storage::linked_list) > 0;
  const std::uint64_t first_pool = static_cast<std::uint64_t>(elements) * cfg.capacity;
  const std::uint64_t most = std::max(static_cast<std::uint64_t>(est.entries_bound), first_pool);
  if (want_ll && most >= max_pool)
    throw Error(exit_runtime_error,
                "the linked-list pool could need " + std::to_string(most) +
                    " nodes; its node indices are 32-bit (at most " + std::to_string(max_pool - 1) +
                    "): run a smaller n or capacity, or without linked-list",
                /*collective=*/true);
}

// The rows the device scan checks each step: half anywhere, half in the
// layers that meet (A's top, B's bottom).
std::vector<Index> sample_rows(const Config& cfg) {
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

// The first storage's rows of a step, sorted, against the rules, the device
// scan of the sampled rows, the mesh's own structure and (small problems) a
// host brute force.
void check_reference_rows(const Config& cfg, std::int64_t b_z, const Boxes& boxes,
                          const Rows& reference, const Kokkos::View<Index*, Memory>& samples,
                          const Signatures& ref_sig, Tallies& t,
                          const std::function<void(const char*)>& trace) {
  const StructureErrors se = structure_errors(reference);
  trace("structure");
  t.structure.out_of_range += se.out_of_range;
  t.structure.self += se.self;
  t.structure.duplicates += se.duplicates;
  t.structure.asymmetric += se.asymmetric;
  if (samples.extent(0) > 0) t.sample_wrong += sample_rows_wrong(boxes, samples, ref_sig);
  trace("sampled rows");
  Kokkos::fence();
  Kokkos::Timer mesh_timer;
  const MeshCheck mc = mesh_rows_wrong(cfg.shape, b_z, boxes, reference);
  t.mesh_seconds += mesh_timer.seconds();
  t.mesh_wrong.rows_wrong += mc.rows_wrong;
  t.mesh_wrong.boxes_outside += mc.boxes_outside;
  trace("all rows");
  if (cfg.shape.elements <= cfg.brute_force_max) {
    const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, boxes);
    t.bf_wrong += brute_force_rows_wrong(host_boxes, to_host(reference));
  }
}

// Forced overflow: capacity 8 (less than the longest row) must overflow,
// then grow, refill and give exactly the reference lists. Returns the
// step's record of it; adds the array's bytes to `live_bytes`.
template <class Dynamic>
nlohmann::json check_forced_overflow(const Search& search, Index elements, std::int64_t max_row,
                                     const Signatures& ref_sig, const Signatures& scratch,
                                     Tallies& t, std::int64_t& live_bytes) {
  const std::int64_t forced_capacity =
      std::max<std::int64_t>(0, std::min<std::int64_t>(8, max_row - 1));
  Dynamic forced("contact::forced", elements, forced_capacity);
  fill_dynamic(search, forced);
  const std::int64_t asked = forced.max_count();
  const bool overflowed = forced.overflowed_rows() > 0 && asked == max_row;
  t.forced_overflows += overflowed ? 1 : 0;
  t.forced_rows_refilled += recover_dynamic(search, forced);
  const std::int64_t again = forced.max_count();
  ++t.forced_refills;
  live_bytes += forced.footprint_bytes();
  bool same = overflowed && again == forced.capacity();
  if (same) {
    array_signatures(DynamicAccess<Dynamic>{forced}, scratch);
    same = signatures_differing(scratch, ref_sig) == 0;
  }
  if (!same && max_row > 0) ++t.forced_failures;
  return {{"capacity", forced_capacity}, {"largest_count", asked}, {"overflowed", overflowed}};
}

// The run's checks, summed over ranks.
std::vector<Check> verification_checks(const Config& cfg, const Tallies& t,
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
  if (cfg.overflow_check)
    checks.push_back({"forced overflow",
                      "steps where capacity 8 did not overflow or differed after growing "
                      "and refilling",
                      global(t.forced_failures), 0});
  return checks;
}

template <class DynamicLayout>
Report run_typed(const Context& ctx, const Config& cfg) {
  using Dynamic = DynamicRaggedRight<int, Memory, DynamicLayout>;
  const MeshShape& shape = cfg.shape;
  const Index N = shape.elements;
  const Estimate est = estimate(cfg);
  {
    std::ostringstream what;
    what << N << " elements, neighbour lists of at most " << est.entries_bound << " entries in "
         << cfg.storages.size() << " storage(s) and their checks";
    ctx.require_memory(est.total, what.str());
  }
  refuse_uncountable(cfg, est, N);

  // KARMA_CONTACT_TRACE=1: each phase of the warm-up and the first two steps,
  // fenced and timed, on stderr: where a run spends its time on a new machine.
  const bool tracing = std::getenv("KARMA_CONTACT_TRACE") != nullptr && comm::is_root();
  int traced_steps = 0;
  const auto trace_start = std::chrono::steady_clock::now();
  const std::function<void(const char*)> trace = [&](const char* what) {
    if (!tracing || traced_steps > 2) return;
    Kokkos::fence();
    std::fprintf(
        stderr, "trace %10.4f s  %s\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - trace_start).count(),
        what);
    std::fflush(stderr);
  };
  trace("start");

  // --- set-up (untimed) --------------------------------------------------------------
  Coords xyz(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::nodes"), shape.nodes);
  make_nodes(shape, cfg.seed, xyz);
  trace("nodes");
  Boxes boxes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::boxes"), N);
  CellLists cells;
  RowStats stats("contact::row_stats", N);
  const std::int64_t first_entries = N * cfg.capacity;
  // Every storage starts with room for N x capacity entries, first-touched
  // here so that no timed step pays for it.
  std::vector<NeighbourStorage> storages;
  for (Storage s : cfg.storages)
    storages.push_back(s == Storage::linked_list
                           ? linked_list_storage(N, first_entries, cfg.list_stripes)
                       : s == Storage::csr ? csr_storage(N, first_entries, cfg.lanes)
                                           : dynamic_storage<Dynamic>(N, cfg.capacity, cfg.lanes));
  const std::vector<Index> sample_ids = sample_rows(cfg);
  Kokkos::View<Index*, Memory> samples("contact::samples", sample_ids.size());
  {
    auto h = Kokkos::create_mirror_view(samples);
    for (std::size_t k = 0; k < sample_ids.size(); ++k) h(k) = sample_ids[k];
    Kokkos::deep_copy(samples, h);
  }
  // inject_fault: search: the element that drops out of the cell lists.
  Index search_fault = -1;
  std::int64_t search_fault_rows = 0;
  trace("allocated");

  // Row signatures: the first storage's, and the one being compared.
  const Signatures ref_sig = make_signatures(N), sig_now = make_signatures(N);
  std::vector<StorageRecord> record(3);
  KernelTimer timer;
  std::int64_t shared_bytes = 0, peak_tracked = 0;

  // --- the phases --------------------------------------------------------------------
  auto build = [&](NeighbourStorage& st, const Search& search, bool timed) {
    const Phase phase = [&](const std::string& name, const std::function<void()>& fn) {
      if (timed)
        timer.time(st.name + "." + name, fn);
      else
        fn();
    };
    st.build(search, phase, record[static_cast<int>(st.kind)]);
  };
  auto inject = [&](NeighbourStorage& st) {
    if (cfg.inject != "self" && cfg.inject != "foreign") return;
    // Row of B's first element: never empty (B's elements touch each other).
    st.inject(shape.elements_a, cfg.inject == "self", N);
  };

  // --- verification tallies ------------------------------------------------------------
  Tallies tally;
  nlohmann::json per_step = nlohmann::json::array();
  std::vector<double> step_entries;
  double total_pairs = 0;

  const std::int64_t first = first_step(cfg), last = last_step(cfg);
  Progress progress(ctx, "step", cfg.warmup + (last - first + 1));

  // Warm-up at the start position: kernels loaded, caches and pools warm.
  for (std::int64_t w = 0; w < cfg.warmup; ++w) {
    const std::int64_t bz = b_bottom(cfg.n, 0);
    make_boxes(shape, xyz, static_cast<int>(bz), boxes);
    trace("warm-up: boxes");
    bin(boxes, make_grid(cfg.n, bz, cfg.cell), cells, trace);
    trace("warm-up: binned");
    const Search search(boxes, cells, cfg.pairs);
    for (auto& st : storages) {
      build(st, search, false);
      trace(("warm-up: built " + st.name).c_str());
      st.row_stats(stats);
      trace(("warm-up: stats " + st.name).c_str());
    }
    progress.step();
  }

  for (std::int64_t step = first; step <= last; ++step) {
    const std::int64_t bz = b_bottom(cfg.n, step);
    make_boxes(shape, xyz, static_cast<int>(bz), boxes);
    const Grid grid = make_grid(cfg.n, bz, cfg.cell);
    trace("boxes");
    if (cfg.inject == "search" && step == last) {
      const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, boxes);
      std::tie(search_fault, search_fault_rows) =
          choose_search_fault(shape, host_boxes, sample_ids);
    }
    timer.time("binning", [&] { bin(boxes, grid, cells); });
    if (search_fault >= 0 && step == last) drop_from_cells(cells, static_cast<int>(search_fault));
    trace("binned");
    const Search search(boxes, cells, cfg.pairs);
    shared_bytes = static_cast<std::int64_t>(xyz.span() * sizeof(int) + boxes.span() * sizeof(int) +
                                             stats.span() * sizeof(double)) +
                   bytes_of(cells);

    Rows reference;  // the first storage's rows, sorted
    SignatureSummary ref;
    bool have_reference = false;
    std::vector<std::uint64_t> pair_sums, stats_sums;
    nlohmann::json step_json = {{"step", step}, {"b_bottom", static_cast<double>(bz) / unit}};
    std::int64_t live_bytes = shared_bytes;
    for (std::size_t v = 0; v < storages.size(); ++v) {
      NeighbourStorage& st = storages[v];
      StorageRecord& rec = record[static_cast<int>(st.kind)];
      build(st, search, true);
      trace(("built " + st.name).c_str());
      if (cfg.inject != "none" && step == last && v + 1 == storages.size()) inject(st);
      for (std::int64_t w = 0; w < cfg.warmup; ++w) st.row_stats(stats);
      for (std::int64_t k = 0; k < cfg.sweeps; ++k)
        timer.time(st.name + ".stats", [&] { st.row_stats(stats); });
      trace(("stats " + st.name).c_str());
      rec.peak_bytes = std::max(rec.peak_bytes, st.bytes());
      live_bytes += st.bytes();

      // Checks (untimed). Every storage's row signatures against the first
      // storage's; the first one's rows, sorted, against the rules, the
      // device scan and the brute force.
      if (const std::int64_t left = st.overflowed_rows(); left > 0) {
        tally.overflow_left += left;
        continue;
      }
      const Signatures& sig = v == 0 ? ref_sig : sig_now;
      st.signatures(sig);
      const SignatureSummary sum = summarize_signatures(sig);
      trace("signatures");
      if (v == 0) {
        ref = sum;
        have_reference = true;
        reference = st.sorted_rows();
        trace("canonical");
        check_reference_rows(cfg, bz, boxes, reference, samples, ref_sig, tally, trace);
      } else {
        tally.variants_wrong += signatures_differing(sig, ref_sig);
      }
      tally.stats_wrong += stats_rows_wrong(stats, reference);
      trace("stats checked");
      rec.pair_checksums.push_back(sum.checksum);
      rec.stats_checksums.push_back(stats_checksum(stats));
      pair_sums.push_back(rec.pair_checksums.back());
      stats_sums.push_back(rec.stats_checksums.back());
      // Effective bytes of one sweep: the storage's own structure for the
      // rows it holds, plus the four results per row.
      const double n_rows = static_cast<double>(N), ed = static_cast<double>(sum.entries);
      rec.stats_bytes +=
          static_cast<double>(cfg.sweeps) * (st.structure_bytes(n_rows, ed) + 32 * n_rows);
      step_json[st.name] = {{"overflowed", rec.overflows},
                            {"refills", rec.refills},
                            {"capacity", rec.final_capacity},
                            {"bytes", st.bytes()}};
    }
    if (!pair_sums.empty() &&
        std::any_of(pair_sums.begin(), pair_sums.end(), [&](auto x) { return x != pair_sums[0]; }))
      ++tally.checksum_steps_differ;
    if (!stats_sums.empty() && std::any_of(stats_sums.begin(), stats_sums.end(),
                                           [&](auto x) { return x != stats_sums[0]; }))
      ++tally.stats_checksum_steps_differ;

    const std::int64_t max_row = ref.longest;
    if (cfg.overflow_check && have_reference) {
      step_json["forced_overflow"] =
          check_forced_overflow<Dynamic>(search, N, max_row, ref_sig, sig_now, tally, live_bytes);
      trace("forced overflow");
    }
    const std::int64_t entries = have_reference ? ref.entries : -1;
    const std::int64_t empty_rows = ref.empty;
    live_bytes += reference.footprint_bytes() + 2 * N * 16;
    peak_tracked = std::max(peak_tracked, live_bytes);

    const double pairs = entries >= 0 ? static_cast<double>(entries) / 2 : 0.0;
    total_pairs += pairs;
    step_entries.push_back(static_cast<double>(std::max<std::int64_t>(entries, 0)));
    step_json["pairs"] = pairs;
    step_json["entries"] = entries;
    step_json["max_row"] = max_row;
    step_json["mean_row"] =
        static_cast<double>(std::max<std::int64_t>(entries, 0)) / static_cast<double>(N);
    step_json["empty_rows"] = empty_rows;
    step_json["pair_checksum"] = pair_sums.empty() ? "" : hex(pair_sums[0]);
    step_json["stats_checksum"] = stats_sums.empty() ? "" : hex(stats_sums[0]);
    per_step.push_back(step_json);
    progress.step();
    ++traced_steps;
  }
  Kokkos::fence();

  // --- results --------------------------------------------------------------------------
  // Every rank solved the same problem: its checksums must be rank 0's.
  std::string mine;
  for (const auto& r : record)
    for (auto x : r.pair_checksums) mine += hex(x);
  std::string mine_stats;
  for (const auto& r : record)
    for (auto x : r.stats_checksums) mine_stats += hex(x);
  const auto all_pairs = comm::allgather(mine), all_stats = comm::allgather(mine_stats);
  const std::int64_t ranks_differ =
      std::count_if(all_pairs.begin(), all_pairs.end(),
                    [&](const auto& x) { return x != all_pairs[0]; }) +
      std::count_if(all_stats.begin(), all_stats.end(),
                    [&](const auto& x) { return x != all_stats[0]; });

  Report report;
  const double ranks = comm::size();
  report.checks = verification_checks(cfg, tally, ranks_differ);

  const auto binning = slowest(timer, "binning");
  const double pairs_all = total_pairs * ranks;
  const double steps_timed = static_cast<double>(binning.size());
  nlohmann::json storages_json = nlohmann::json::object();
  double ll_build = 0, ll_stats = 0;
  struct Totals {
    double build = 0, stats = 0, search = 0, fill = 0;
  };
  std::vector<Totals> totals(3);
  for (Storage s : cfg.storages) {
    const std::string name = name_of(s);
    const auto search = slowest(timer, name + ".search");
    const auto fill = slowest(timer, name + ".fill");
    const auto sweeps = slowest(timer, name + ".stats");
    std::vector<double> per_build(search.size());
    for (std::size_t k = 0; k < per_build.size(); ++k)
      per_build[k] = binning[k] + search[k] + fill[k];
    totals[static_cast<int>(s)] = {sum_of(per_build), sum_of(sweeps), sum_of(search), sum_of(fill)};
    if (s == Storage::linked_list) {
      ll_build = sum_of(per_build);
      ll_stats = sum_of(sweeps);
    }
  }
  for (Storage s : cfg.storages) {
    const std::string name = name_of(s);
    const StorageRecord& rec = record[static_cast<int>(s)];
    const auto search = slowest(timer, name + ".search");
    const auto fill = slowest(timer, name + ".fill");
    const auto sweeps = slowest(timer, name + ".stats");
    std::vector<double> per_build(search.size());
    for (std::size_t k = 0; k < per_build.size(); ++k)
      per_build[k] = binning[k] + search[k] + fill[k];
    const Totals& t = totals[static_cast<int>(s)];

    KernelResult b;
    b.name = name + ".build";
    b.implementation = "kokkos";
    b.variant = name;
    b.time = summarize(per_build);
    b.fom = t.build > 0 ? pairs_all / t.build : 0;
    b.fom_units = "pairs/s";
    b.extra["fom"] = {{"value", b.fom},
                      {"units", "pairs/s"},
                      {"higher_is_better", true},
                      {"from", "pairs found in all steps (all ranks) / total rebuild time"}};
    b.extra["phases"] = {{"binning", phase_json(binning)},
                         {"search", phase_json(search)},
                         {"fill", phase_json(fill)}};
    b.extra["rebuild_s_mean"] = t.build / steps_timed;
    b.extra["overflows"] = rec.overflows;
    b.extra["refills"] = rec.refills;
    if (ll_build > 0) b.extra["speedup_vs_linked_list"] = ll_build / t.build;
    report.kernels.push_back(b);

    KernelResult st;
    st.name = name + ".stats";
    st.implementation = "kokkos";
    st.variant = name;
    st.time = summarize(sweeps);
    st.bytes = rec.stats_bytes * ranks / (steps_timed * static_cast<double>(cfg.sweeps));
    st.fom = gigabytes_per_second(rec.stats_bytes * ranks, t.stats);
    st.fom_units = "GB/s";
    st.extra["fom"] = {{"value", st.fom},
                       {"units", "GB/s"},
                       {"higher_is_better", true},
                       {"from", "effective bytes of all sweeps (all ranks) / their total time"}};
    st.extra["time_per_sweep_s"] = t.stats / (steps_timed * static_cast<double>(cfg.sweeps));
    st.extra["rows_per_s"] =
        static_cast<double>(N) * ranks * steps_timed * static_cast<double>(cfg.sweeps) / t.stats;
    if (ll_stats > 0) st.extra["speedup_vs_linked_list"] = ll_stats / t.stats;
    report.kernels.push_back(st);

    storages_json[name] = {
        {"peak_bytes", rec.peak_bytes},
        {"bytes_per_element", static_cast<double>(rec.peak_bytes) / static_cast<double>(N)},
        {"bytes_per_element_used",
         (s == Storage::linked_list ? 4.0 : 8.0) + (s == Storage::linked_list ? 8.0 : 4.0) *
                                                       sum_of(step_entries) / steps_timed /
                                                       static_cast<double>(N)},
        {"overflows", rec.overflows},
        {"refills", rec.refills},
        {"rows_refilled", rec.rows_refilled},
        {"final_capacity", rec.final_capacity},
        {"pair_checksums",
         [&] {
           auto a = nlohmann::json::array();
           for (auto x : rec.pair_checksums) a.push_back(hex(x));
           return a;
         }()},
        {"stats_checksums", [&] {
           auto a = nlohmann::json::array();
           for (auto x : rec.stats_checksums) a.push_back(hex(x));
           return a;
         }()}};
  }

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::vector<std::string> chosen;
  for (Storage s : cfg.storages) chosen.push_back(name_of(s));
  report.problem = {
      {"n", cfg.n},
      {"elements", N},
      {"elements_a", shape.elements_a},
      {"elements_b", shape.elements_b},
      {"nodes", shape.nodes},
      {"steps", cfg.steps},
      {"steps_timed", steps_timed},
      {"sweeps", cfg.sweeps},
      {"warmup", cfg.warmup},
      {"storage", chosen},
      {"capacity", cfg.capacity},
      {"seed", cfg.seed},
      {"cell_size", static_cast<double>(cfg.cell) / unit},
      {"grid_cells", cells.grid.cells},
      {"dynamic_layout", std::is_same<DynamicLayout, Kokkos::LayoutLeft>::value ? "left" : "right"},
      {"lanes", cfg.lanes},
      {"search", cfg.pairs ? "pairs" : "rows"},
      {"list_stripes", cfg.list_stripes},
      {"fixed_point_units_per_h", unit},
      {"scaling", "weak: every rank builds and checks its own copy of the whole problem"},
      {"pairs_all_steps_per_rank", total_pairs},
      {"per_step", per_step},
      {"storages", storages_json},
      {"memory",
       {{"estimate_bytes_per_rank", est.total},
        {"entries_bound", est.entries_bound},
        {"max_row_bound", est.max_row_bound},
        {"shared_bytes", shared_bytes},
        {"peak_tracked_bytes", peak_tracked},
        {"host_max_rss_bytes", static_cast<double>(usage.ru_maxrss) * 1024.0}}},
      {"overflow_check",
       {{"enabled", cfg.overflow_check},
        {"overflows", tally.forced_overflows},
        {"refills", tally.forced_refills},
        {"rows_refilled", tally.forced_rows_refilled}}},
      {"verification",
       {{"all_rows",
         "every row of the first storage, every step, against a search over the "
         "mesh's structure; the other storages' rows against it by signature"},
        {"all_rows_seconds", comm::max(tally.mesh_seconds)},
        {"boxes_outside_bounds", tally.mesh_wrong.boxes_outside},
        {"brute_force", N <= cfg.brute_force_max},
        {"sample_rows", sample_ids.size()},
        {"inject_fault", cfg.inject},
        {"search_fault", search_fault < 0 ? nlohmann::json(nullptr)
                                          : nlohmann::json{{"element", search_fault},
                                                           {"rows_changed", search_fault_rows}}}}},
      {"stats_bytes_from",
       "per sweep: the storage's structure for the entries it holds (linked-list: 4 B head + "
       "8 B per node; csr: 8 B offset + 4 B per entry; dynamic: 8 B count + 4 B per entry) "
       "plus 32 B of results per row"}};

  if (ctx.verbose()) {
    // Rank 0 alone: only figures already reduced over the ranks.
    std::printf("\n%-16s %10s %10s %10s %10s %8s %12s %10s %8s\n", "storage", "build ms", "binning",
                "search", "fill", "x LL", "stats ms", "GB/s", "x LL");
    for (Storage s : cfg.storages) {
      const std::string name = name_of(s);
      const Totals& t = totals[static_cast<int>(s)];
      const double per = 1e3 / steps_timed;
      std::printf("%-16s %10.3f %10.3f %10.3f %10.3f %8.2f %12.4f %10.1f %8.2f\n", name.c_str(),
                  t.build * per, sum_of(binning) * per, t.search * per, t.fill * per,
                  ll_build > 0 ? ll_build / t.build : 0.0,
                  t.stats * 1e3 / (steps_timed * static_cast<double>(cfg.sweeps)),
                  gigabytes_per_second(record[static_cast<int>(s)].stats_bytes * ranks, t.stats),
                  ll_stats > 0 ? ll_stats / t.stats : 0.0);
    }
    std::printf("pairs per step (last): %.0f, longest row %s\n",
                per_step.empty() ? 0.0 : per_step.back()["pairs"].get<double>(),
                per_step.empty() ? "-" : per_step.back()["max_row"].dump().c_str());
  }

  std::ostringstream summary;
  summary << "contact: n = " << cfg.n << " (" << N << " elements), " << steps_timed << " step(s), "
          << cfg.sweeps << " sweep(s) each, storages";
  for (const auto& c : chosen) summary << " " << c;
  summary << "; dynamic layout "
          << (std::is_same<DynamicLayout, Kokkos::LayoutLeft>::value ? "left" : "right")
          << ", capacity " << cfg.capacity << "; " << (cfg.pairs ? "pair" : "row") << " search; "
          << comm::size() << " rank(s), weak scaling";
  report.summary = summary.str();
  return report;
}

Report run_contact(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  if (cfg.dynamic_left) return run_typed<Kokkos::LayoutLeft>(ctx, cfg);
  return run_typed<Kokkos::LayoutRight>(ctx, cfg);
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{
      "contact",
      "contact detection between two moving blocks of hexahedra: neighbour lists in "
      "linked lists, compressed rows or dynamic ragged rows, and row statistics over them",
      contact_schema(), run_contact};
  return run_main(argc, argv, app);
}
