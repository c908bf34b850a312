// karma-contact: deck -> mesh -> storages -> measure and verify, step by
// step -> report. The geometry, mesh, cell-list search, the three storages
// (one interface: contact_storages.hpp) and the row statistics are in
// contact_*.hpp, one concern each; the checks in contact_verify.hpp and
// contact_run_checks.hpp (a partitioned run's owned rows:
// contact_verify_owned.hpp), the memory bounds in contact_memory.hpp, the
// results in contact_report.hpp. contact.decomposition: partitioned splits
// the mesh over the ranks (contact_decomposition.hpp) and exchanges ghosts
// every step (contact_ghosts.hpp).
#include "contact_ghosts.hpp"
#include "contact_memory.hpp"
#include "contact_report.hpp"
#include "contact_run_checks.hpp"
#ifdef KARMA_HAVE_ARBORX
#include "contact_arborx.hpp"
#else
#include "contact_storages.hpp"
#include "karma/error.hpp"

#include <nlohmann/json.hpp>

namespace karma::contact {
// read_config refuses the arborx storage in a build without ArborX.
inline NeighbourStorage arborx_storage(bool, int) {
  throw Error(exit_runtime_error, "karma-contact was built without ArborX");
}
inline nlohmann::json arborx_json(bool) { return nullptr; }
}  // namespace karma::contact
#endif

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/profiling.hpp"
#include "karma/progress.hpp"
#include "karma_code_table.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

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
  s.choice_list("contact.storage", karma_storage_names, storage_names,
                "neighbour-list storages, run side by side on the same search: linked-list "
                "(HOSS: a head per element, a node pool with an atomic counter), csr-two-pass "
                "(count, scan, fill), dynamic-ragged (rows of fixed capacity, grown on overflow); "
                "arborx: the ArborX library's bounding volume hierarchy and intersection query "
                "over the same boxes into compressed rows (builds with ArborX only)");
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
  s.choice("contact.decomposition", "replicated", {"replicated", "partitioned"},
           "replicated: every rank builds and checks its own copy of the whole problem (weak "
           "scaling); partitioned: one mesh split over the ranks by recursive bisection of the "
           "x-y plane, each rank owning its elements' rows and receiving its neighbours' "
           "elements within reach as ghosts every step (strong scaling; the brute force and the "
           "sampled rows are off: they need every box)");
  s.faults({{"self", "at the last step, a self-pair in one entry of the last storage"},
            {"foreign", "at the last step, a far element in one entry of the last storage"},
            {"search",
             "the search misses one element's pairs with lower ids in every storage alike (an "
             "element of B's bottom layer whose rows are not sampled)"},
            {"ghost",
             "partitioned: the first ghost each rank sends each neighbour is left out of the "
             "exchange"}});
  s.retired("contact.inject_fault", "use run.inject_fault (the same choices)", "none");
  s.integer("run.warmup", 1,
            "untimed rebuilds and sweeps at the start position before the timed steps", 0);
  s.string("run.results_dir", ".",
           "directory for the results JSON when --output is not given (created if missing)");
  s.energy_keys();
  // What a reportable run may change (docs/run-rules.md).
  s.rule(karma::Rule::free, {"run.results_dir"});
  s.rule(karma::Rule::tuning,
         {"contact.storage", "contact.search", "contact.capacity", "contact.cell_size",
          "contact.dynamic_layout", "contact.lanes", "contact.list_stripes"});
  return s;
}

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
  if (!have_arborx && has_storage(c, Storage::arborx))
    deck.fail("contact.storage",
              "arborx needs a karma built with ArborX (cmake -DKARMA_ENABLE_ARBORX=ON "
              "-DArborX_ROOT=...); this build has none");
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
  c.inject = deck.string("run.inject_fault");
  c.pairs = deck.string("contact.search") == "pairs";
  const std::int64_t stripes = deck.integer("contact.list_stripes");
  c.list_stripes = stripes > 0 ? static_cast<int>(stripes) : (on_gpu ? 4096 : 1);
  c.partitioned = deck.string("contact.decomposition") == "partitioned";
  if (c.inject == "ghost" && !c.partitioned)
    deck.fail("run.inject_fault", "ghost needs contact.decomposition: partitioned");
  if (c.partitioned && c.inject != "none" && c.inject != "ghost")
    deck.fail("run.inject_fault", "a partitioned run injects none or ghost, not " + c.inject);
  if (c.partitioned) {
    for (const Region& r : bisect_plane(c.n, comm::size()))
      if (r.empty())
        deck.fail("contact.decomposition",
                  "n = " + std::to_string(n) + " has too few columns of block A to give each of " +
                      std::to_string(comm::size()) + " ranks a part of the plane");
    // Both need every element's box on every rank.
    c.brute_force_max = -1;
    c.sample_rows = 0;
  }
  return c;
}

