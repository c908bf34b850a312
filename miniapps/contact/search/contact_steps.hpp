// The scene a run moves step by step, and what one step does with it: block
// B's boxes at the step's position (before the step's turns), then each
// storage's rebuild (a partitioned run's ghost exchange, the cell binning,
// the storage's search and fill) and its row-statistics sweeps, which the
// core's harness measures as the storage's two variants (main.cpp).
#pragma once

#include "partition/contact_ghosts.hpp"
#include "verification/contact_run_checks.hpp"
#ifdef KARMA_HAVE_ARBORX
#include "storages/contact_arborx.hpp"
#else
#include "karma/error.hpp"

namespace karma::contact {
// read_config refuses the arborx storage in a build without ArborX.
inline NeighbourStorage arborx_storage(bool, int) {
  throw Error(exit_runtime_error, "karma-contact was built without ArborX");
}
inline nlohmann::json arborx_json(bool) { return nullptr; }
}  // namespace karma::contact
#endif

#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/profiling.hpp"
#include "karma/timing.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace karma::contact {

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
inline Blocks make_blocks(const Config& cfg, Index rows) {
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

// Every storage starts with room for N x capacity entries, first-touched
// here so that no timed step pays for it.
template <class Dynamic>
std::vector<NeighbourStorage> make_storages(const Config& cfg, Index rows) {
  const Index N = rows;
  const std::int64_t first_entries = N * cfg.capacity;
  std::vector<NeighbourStorage> storages;
  for (Storage s : cfg.storages)
    storages.push_back(s == Storage::linked_list
                           ? linked_list_storage(N, first_entries, cfg.list_stripes)
                       : s == Storage::csr ? csr_storage(N, first_entries, cfg.lanes)
                       : s == Storage::dynamic
                           ? dynamic_storage<Dynamic>(N, cfg.capacity, cfg.lanes, cfg.growth_factor)
                           : arborx_storage(arborx_float_exact(cfg), cfg.lanes));
  return storages;
}

// Everything the steps share: the scene at the current position, the
// storages, the checks' arrays, and the phases of every rebuild. Made once
// (make_scene) and never moved: the variants and hooks refer to it.
struct Scene {
  Scene(const Config& c, const RunSettings& r) : cfg(c), run(r) {}
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  const Config& cfg;
  const RunSettings& run;  // the deck's run section: warm-ups, the fault to inject
  Tracer tracer;
  Trace trace = std::cref(tracer);
  std::optional<Partition> part;
  Index rows = 0;  // rows of this rank: every element, or a partitioned rank's own
  Blocks blocks;
  std::vector<NeighbourStorage> storages;
  std::vector<StorageRecord> records = std::vector<StorageRecord>(storage_names.size());
  std::vector<Index> sample_ids;
  CheckArrays arrays;
  // Each storage's phases (<storage>.<phase>), in the timed steps only.
  KernelTimer phases;
  bool timing = false;
  std::int64_t step = 0, b_z = 0;  // the step, and block B's bottom there
  bool last = false;               // the last timed step, where faults are injected
  // run.inject_fault search: the element left out of the cells, and the
  // rows that changes.
  Index search_fault = -1;
  std::int64_t search_fault_rows = 0;

  StorageRecord& record(const NeighbourStorage& st) {
    return records[static_cast<std::size_t>(st.kind)];
  }
};

// Allocates the scene, in the order make_blocks explains. Partitioned: rows
// for the own elements only, which keep their global ids.
template <class Dynamic>
void make_scene(Scene& s) {
  const Config& cfg = s.cfg;
  s.trace("start");
  if (cfg.partitioned) {
    s.part.emplace();
    s.part->split = decompose(cfg.shape, comm::rank(), comm::size());
    s.part->local = make_local_elements(s.part->split);
    s.part->ghosts = make_ghosts(s.part->split);
  }
  s.rows = s.part ? s.part->split.owned_count : cfg.shape.elements;
  s.blocks = make_blocks(cfg, s.rows);
  if (s.part) {
    // The plan reads x and y of the own boxes only, the same at every step.
    own_boxes(cfg.shape, s.blocks.xyz, static_cast<int>(b_bottom(cfg.n, 0)), s.part->local);
    plan_ghosts(s.part->ghosts, s.part->local);
  }
  s.trace("nodes");
  s.storages = make_storages<Dynamic>(cfg, s.rows);
  s.sample_ids = sample_rows(cfg);
  s.arrays =
      s.part ? make_check_arrays(s.rows, s.sample_ids, GlobalIds{s.part->split.owned}, s.blocks.xyz)
             : make_check_arrays(s.rows, s.sample_ids);
  s.trace("allocated");
}

// The search over the step's boxes and cells: partitioned, own elements
// then ghosts.
inline Search make_search(const Scene& s) {
  const Blocks& b = s.blocks;
  return s.part
             ? Search(b.boxes, b.cells, s.cfg.pairs, s.part->local.ids, s.rows, s.part->local.count)
             : Search(b.boxes, b.cells, s.cfg.pairs);
}

// Before a step's turns: block B's boxes at the step's position (timed
// steps 1 .. steps, or the start position; the warm-up at the start
// position), and for run.inject_fault search at the last step, the element
// to leave out of the cells.
inline void move_to(Scene& s, std::int64_t step, bool timed) {
  const Config& cfg = s.cfg;
  s.timing = timed;
  s.step = timed ? step : 0;
  s.last = timed && step == last_step(cfg);
  s.b_z = b_bottom(cfg.n, s.step);
  if (s.part)
    own_boxes(cfg.shape, s.blocks.xyz, static_cast<int>(s.b_z), s.part->local);
  else
    make_boxes(cfg.shape, s.blocks.xyz, static_cast<int>(s.b_z), s.blocks.boxes);
  s.trace(timed ? "boxes" : "warm-up: boxes");
  if (s.last && s.run.inject_fault == "search") {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.blocks.boxes);
    const auto [element, rows] = choose_search_fault(cfg.shape, host, s.sample_ids);
    s.search_fault = element;
    s.search_fault_rows = rows;
  }
}

