// The cell list: the grid, the binning of boxes into cells and the search
// over neighbouring cells that feeds every storage.
#pragma once

#include "mesh/contact_mesh.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

// --- the cell list --------------------------------------------------------------

// A uniform grid over the whole scene. Each element is listed in every cell
// its box touches; a pair is reported only in the cell holding the lower
// corner of the two boxes' intersection, so exactly once, with no set.
struct Grid {
  int lo[3] = {0, 0, 0};
  int cell = unit;
  int dims[3] = {1, 1, 1};
  Index cells = 1;

  KOKKOS_INLINE_FUNCTION int cell_of(int d, int x) const {
    const int c = (x - lo[d]) / cell;  // truncation is harmless: clamped below
    return c < 0 ? 0 : (c >= dims[d] ? dims[d] - 1 : c);
  }
  KOKKOS_INLINE_FUNCTION Index index(int cx, int cy, int cz) const {
    return cx + Index(dims[0]) * (cy + Index(dims[1]) * cz);
  }
};

// How far the grid reaches past the nominal cubes along x and y: a box's
// reach and half an element, so that the cell faces lie a quarter of an
// element inside block A's elements. B's elements, half as wide, then
// alternately fit in one cell and straddle one face; faces through the
// middle of A's elements would cut every box of B and list it in twice the
// cells (results/campaigns/h200x2). A partitioned rank's grid keeps them.
inline constexpr int grid_margin_xy = box_reach + unit / 2;

// The grid for a step over the plane's columns [lo_xy, hi_xy) (fixed-point
// x and y), widened by grid_margin_xy, and the scene's whole height: boxes
// reach at most box_reach beyond their nominal element, and a box outside
// would still be found, in a clamped border cell. Every grid over any part
// of the plane has the same faces.
inline Grid make_grid(int n, std::int64_t b_z, int cell, const std::array<std::int64_t, 2>& lo_xy,
                      const std::array<std::int64_t, 2>& hi_xy) {
  Grid g;
  g.cell = cell;
  const std::int64_t xy = grid_margin_xy, z = unit / 2;
  const std::int64_t top = scene_top(n, b_z);
  const std::int64_t bottom = std::min<std::int64_t>(0, b_z);
  const std::int64_t lo[3] = {lo_xy[0] - xy, lo_xy[1] - xy, bottom - z};
  const std::int64_t hi[3] = {hi_xy[0] + xy, hi_xy[1] + xy, top + z};
  g.cells = 1;
  for (int d = 0; d < 3; ++d) {
    g.lo[d] = static_cast<int>(lo[d]);
    g.dims[d] = static_cast<int>((hi[d] - lo[d]) / cell + 1);
    g.cells *= g.dims[d];
  }
  return g;
}

// The grid of the whole scene.
inline Grid make_grid(int n, std::int64_t b_z, int cell) {
  const std::int64_t side = std::int64_t{n} * h_a;
  return make_grid(n, b_z, cell, {0, 0}, {side, side});
}

// Elements sorted by cell (a counting sort): cell c holds
// items(offsets(c) .. offsets(c + 1) - 1), in increasing element order.
struct CellLists {
  Grid grid;
  Kokkos::View<int*, Memory> counts;            // per cell; reused as the fill cursor
  Kokkos::View<std::int64_t*, Memory> offsets;  // cells + 1
  Kokkos::View<int*, Memory> items;             // a buffer: may be longer than the entries
  Kokkos::View<int*, Memory> unsorted;          // the fill's order, as long as items
  std::int64_t entries = 0;
};

inline std::int64_t bytes_of(const CellLists& c) {
  return static_cast<std::int64_t>(c.counts.span() * sizeof(int) +
                                   c.offsets.span() * sizeof(std::int64_t) +
                                   (c.items.span() + c.unsorted.span()) * sizeof(int));
}

// The atomics of the fill place a cell's elements in any order; each cell is
// copied from `unsorted` to `items` in increasing element order, so that the
// candidate order, and so the row order, is the same on every run. An
// element is listed at most once per cell: its rank among the cell's
// elements is its place. On a GPU a warp takes a cell, a lane an element:
// the lanes read the cell's elements together (one broadcast load each), so
// a cell costs as many loads as it has elements, where a thread per cell
// sorting in place costs their square and diverges. On a CPU a thread per
// cell inserts each element into its place, which moves fewer than the
// rank's comparisons (results/contact).
KOKKOS_INLINE_FUNCTION void place_in_cell(const Kokkos::View<int*, Memory>& unsorted,
                                          const Kokkos::View<int*, Memory>& items,
                                          const std::int64_t begin, const std::int64_t size,
                                          const std::int64_t a) {
  const int v = unsorted(begin + a);
  std::int64_t rank = 0;
  for (std::int64_t b = 0; b < size; ++b) rank += unsorted(begin + b) < v ? 1 : 0;
  items(begin + rank) = v;
}