// KARMA_CONTACT_TRACE=1: each phase of the warm-up and the first two steps,
// fenced and timed, on stderr: where a run spends its time on a new machine.
struct Tracer {
  bool on = std::getenv("KARMA_CONTACT_TRACE") != nullptr && comm::is_root();
  int steps = 0;  // timed steps traced so far
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void operator()(const char* what) const {
    if (!on || steps > 2) return;
    Kokkos::fence();
    std::fprintf(stderr, "trace %10.4f s  %s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                 what);
    std::fflush(stderr);
  }
};

// The two blocks: nodes, boxes at the current position, their cell lists,
// and the row statistics every storage's sweeps write.
struct Blocks {
  Coords xyz;
  Boxes boxes;
  CellLists cells;
  RowStats stats;
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(xyz.span() * sizeof(int) + boxes.span() * sizeof(int) +
                                     stats.span() * sizeof(double)) +
           bytes_of(cells);
  }
};

// Allocated in this order, as before the blocks were a struct: the
// addresses of later arrays follow from it, and contact's atomic-heavy
// linked-list search is sensitive to where its arrays land.
// Partitioned: every rank has all nodes (a hash of their ids, made once),
// the boxes of its own elements and ghosts only (in `Partition`), and rows
// for its own elements.
Blocks make_blocks(const Config& cfg, Index rows) {
  Blocks b;
  b.xyz =
      Coords(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::nodes"), cfg.shape.nodes);
  make_nodes(cfg.shape, cfg.seed, b.xyz);
  if (!cfg.partitioned)
    b.boxes = Boxes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::boxes"),
                    cfg.shape.elements);
  b.stats = RowStats("contact::row_stats", rows);
  return b;
}

// A partitioned run's split, its elements and its ghost exchange.
struct Partition {
  Decomposition split;
  LocalElements local;
  Ghosts ghosts;
  std::vector<double> received;  // ghosts received, per timed step
};

// Collective: one value of every rank, in rank order.
std::vector<double> per_rank(double v) { return allgather_json(v).get<std::vector<double>>(); }

// Collective: a step's ghosts, over the ranks (payload: id and box, 28 B a ghost).
nlohmann::json ghost_step_json(const Ghosts& g) {
  const std::int64_t received = g.received;
  const std::int64_t total = comm::sum(received);
  return {{"received_total", total},
          {"received_min", comm::min(received)},
          {"received_max", comm::max(received)},
          {"bytes", total * ghost_ints * static_cast<std::int64_t>(sizeof(int))}};
}

