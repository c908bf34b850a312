// Partitioned runs (contact.decomposition: partitioned): the split of the
// two blocks over the ranks by space, the elements each rank owns, the
// ranks it exchanges ghosts with, and the grid of its part of the scene.
#pragma once

#include "search/contact_cells.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::contact {

// A rank's part of the x-y plane, in fixed-point units: the elements whose
// nominal cube has its lower x-y corner in [lo, hi) are its own, at every
// height and every step (block B moves along z only, so nothing migrates).
// Cuts lie on whole elements of A (two of B), so every nominal cube lies
// entirely in one region.
struct Region {
  int lo[2] = {0, 0}, hi[2] = {0, 0};
  bool empty() const { return lo[0] >= hi[0] || lo[1] >= hi[1]; }
};

// Every box lies within its cube widened by box_reach: the check of every
// row verifies it at every step, so the ghost rule below is complete.
inline constexpr int ghost_reach = box_reach;

// Recursive bisection of columns [x0, x1) x [y0, y1) (A's element sizes)
// over ranks first .. first + parts - 1: the longer side is cut, at a whole
// element of A, in proportion to the ranks on either side (parts / 2 and
// the rest). Every column of the plane holds the same elements (n of A, 4 n
// of B per unit of area), so area is load. A square is cut across y: its
// parts keep whole rows along x, the elements' fastest index, so that fewer
// warps of the search straddle two rows of unlike work
// (results/campaigns/h200x2).
inline void bisect(int x0, int x1, int y0, int y1, int first, int parts, std::vector<Region>& out) {
  if (parts == 1) {
    out[first] = Region{{x0 * h_a, y0 * h_a}, {x1 * h_a, y1 * h_a}};
    return;
  }
  const int left = parts / 2;
  const bool along_x = x1 - x0 > y1 - y0;
  const int a = along_x ? x0 : y0, b = along_x ? x1 : y1;
  const int cut = a + static_cast<int>((std::int64_t{b - a} * left + parts / 2) / parts);
  if (along_x) {
    bisect(x0, cut, y0, y1, first, left, out);
    bisect(cut, x1, y0, y1, first + left, parts - left, out);
  } else {
    bisect(x0, x1, y0, cut, first, left, out);
    bisect(x0, x1, cut, y1, first + left, parts - left, out);
  }
}

inline std::vector<Region> bisect_plane(int n, int ranks) {
  std::vector<Region> regions(static_cast<std::size_t>(ranks));
  bisect(0, n, 0, n, 0, ranks, regions);
  return regions;
}

// The lower x-y corner of element e's nominal cube (block B's x and y do
// not depend on its height).
KOKKOS_INLINE_FUNCTION void nominal_corner(int n, Index elements_a, Index e, int& x, int& y) {
  if (e < elements_a) {
    x = static_cast<int>(e % n) * h_a;
    y = static_cast<int>((e / n) % n) * h_a;
  } else {
    const Index f = e - elements_a, m = 2 * Index(n);
    x = static_cast<int>(f % m) * h_b;
    y = static_cast<int>((f / m) % m) * h_b;
  }
}

// Closed x-y overlap of a box with a region widened by `reach`.
KOKKOS_INLINE_FUNCTION bool reaches(const int box[6], const int lo[2], const int hi[2], int reach) {
  return box[0] <= hi[0] + reach && box[3] >= lo[0] - reach && box[1] <= hi[1] + reach &&
         box[4] >= lo[1] - reach;
}

// Whether element e is owned by a region.
struct InRegion {
  int n;
  Index elements_a;
  int lo[2], hi[2];
  KOKKOS_INLINE_FUNCTION bool operator()(const Index e) const {
    int x, y;
    nominal_corner(n, elements_a, e, x, y);
    return x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1];
  }
};

struct Decomposition {
  int rank = 0, ranks = 1;
  std::vector<Region> regions;  // one per rank
  // Ranks whose elements' boxes can meet this rank's: their regions,
  // widened by ghost_reach, meet this one's widened likewise (symmetric).
  std::vector<int> peers;
  Kokkos::View<int*, Memory> owned;  // this rank's elements, increasing global ids
  Index owned_count = 0;
};

// The split of a mesh over `ranks` and this rank's elements (a scan of all
// element ids, once, before the timed steps).
inline Decomposition decompose(const MeshShape& s, int rank, int ranks) {
  Decomposition d;
  d.rank = rank;
  d.ranks = ranks;
  d.regions = bisect_plane(s.n, ranks);
  const Region mine = d.regions[static_cast<std::size_t>(rank)];
  for (int r = 0; r < ranks; ++r) {
    const Region& o = d.regions[static_cast<std::size_t>(r)];
    bool meet = r != rank;
    for (int c = 0; c < 2; ++c)
      meet = meet &&
             std::int64_t{mine.lo[c]} - ghost_reach <= std::int64_t{o.hi[c]} + ghost_reach &&
             std::int64_t{o.lo[c]} - ghost_reach <= std::int64_t{mine.hi[c]} + ghost_reach;
    if (meet) d.peers.push_back(r);
  }
  const InRegion in_mine{s.n, s.elements_a, {mine.lo[0], mine.lo[1]}, {mine.hi[0], mine.hi[1]}};
  Kokkos::parallel_reduce(
      "contact::decomposition::count", Range(0, s.elements),
      KOKKOS_LAMBDA(const Index e, Index& c) { c += in_mine(e) ? 1 : 0; }, d.owned_count);
  d.owned = Kokkos::View<int*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::owned"), d.owned_count);
  const auto owned = d.owned;
  Kokkos::parallel_scan(
      "contact::decomposition::owned", Range(0, s.elements),
      KOKKOS_LAMBDA(const Index e, Index& k, const bool final) {
        if (!in_mine(e)) return;
        if (final) owned(k) = static_cast<int>(e);
        ++k;
      });
  return d;
}

// The grid of a rank's part of the scene: its region widened as the whole
// scene's grid is (the reach of ghosts and half an element), so with the
// same faces. Boxes reaching past it are binned into its border cells,
// still found.
inline Grid region_grid(int n, std::int64_t b_z, int cell, const Region& r) {
  return make_grid(n, b_z, cell, {r.lo[0], r.lo[1]}, {r.hi[0], r.hi[1]});
}

}  // namespace karma::contact