inline void sort_cells(const Kokkos::View<std::int64_t*, Memory>& offsets,
                       const Kokkos::View<int*, Memory>& unsorted,
                       const Kokkos::View<int*, Memory>& items, const Index cells) {
  if constexpr (on_gpu) {
    using Team = Kokkos::TeamPolicy<Exec>;
    constexpr int lanes = 32, per_team = 8;  // a 256-thread block, a warp per cell
    Kokkos::parallel_for(
        "contact::bin_sort", Team((cells + per_team - 1) / per_team, per_team, lanes),
        KOKKOS_LAMBDA(const Team::member_type& t) {
          const Index c = t.league_rank() * Index(per_team) + t.team_rank();
          if (c >= cells) return;
          const std::int64_t begin = offsets(c), size = offsets(c + 1) - begin;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, size), [&](const std::int64_t a) {
            place_in_cell(unsorted, items, begin, size, a);
          });
        });
  } else {
    Kokkos::parallel_for(
        "contact::bin_sort", Range(0, cells), KOKKOS_LAMBDA(const Index c) {
          const std::int64_t begin = offsets(c), end = offsets(c + 1);
          for (std::int64_t a = begin; a < end; ++a) {
            const int v = unsorted(a);
            std::int64_t b = a;
            for (; b > begin && items(b - 1) > v; --b) items(b) = items(b - 1);
            items(b) = v;
          }
        });
  }
}

// Bins every element into the cells its box touches (the first `count`
// boxes; all when negative: a partitioned run's box array has room for
// more ghosts than a step has). `trace`, when given, is called after each
// part (main.cpp's KARMA_CONTACT_TRACE).
inline void bin(const Boxes& boxes, const Grid& g, CellLists& cl,
                const std::function<void(const char*)>& trace = {}, Index count = -1) {
  const Index elements = count >= 0 ? count : static_cast<Index>(boxes.extent(0));
  cl.grid = g;
  if (static_cast<Index>(cl.counts.extent(0)) < g.cells) {
    cl.counts = Kokkos::View<int*, Memory>();
    cl.offsets = Kokkos::View<std::int64_t*, Memory>();
    cl.counts = Kokkos::View<int*, Memory>("contact::cell_counts", g.cells);
    cl.offsets = Kokkos::View<std::int64_t*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::cell_offsets"), g.cells + 1);
  }
  const auto counts = Kokkos::subview(cl.counts, std::make_pair(Index(0), g.cells));
  const auto offsets = Kokkos::subview(cl.offsets, std::make_pair(Index(0), g.cells + 1));
  Kokkos::deep_copy(counts, 0);
  Kokkos::parallel_for(
      "contact::bin_count", Range(0, elements), KOKKOS_LAMBDA(const Index e) {
        const int x0 = g.cell_of(0, boxes(e, 0)), x1 = g.cell_of(0, boxes(e, 3));
        const int y0 = g.cell_of(1, boxes(e, 1)), y1 = g.cell_of(1, boxes(e, 4));
        const int z0 = g.cell_of(2, boxes(e, 2)), z1 = g.cell_of(2, boxes(e, 5));
        for (int z = z0; z <= z1; ++z)
          for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) Kokkos::atomic_add(&counts(g.index(x, y, z)), 1);
      });
  if (trace) trace("bin: count");
  cl.entries = sizes_to_offsets("contact::bin_scan", counts, offsets);
  if (trace) trace("bin: scan");
  if (static_cast<std::int64_t>(cl.items.extent(0)) < cl.entries) {
    cl.items = Kokkos::View<int*, Memory>();
    cl.unsorted = Kokkos::View<int*, Memory>();
    cl.items = Kokkos::View<int*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::cell_items"), cl.entries);
    cl.unsorted = Kokkos::View<int*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::cell_items_unsorted"),
        cl.entries);
  }
  const auto items = cl.unsorted;
  Kokkos::deep_copy(counts, 0);
  Kokkos::parallel_for(
      "contact::bin_fill", Range(0, elements), KOKKOS_LAMBDA(const Index e) {
        const int x0 = g.cell_of(0, boxes(e, 0)), x1 = g.cell_of(0, boxes(e, 3));
        const int y0 = g.cell_of(1, boxes(e, 1)), y1 = g.cell_of(1, boxes(e, 4));
        const int z0 = g.cell_of(2, boxes(e, 2)), z1 = g.cell_of(2, boxes(e, 5));
        for (int z = z0; z <= z1; ++z)
          for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) {
              const Index c = g.index(x, y, z);
              const int k = Kokkos::atomic_fetch_add(&counts(c), 1);
              items(offsets(c) + k) = static_cast<int>(e);
            }
      });
  if (trace) trace("bin: fill");
  sort_cells(cl.offsets, cl.unsorted, cl.items, g.cells);
  if (trace) trace("bin: sort");
}