// Collective: what a partitioned run records of its split, its ghosts and
// each rank's own time, from which scaling efficiencies are computed
// (README "Partitioned runs").
nlohmann::json decomposition_json(const Partition& p, const KernelTimer& timer,
                                  const std::vector<std::string>& storages,
                                  const std::vector<double>& exchange, const Tallies& tally,
                                  double steps) {
  auto own_total = [&](const std::string& name) {
    const auto& v = timer.samples(name);
    return std::accumulate(v.begin(), v.end(), 0.0);
  };
  double build = own_total("ghost_exchange") + own_total("binning");
  for (const auto& s : storages) build += own_total(s + ".search") + own_total(s + ".fill");
  const std::vector<double> build_per_rank = per_rank(build);
  std::vector<double> step_per_rank;
  for (double b : build_per_rank) step_per_rank.push_back(b / steps);
  const double received = std::accumulate(p.received.begin(), p.received.end(), 0.0);
  const std::vector<double> received_per_rank = per_rank(received / steps);
  const double bytes_per_step =
      comm::sum(received) / steps * ghost_ints * static_cast<double>(sizeof(int));
  auto regions = nlohmann::json::array();
  for (const Region& r : p.split.regions)
    regions.push_back(
        {{"x", {static_cast<double>(r.lo[0]) / unit, static_cast<double>(r.hi[0]) / unit}},
         {"y", {static_cast<double>(r.lo[1]) / unit, static_cast<double>(r.hi[1]) / unit}}});
  const auto minmax = [](const std::vector<double>& v) {
    return nlohmann::json{{"min", *std::min_element(v.begin(), v.end())},
                          {"max", *std::max_element(v.begin(), v.end())}};
  };
  return {
      {"mode", "partitioned"},
      {"ranks", p.split.ranks},
      {"method",
       "recursive bisection of the x-y plane at whole elements of A, the longer side cut in "
       "proportion to the ranks on either side; an element belongs to the region holding its "
       "nominal cube's lower x-y corner (fixed for the run: B moves along z only)"},
      {"regions", regions},
      {"owned_elements", per_rank(static_cast<double>(p.split.owned_count))},
      {"peers", per_rank(static_cast<double>(p.split.peers.size()))},
      {"owner_rule",
       "a row belongs to its element's owner; a pair is counted once, by the owner of its lower "
       "global id; a pair across ranks is held by both owners, each in its own element's row"},
      {"ghost_rule",
       "every step each rank sends each peer the id and box of every own element whose box "
       "reaches the peer's region widened by 0.25 (node perturbation and inflation of A)"},
      {"mpi_path", p.ghosts.mpi_path},
      {"gpu_aware_query", p.ghosts.mpi_path_why},
      {"ghost_bytes_per_ghost", ghost_ints * static_cast<int>(sizeof(int))},
      {"ghost_bytes_per_step", bytes_per_step},
      {"ghosts_received_per_step_per_rank", received_per_rank},
      {"ghosts_received_per_step", minmax(received_per_rank)},
      {"crossing_pairs_per_step", static_cast<double>(tally.cross_pairs) / steps},
      {"ghost_exchange", phase_json(exchange)},
      {"build_s_per_rank", build_per_rank},
      {"step_s_per_rank", step_per_rank},
      {"step_s", minmax(step_per_rank)},
      {"step_s_from",
       "each rank's own ghost exchange, binning and every storage's search and fill, per timed "
       "step (phases start together: the timer synchronises the ranks before each)"}};
}

void print_decomposition(const nlohmann::json& d) {
  if (!comm::is_root()) return;
  std::printf(
      "partitioned over %d rank(s): ghosts received per rank and step %.0f to %.0f, %.0f B a "
      "step in all (%s); ghost exchange %.3f ms a step; build (exchange, binning, search, fill "
      "of every storage) %.3f to %.3f ms a step per rank\n",
      d["ranks"].get<int>(), d["ghosts_received_per_step"]["min"].get<double>(),
      d["ghosts_received_per_step"]["max"].get<double>(), d["ghost_bytes_per_step"].get<double>(),
      d["mpi_path"].get<std::string>().c_str(), 1e3 * d["ghost_exchange"]["mean_s"].get<double>(),
      1e3 * d["step_s"]["min"].get<double>(), 1e3 * d["step_s"]["max"].get<double>());
}