// Bins the step's boxes into the cells (a partitioned rank's own elements
// and ghosts, on the grid of its part of the scene), leaving out the
// element of run.inject_fault search at the last step.
inline void bin_boxes(Scene& s, const std::function<void(const char*)>& trace = {}) {
  const Config& cfg = s.cfg;
  if (s.part) {
    const Grid grid =
        region_grid(cfg.n, s.b_z, cfg.cell,
                    s.part->split.regions[static_cast<std::size_t>(s.part->split.rank)]);
    bin(s.blocks.boxes, grid, s.blocks.cells, trace, s.part->local.count);
  } else {
    bin(s.blocks.boxes, make_grid(cfg.n, s.b_z, cfg.cell), s.blocks.cells, trace);
  }
  if (s.last && s.search_fault >= 0)
    drop_from_cells(s.blocks.cells, static_cast<int>(s.search_fault));
}

// One execution of a storage's rebuild: everything from the step's boxes to
// its lists. With `phases` (the rebuild variant), its phases are timed in
// the timed steps, each fenced and in a Kokkos Tools region of its own; a
// whole step runs them back to back.
inline void rebuild(Scene& s, NeighbourStorage& st, bool phases = true) {
  StorageRecord& rec = s.record(st);
  rec.step = s.step;
  rec.timed = s.timing;
  const Phase phase = [&](const std::string& name, const std::function<void()>& fn) {
    if (!s.timing || !phases) return fn();
    const profiling::Region region(profiling::region_name(st.name + "." + name));
    s.phases.time(st.name + "." + name, fn);
  };
  if (s.part) {
    // The first ghost each rank sends each peer is left out at the last
    // step for run.inject_fault ghost.
    const bool fault = s.last && s.run.inject_fault == "ghost";
    phase("ghost_exchange", [&] { exchange_ghosts(s.part->ghosts, s.part->local, fault); });
    s.blocks.boxes = s.part->local.boxes;
  }
  if (st.uses_cells) {
    const std::function<void(const char*)> trace = s.timing ? Trace{} : s.trace;
    phase("binning", [&] { bin_boxes(s, trace); });
  }
  st.build(make_search(s), phase, rec);
  s.trace(((s.timing ? "built " : "warm-up: built ") + st.name).c_str());
}

// run.inject_fault self or foreign: the row of B's first element (never
// empty: B's elements touch each other).
inline void inject_row_fault(const Scene& s, NeighbourStorage& st) {
  const std::string& fault = s.run.inject_fault;
  if (fault != "self" && fault != "foreign") return;
  st.inject(s.cfg.shape.elements_a, fault == "self", s.cfg.shape.elements);
}

}  // namespace karma::contact