// The search every storage shares: for element i, calls sink.add(j, id, row)
// once for every other element j whose box overlaps i's (rows: every j,
// each row filled by its own thread), or only for j > i (pairs: each pair
// tested once and written into both rows, by atomics, as a pair search
// does). j indexes the boxes; id is j's global element id, the value a row
// stores; row says whether j has a row here. Replicated runs: the elements
// are the mesh's, id = j and every element has a row. Partitioned runs: the
// rank's own elements first (the rows, in increasing global id), then its
// ghosts, which have no row: a pair with a ghost (always j > i) is written
// into the owned row only, its other half being the ghost owner's.
struct Search {
  Boxes boxes;
  Grid grid;
  Kokkos::View<std::int64_t*, Memory> offsets;
  Kokkos::View<int*, Memory> items;
  bool pairs;
  Kokkos::View<int*, Memory> ids;  // global id of each element; empty: the index itself
  Index rows = 0;                  // elements [0, rows) have a row
  Index elements = 0;              // boxes in use (own and ghosts)

  Search(const Boxes& b, const CellLists& cl, bool pair_search)
      : boxes(b),
        grid(cl.grid),
        offsets(cl.offsets),
        items(cl.items),
        pairs(pair_search),
        rows(static_cast<Index>(b.extent(0))),
        elements(static_cast<Index>(b.extent(0))) {}
  Search(const Boxes& b, const CellLists& cl, bool pair_search,
         const Kokkos::View<int*, Memory>& global_ids, Index owned, Index count)
      : Search(b, cl, pair_search) {
    ids = global_ids;
    rows = owned;
    elements = count;
  }

  KOKKOS_INLINE_FUNCTION int id(const Index j) const {
    return ids.extent(0) > 0 ? ids(j) : static_cast<int>(j);
  }

  // Calls cell(begin, end, lo) for every cell box a touches, the cell's
  // candidates being items(begin .. end - 1). lo: along each axis, where a
  // candidate's box must start for the pair to belong to this cell (past a's
  // first cell along an axis, only a box starting in this one).
  template <class Cell>
  KOKKOS_INLINE_FUNCTION void walk_cells(const int a[6], const Cell& cell) const {
    const int x0 = grid.cell_of(0, a[0]), x1 = grid.cell_of(0, a[3]);
    const int y0 = grid.cell_of(1, a[1]), y1 = grid.cell_of(1, a[4]);
    const int z0 = grid.cell_of(2, a[2]), z1 = grid.cell_of(2, a[5]);
    for (int z = z0; z <= z1; ++z) {
      const int zlo = z > z0 ? grid.lo[2] + z * grid.cell : INT_MIN;
      for (int y = y0; y <= y1; ++y) {
        const int ylo = y > y0 ? grid.lo[1] + y * grid.cell : INT_MIN;
        for (int x = x0; x <= x1; ++x) {
          const int lo[3] = {x > x0 ? grid.lo[0] + x * grid.cell : INT_MIN, ylo, zlo};
          const Index c = grid.index(x, y, z);
          cell(offsets(c), offsets(c + 1), lo);
        }
      }
    }
  }

  // Candidate items(k) of element i (box a) in a cell of bounds lo: to the
  // sink if it is a neighbour found there.
  template <class Sink>
  KOKKOS_INLINE_FUNCTION void test(const Index i, const int a[6], const int lo[3],
                                   const std::int64_t k, Sink& sink) const {
    const int j = items(k);
    int b[6];
    for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
    if ((pairs ? j > i : j != i) && overlap(a, b) && b[0] >= lo[0] && b[1] >= lo[1] &&
        b[2] >= lo[2])
      sink.add(j, id(j), j < rows);
  }

  template <class Sink>
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, Sink& sink) const {
    int a[6];
    for (int d = 0; d < 6; ++d) a[d] = boxes(i, d);
    walk_cells(a, [&](const std::int64_t begin, const std::int64_t end, const int lo[3]) {
      for (std::int64_t k = begin; k < end; ++k) test(i, a, lo, k, sink);
    });
  }
};

}  // namespace karma::contact