// Block B at a step's position: its boxes, binned into the cell lists
// (timed as "binning" when `timer` is given; not with `bin_cells` false).
// Partitioned: the own elements' boxes, the ghost exchange (timed as
// "ghost_exchange"; `fault`: inject_fault ghost), then the binning of own
// elements and ghosts on the grid of the rank's part of the scene.
void place(const Config& cfg, std::int64_t b_z, Blocks& blocks, KernelTimer* timer,
           const Tracer& trace, Partition* part = nullptr, bool fault = false,
           bool bin_cells = true) {
  if (part) {
    own_boxes(cfg.shape, blocks.xyz, static_cast<int>(b_z), part->local);
    trace(timer ? "boxes" : "warm-up: boxes");
    const auto exchange = [&] { exchange_ghosts(part->ghosts, part->local, fault); };
    if (timer) {
      const profiling::Region region(profiling::region_name("ghost_exchange"));
      timer->time("ghost_exchange", exchange);
      part->received.push_back(static_cast<double>(part->ghosts.received));
    } else {
      exchange();
    }
    trace(timer ? "ghosts" : "warm-up: ghosts");
    blocks.boxes = part->local.boxes;
    if (!bin_cells) return;
    const Grid grid = region_grid(cfg.n, b_z, cfg.cell,
                                  part->split.regions[static_cast<std::size_t>(part->split.rank)]);
    const Index count = part->local.count;
    if (timer) {
      const profiling::Region region(profiling::region_name("binning"));
      timer->time("binning", [&] { bin(blocks.boxes, grid, blocks.cells, {}, count); });
    } else {
      bin(blocks.boxes, grid, blocks.cells, trace, count);
    }
    return;
  }
  make_boxes(cfg.shape, blocks.xyz, static_cast<int>(b_z), blocks.boxes);
  trace(timer ? "boxes" : "warm-up: boxes");
  if (!bin_cells) return;
  const Grid grid = make_grid(cfg.n, b_z, cfg.cell);
  if (timer) {
    // Binning serves every storage's rebuild: a Kokkos Tools region of its own.
    const profiling::Region region(profiling::region_name("binning"));
    timer->time("binning", [&] { bin(blocks.boxes, grid, blocks.cells); });
  } else {
    bin(blocks.boxes, grid, blocks.cells, trace);
  }
}

// Every storage starts with room for N x capacity entries, first-touched
// here so that no timed step pays for it.
template <class Dynamic>
std::vector<NeighbourStorage> make_storages(const Config& cfg, Index rows) {
  const Index N = rows;
  const std::int64_t first_entries = N * cfg.capacity;
  std::vector<NeighbourStorage> storages;
  for (Storage s : cfg.storages)
    storages.push_back(
        s == Storage::linked_list ? linked_list_storage(N, first_entries, cfg.list_stripes)
        : s == Storage::csr       ? csr_storage(N, first_entries, cfg.lanes)
        : s == Storage::dynamic   ? dynamic_storage<Dynamic>(N, cfg.capacity, cfg.lanes)
                                  : arborx_storage(arborx_float_exact(cfg), cfg.lanes));
  return storages;
}

// A storage's lists of this step from `search`; its phases timed when
// `timer` is given (the warm-up is not).
void rebuild(NeighbourStorage& st, const Search& search, KernelTimer* timer, StorageRecord& rec) {
  const Phase phase = [&](const std::string& name, const std::function<void()>& fn) {
    if (timer)
      timer->time(st.name + "." + name, fn);
    else
      fn();
  };
  // A timed rebuild in the Kokkos Tools region of its result, <storage>.build.
  std::optional<profiling::Region> region;
  if (timer) region.emplace(profiling::region_name(st.name + ".build"));
  st.build(search, phase, rec);
}

// The row-statistics sweeps of one step: `warmup` untimed, then `sweeps` timed.
void sweep(const NeighbourStorage& st, const RowStats& stats, const Config& cfg,
           KernelTimer& timer) {
  for (std::int64_t w = 0; w < cfg.warmup; ++w) st.row_stats(stats);
  const profiling::Region region(profiling::region_name(st.name + ".stats"));
  for (std::int64_t k = 0; k < cfg.sweeps; ++k)
    timer.time(st.name + ".stats", [&] { st.row_stats(stats); });
}

// inject_fault self/foreign: the row of B's first element (never empty: B's
// elements touch each other) in the last storage at the last step.
void inject_row_fault(const Config& cfg, NeighbourStorage& st) {
  if (cfg.inject != "self" && cfg.inject != "foreign") return;
  st.inject(cfg.shape.elements_a, cfg.inject == "self", cfg.shape.elements);
}

// What the step loop leaves for the report.
struct StepLog {
  Tallies tally;
  nlohmann::json per_step = nlohmann::json::array();
  double total_pairs = 0, total_entries = 0;  // over the timed steps, this rank
  std::int64_t shared_bytes = 0, peak_tracked = 0;
  Index search_fault = -1;  // inject_fault search: the element dropped from the cell lists
  std::int64_t search_fault_rows = 0;
};

// One step's record in the JSON, and the run's totals: the pairs and rows
// the first storage found.
void log_step(StepLog& log, nlohmann::json step_json, const StepChecks& checks, Index elements) {
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
nlohmann::json problem_json(const Config& cfg, const Estimate& est, const StepLog& log,
                            const nlohmann::json& storages_json, double steps_timed,
                            std::int64_t grid_cells, const char* dynamic_layout,
                            std::size_t samples) {
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
          {"warmup", cfg.warmup},
          {"storage", names},
          {"capacity", cfg.capacity},
          {"seed", cfg.seed},
          {"cell_size", static_cast<double>(cfg.cell) / unit},
          {"grid_cells", grid_cells},
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
            {"sample_rows", samples},
            {"inject_fault", cfg.inject},
            {"search_fault", log.search_fault < 0
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json{{"element", log.search_fault},
                                                  {"rows_changed", log.search_fault_rows}}}}},
          {"stats_bytes_from",
           "per sweep: the storage's structure for the entries it holds (linked-list: 4 B head + "
           "8 B per node; csr: 8 B offset + 4 B per entry; dynamic: 8 B count + 4 B per entry) "
           "plus 32 B of results per row"}};
}

template <class DynamicLayout>
Report run_typed(const Context& ctx, const Config& cfg) {
  using Dynamic = DynamicRaggedRight<int, Memory, DynamicLayout>;
  const char* dynamic_layout =
      std::is_same<DynamicLayout, Kokkos::LayoutLeft>::value ? "left" : "right";
  const MeshShape& shape = cfg.shape;
  const Index N = shape.elements;

  // --- memory, before anything is allocated -------------------------------------------
  const Estimate est = estimate(cfg);
  {
    std::ostringstream what;
    what << N << " elements, neighbour lists of at most " << est.entries_bound << " entries in "
         << cfg.storages.size() << " storage(s) and their checks";
    ctx.require_memory(est.total, what.str());
  }
  refuse_uncountable(cfg, est);
  Tracer tracer;
  const Trace trace = [&tracer](const char* what) { tracer(what); };
  trace("start");

  // --- mesh, storages, the checks' arrays (untimed) --------------------------------------
  // Partitioned: rows for the own elements only, which keep their global ids.
  std::optional<Partition> part;
  if (cfg.partitioned) {
    part.emplace();
    part->split = decompose(shape, comm::rank(), comm::size());
    part->local = make_local_elements(part->split);
    part->ghosts = make_ghosts(part->split);
  }
  Partition* const partition = part ? &*part : nullptr;
  const Index rows = part ? part->split.owned_count : N;
  Blocks blocks = make_blocks(cfg, rows);
  trace("nodes");
  std::vector<NeighbourStorage> storages = make_storages<Dynamic>(cfg, rows);
  const std::vector<Index> sample_ids = sample_rows(cfg);
  const CheckArrays arrays =
      part ? make_check_arrays(rows, sample_ids, GlobalIds{part->split.owned}, blocks.xyz)
           : make_check_arrays(N, sample_ids);
  // The search over this step's boxes: partitioned, own elements then ghosts.
  const auto make_search = [&] {
    return part ? Search(blocks.boxes, blocks.cells, cfg.pairs, part->local.ids, rows,
                         part->local.count)
                : Search(blocks.boxes, blocks.cells, cfg.pairs);
  };
  trace("allocated");

  // --- measure and verify, step by step --------------------------------------------------
  std::vector<StorageRecord> record(storage_names.size());
  KernelTimer timer;
  StepLog log;
  const std::int64_t first = first_step(cfg), last = last_step(cfg);
  Progress progress(ctx, "step", cfg.warmup + (last - first + 1));

  // Warm-up at the start position: kernels loaded, caches and pools warm.
  for (std::int64_t w = 0; w < cfg.warmup; ++w) {
    place(cfg, b_bottom(cfg.n, 0), blocks, nullptr, tracer, partition);
    trace("warm-up: binned");
    const Search search = make_search();
    for (auto& st : storages) {
      rebuild(st, search, nullptr, record[static_cast<int>(st.kind)]);
      trace(("warm-up: built " + st.name).c_str());
      st.row_stats(blocks.stats);
      trace(("warm-up: stats " + st.name).c_str());
    }
    progress.step();
  }

  for (std::int64_t step = first; step <= last; ++step) {
    const std::int64_t bz = b_bottom(cfg.n, step);
    const bool last_step_faults = cfg.inject != "none" && step == last;
    place(cfg, bz, blocks, &timer, tracer, partition, cfg.inject == "ghost" && step == last);
    if (cfg.inject == "search" && step == last) {
      const auto host_boxes =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, blocks.boxes);
      std::tie(log.search_fault, log.search_fault_rows) =
          choose_search_fault(shape, host_boxes, sample_ids);
      if (log.search_fault >= 0) drop_from_cells(blocks.cells, static_cast<int>(log.search_fault));
    }
    trace("binned");
    const Search search = make_search();
    log.shared_bytes = blocks.bytes();

    StepChecks checks;
    nlohmann::json step_json = {{"step", step}, {"b_bottom", static_cast<double>(bz) / unit}};
    std::int64_t live_bytes = log.shared_bytes;
    for (std::size_t v = 0; v < storages.size(); ++v) {
      NeighbourStorage& st = storages[v];
      StorageRecord& rec = record[static_cast<int>(st.kind)];
      rebuild(st, search, &timer, rec);
      trace(("built " + st.name).c_str());
      if (last_step_faults && v + 1 == storages.size() && !part) inject_row_fault(cfg, st);
      sweep(st, blocks.stats, cfg, timer);
      trace(("stats " + st.name).c_str());
      rec.peak_bytes = std::max(rec.peak_bytes, st.bytes());
      live_bytes += st.bytes();

      const SignatureSummary sum = check_storage(cfg, v, st, bz, blocks.boxes, blocks.stats, arrays,
                                                 checks, log.tally, rec, trace);
      if (sum.entries < 0) continue;  // rows past capacity: nothing to count
      // Effective bytes of one sweep: the storage's own structure for the
      // rows it holds, plus the four results per row.
      const double n_rows = static_cast<double>(rows), ed = static_cast<double>(sum.entries);
      rec.stats_bytes +=
          static_cast<double>(cfg.sweeps) * (st.structure_bytes(n_rows, ed) + 32 * n_rows);
      step_json[st.name] = {{"overflowed", rec.overflows},
                            {"refills", rec.refills},
                            {"capacity", rec.final_capacity},
                            {"bytes", st.bytes()}};
    }
    check_step_checksums(checks, log.tally);
    if (cfg.overflow_check && checks.have_reference) {
      step_json["forced_overflow"] = check_forced_overflow<Dynamic>(
          search, rows, checks.summary.longest, arrays, log.tally, live_bytes);
      trace("forced overflow");
    }
    if (part) {
      reduce_step_over_ranks(checks, log.tally);
      step_json["ghosts"] = ghost_step_json(part->ghosts);
    }
    live_bytes += checks.reference.footprint_bytes() + 2 * rows * 16;
    log.peak_tracked = std::max(log.peak_tracked, live_bytes);
    log_step(log, std::move(step_json), checks, N);
    progress.step();
    ++tracer.steps;
  }
  Kokkos::fence();

  // --- report ------------------------------------------------------------------------------
  Report report;
  // Partitioned ranks hold parts of one mesh: their checksums differ by design.
  report.checks = verification_checks(cfg, log.tally, part ? 0 : ranks_differing(record));

  const std::vector<double> binning = slowest(timer, "binning");
  const std::vector<double> exchange =
      part ? slowest(timer, "ghost_exchange") : std::vector<double>{};
  RunTotals run;
  // Copies of the problem the ranks solved: one each (replicated), or one
  // in all (partitioned: the records become the whole mesh's, over ranks).
  run.ranks = part ? 1 : comm::size();
  run.pairs_all = log.total_pairs * run.ranks;
  run.steps_timed = static_cast<double>(binning.size());
  run.sweeps = static_cast<double>(cfg.sweeps);
  run.elements = static_cast<double>(N);
  if (part)
    for (Storage s : cfg.storages) {
      StorageRecord& rec = record[static_cast<int>(s)];
      rec.stats_bytes = comm::sum(rec.stats_bytes);
      rec.peak_bytes = comm::sum(rec.peak_bytes);
      comm::sum_wrapping_in_place(rec.pair_checksums.data(),
                                  static_cast<std::int64_t>(rec.pair_checksums.size()));
      comm::sum_wrapping_in_place(rec.stats_checksums.data(),
                                  static_cast<std::int64_t>(rec.stats_checksums.size()));
    }
  std::vector<std::string> chosen;
  std::vector<StorageTimes> times;
  std::vector<const StorageRecord*> records;
  const StorageTimes* linked_list = nullptr;
  for (std::size_t k = 0; k < storages.size(); ++k) {
    chosen.push_back(storages[k].name);
    times.push_back(storage_times(timer, chosen.back(), binning, exchange, storages[k].uses_cells));
    records.push_back(&record[static_cast<int>(storages[k].kind)]);
  }
  nlohmann::json storages_json = nlohmann::json::object();
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    if (cfg.storages[k] == Storage::linked_list) linked_list = &times[k];
  }
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    report.kernels.push_back(build_result(chosen[k], storages[k].implementation, times[k],
                                          linked_list, *records[k], binning, run, exchange));
    report.kernels.back().code = storages[k].build_code;
    if (storages[k].uses_cells) report.kernels.back().code.push_back("karma::contact::bin");
    report.kernels.push_back(stats_result(chosen[k], times[k], linked_list, *records[k], run));
    report.kernels.back().code = storages[k].stats_code;
    storages_json[chosen[k]] = storage_json(cfg.storages[k], *records[k], run.elements,
                                            log.total_entries / run.steps_timed);
  }

  // Energy: each storage's rebuild (binning, search and fill at the last
  // position) and row statistics back-to-back, after the checks; a copy of
  // its record takes the rebuilds' counts.
  for (std::size_t k = 0; k < storages.size(); ++k) {
    NeighbourStorage& st = storages[k];
    StorageRecord scratch = record[static_cast<int>(st.kind)];
    Variant build, stats;
    build.run = [&] {
      // A rebuild as timed: arborx's bins nothing.
      place(cfg, b_bottom(cfg.n, last), blocks, nullptr, tracer, partition, false, st.uses_cells);
      rebuild(st, make_search(), nullptr, scratch);
    };
    stats.run = [&] { st.row_stats(blocks.stats); };
    KernelResult& b = report.kernels[2 * k];
    KernelResult& r = report.kernels[2 * k + 1];
    b.extra["energy"] = energy_window(build, b);
    r.extra["energy"] = energy_window(stats, r);
  }

  report.problem = problem_json(cfg, est, log, storages_json, run.steps_timed,
                                blocks.cells.grid.cells, dynamic_layout, sample_ids.size());
  if (has_storage(cfg, Storage::arborx))
    report.problem["arborx"] = arborx_json(arborx_float_exact(cfg));
  if (part) {
    report.problem["decomposition"] =
        decomposition_json(*part, timer, chosen, exchange, log.tally, run.steps_timed);
    print_decomposition(report.problem["decomposition"]);
  }

  if (ctx.verbose()) {
    print_table(chosen, times, records, linked_list, binning, run, exchange);
    std::printf("pairs per step (last): %.0f, longest row %s\n",
                log.per_step.empty() ? 0.0 : log.per_step.back()["pairs"].get<double>(),
                log.per_step.empty() ? "-" : log.per_step.back()["max_row"].dump().c_str());
  }

  std::ostringstream summary;
  summary << "contact: n = " << cfg.n << " (" << N << " elements), " << run.steps_timed
          << " step(s), " << cfg.sweeps << " sweep(s) each, storages";
  for (const auto& c : chosen) summary << " " << c;
  summary << "; dynamic layout " << dynamic_layout << ", capacity " << cfg.capacity << "; "
          << (cfg.pairs ? "pair" : "row") << " search; " << comm::size() << " rank(s), "
          << (part ? "one mesh partitioned (strong scaling)" : "weak scaling");
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
      contact_schema(), run_contact, &generated::code_table};
  return run_main(argc, argv, app);
}
