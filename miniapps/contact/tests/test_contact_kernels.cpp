// karma-contact's kernels on small meshes: the mesh and its boxes, the
// cell-list search feeding all three storages against a brute-force search
// and the check of every row, the row statistics, and every checker shown
// to catch a corrupted list or a search that misses pairs; and a
// partitioned run's split, ghost rule and search, rank by rank, without MPI;
// the run rules' class of the strong deck.
#include "contact_scene.hpp"
#include "deck/contact_deck.hpp"
#include "partition/contact_decomposition.hpp"
#include "partition/contact_ghosts.hpp"
#include "storages/contact_row_stats.hpp"
#include "verification/contact_verify.hpp"

#include "karma/build_info.hpp"
#include "karma/run_rules.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace karma_test_contact {

using namespace karma::contact;
using HostRows = karma::RaggedRight<int, Kokkos::HostSpace>;

Rows csr_rows(const Scene& s, bool pairs) {
  CompressedRows c;
  c.sizes = Kokkos::View<int*, Memory>("sizes", s.shape.elements);
  c.offsets = Kokkos::View<std::int64_t*, Memory>("offsets", s.shape.elements + 1);
  const Search search(s.boxes, s.cells, pairs);
  count_rows(search, c);
  fill_rows(search, c);
  return c.rows;
}

std::vector<std::vector<int>> host_lists(const Rows& r) {
  const auto h = karma::to_host(r);
  std::vector<std::vector<int>> lists(h.num_rows());
  for (std::int64_t i = 0; i < h.num_rows(); ++i)
    for (std::int64_t k = 0; k < h.row_size(i); ++k) lists[i].push_back(h(i, k));
  return lists;
}

Rows rows_from(const std::vector<std::vector<int>>& lists) {
  const Rows r = Rows::from_rows("rows", lists);
  sort_rows(r);
  return r;
}

TEST(Mesh, PerturbationsAreBoundedAndDeterministic) {
  const MeshShape shape = mesh_shape(3);
  EXPECT_EQ(shape.elements, 5 * 27);
  EXPECT_EQ(shape.nodes, 64 + 7 * 7 * 4);
  Coords a("a", shape.nodes), b("b", shape.nodes), c("c", shape.nodes);
  make_nodes(shape, 11, a);
  make_nodes(shape, 11, b);
  make_nodes(shape, 12, c);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, c);
  int differ = 0, moved = 0;
  for (std::int64_t v = 0; v < shape.nodes; ++v)
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(ha(v, d), hb(v, d));
      differ += ha(v, d) != hc(v, d);
      const bool in_a = v < shape.nodes_a;
      const std::int64_t m = in_a ? 4 : 7, w = in_a ? v : v - shape.nodes_a;
      const std::int64_t index[3] = {w % m, (w / m) % m, w / (m * m)};
      const int base = static_cast<int>(index[d]) * (in_a ? h_a : h_b);
      const int amplitude = in_a ? perturb_a : perturb_b;
      EXPECT_LE(std::abs(ha(v, d) - base), amplitude);
      moved += ha(v, d) != base;
    }
  EXPECT_GT(differ, 3 * shape.nodes / 2);  // another seed moves nearly every coordinate
  EXPECT_GT(moved, 3 * shape.nodes / 2);
}

TEST(Mesh, BoxesCoverTheirElementsAndBlockBMoves) {
  const int n = 3;
  const Scene s0 = make_scene(n, 0), s30 = make_scene(n, 30);
  auto b0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s0.boxes);
  auto b30 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s30.boxes);
  const auto& shape = s0.shape;
  for (std::int64_t e = 0; e < shape.elements; ++e) {
    const bool in_a = e < shape.elements_a;
    const std::int64_t f = in_a ? e : e - shape.elements_a, m = in_a ? n : 2 * n;
    const std::int64_t index[3] = {f % m, (f / m) % m, f / (m * m)};
    const int h = in_a ? h_a : h_b, slack = (in_a ? perturb_a : perturb_b) + inflate;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t lift = (!in_a && d == 2) ? b_bottom(n, 0) : 0;
      const std::int64_t lo = index[d] * h + lift, hi = lo + h;
      EXPECT_GE(b0(e, d), lo - slack);
      EXPECT_LE(b0(e, d), lo + slack - 2 * inflate);
      EXPECT_GE(b0(e, 3 + d), hi - slack + 2 * inflate);
      EXPECT_LE(b0(e, 3 + d), hi + slack);
      const int moved = (!in_a && d == 2) ? 30 * step_move : 0;
      EXPECT_EQ(b0(e, d) - b30(e, d), moved);
      EXPECT_EQ(b0(e, 3 + d) - b30(e, 3 + d), moved);
    }
  }
  // 30 steps end 1.0 deep inside A.
  EXPECT_EQ(b_bottom(n, 30), (n - 1) * h_a);
}

TEST(Grid, CellOfClampsOutsideValues) {
  const Grid g = make_grid(2, b_bottom(2, 0), unit);
  EXPECT_EQ(g.cell_of(0, g.lo[0] - 10 * unit), 0);
  EXPECT_EQ(g.cell_of(0, g.lo[0]), 0);
  EXPECT_EQ(g.cell_of(0, g.lo[0] + unit), 1);
  EXPECT_EQ(g.cell_of(2, 1 << 30), g.dims[2] - 1);
  EXPECT_EQ(g.cells, static_cast<std::int64_t>(g.dims[0]) * g.dims[1] * g.dims[2]);
}

// The cell faces along x and y lie a quarter of an element inside A's
// elements, in the whole scene's grid and in a partitioned rank's alike:
// every box of A then spans two cells an axis and every other box of B one,
// where faces through the middle of A's elements would cut every box of B.
TEST(Grid, FacesLetHalfOfBlockBFitInOneCell) {
  const int n = 4;
  const Scene s = make_scene(n, 0);
  const Grid g = make_grid(n, s.bz, unit);
  const Grid part = region_grid(n, s.bz, unit, bisect_plane(n, 2)[1]);
  for (int d = 0; d < 2; ++d) EXPECT_EQ((part.lo[d] - g.lo[d]) % unit, 0);
  auto boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
  std::int64_t cells_b = 0;
  for (std::int64_t e = 0; e < s.shape.elements; ++e)
    for (int d = 0; d < 2; ++d) {
      const int spans = g.cell_of(d, boxes(e, 3 + d)) - g.cell_of(d, boxes(e, d)) + 1;
      if (e < s.shape.elements_a) {
        EXPECT_EQ(spans, 2);
      } else {
        EXPECT_LE(spans, 2);
        cells_b += spans;
      }
    }
  EXPECT_EQ(2 * cells_b, 3 * 2 * s.shape.elements_b);  // 1.5 cells an axis
}

// The cell-list search against the O(N^2) one, at several positions and
// cell sizes (a tiny cell lists a box in many cells; a huge one puts all in
// one), searching rows or pairs: every row exact, structure clean.
TEST(Search, MatchesBruteForceForAnyCellSize) {
  for (std::int64_t step : {0, 12, 30}) {
    std::uint64_t checksum = 0;
    for (int cell : {unit / 4, unit, 3 * unit, 40 * unit}) {
      const Scene s = make_scene(3, step, cell);
      const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
      for (bool pairs : {false, true}) {
        const Rows r = csr_rows(s, pairs);
        sort_rows(r);
        EXPECT_EQ(brute_force_rows_wrong(host_boxes, karma::to_host(r)), 0)
            << "step " << step << " cell " << cell << " pairs " << pairs;
        EXPECT_EQ(structure_errors(r).total(), 0);
        const MeshCheck mc = mesh_rows_wrong(s.shape, s.bz, s.boxes, r);
        EXPECT_EQ(mc.rows_wrong, 0);
        EXPECT_EQ(mc.boxes_outside, 0);
        if (cell == unit / 4 && !pairs) checksum = pair_checksum(r);
        EXPECT_EQ(pair_checksum(r), checksum);
      }
    }
  }
}

// The check of every row (a search over the mesh's structure) agrees with
// the O(N^2) search on meshes from 1 to 5 elements a side, before contact,
// in it and past the standard 30 steps (B deep inside A).
TEST(MeshCheck, EveryRowAgreesWithTheBruteForce) {
  for (int n : {1, 2, 5})
    for (std::int64_t step : {0, 3, 11, 30, 45}) {
      const Scene s = make_scene(n, step);
      const Rows r = csr_rows(s, true);
      sort_rows(r);
      const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
      ASSERT_EQ(brute_force_rows_wrong(host_boxes, karma::to_host(r)), 0);
      const MeshCheck mc = mesh_rows_wrong(s.shape, s.bz, s.boxes, r);
      EXPECT_EQ(mc.rows_wrong, 0) << "n " << n << " step " << step;
      EXPECT_EQ(mc.boxes_outside, 0) << "n " << n << " step " << step;
    }
}

// A box outside its element's widened cube would leave the candidates
// incomplete: it is counted.
TEST(MeshCheck, ABoxOutsideItsBoundsFails) {
  const Scene s = make_scene(3, 20);
  const Rows r = csr_rows(s, true);
  sort_rows(r);
  EXPECT_EQ(mesh_rows_wrong(s.shape, s.bz, s.boxes, r).boxes_outside, 0);
  // One of B's elements moved by its own size along x: its box's top is then
  // at least 0.85 h past the nominal cube's, more than the 0.25 h allowed.
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
  const Index e = s.shape.elements_a + 5;
  h(e, 0) += h_b;
  h(e, 3) += h_b;
  Kokkos::deep_copy(s.boxes, h);
  EXPECT_EQ(mesh_rows_wrong(s.shape, s.bz, s.boxes, r).boxes_outside, 1);
}

// The search fault (inject_fault: search): one element gone from the cell
// lists loses its pairs with lower ids from both rows, so structure and
// signatures across storages stay clean; the brute force and the check of
// every row see every changed row.
TEST(MeshCheck, CatchesTheSearchFault) {
  const Scene s = make_scene(3, 25);
  const auto host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
  const auto [j, changed] = choose_search_fault(s.shape, host_boxes, std::vector<Index>{});
  ASSERT_GE(j, s.shape.elements_a);
  ASSERT_GE(changed, 2);
  drop_from_cells(s.cells, static_cast<int>(j));
  const Rows r = csr_rows(s, true);
  sort_rows(r);
  EXPECT_EQ(structure_errors(r).total(), 0);
  EXPECT_EQ(brute_force_rows_wrong(host_boxes, karma::to_host(r)), changed);
  EXPECT_EQ(mesh_rows_wrong(s.shape, s.bz, s.boxes, r).rows_wrong, changed);
  // The rows it changes avoid the rows it is told to (the sampled ones).
  const auto [j2, changed2] = choose_search_fault(s.shape, host_boxes, std::vector<Index>{j});
  EXPECT_NE(j2, j);
  EXPECT_GE(changed2, 2);
}

// Each cell lists exactly the elements whose box touches it, in increasing
// order: the lists a host loop over the elements makes, element by element.
TEST(Cells, EachCellListsItsElementsInIncreasingOrder) {
  for (const int cell : {unit, unit / 2}) {
    const Scene s = make_scene(4, 12, cell);
    const Grid& g = s.cells.grid;
    const auto boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.boxes);
    std::vector<std::vector<int>> expected(static_cast<std::size_t>(g.cells));
    for (Index e = 0; e < static_cast<Index>(boxes.extent(0)); ++e)
      for (int z = g.cell_of(2, boxes(e, 2)); z <= g.cell_of(2, boxes(e, 5)); ++z)
        for (int y = g.cell_of(1, boxes(e, 1)); y <= g.cell_of(1, boxes(e, 4)); ++y)
          for (int x = g.cell_of(0, boxes(e, 0)); x <= g.cell_of(0, boxes(e, 3)); ++x)
            expected[static_cast<std::size_t>(g.index(x, y, z))].push_back(static_cast<int>(e));
    const auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.cells.offsets);
    const auto items = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.cells.items);
    std::int64_t wrong = 0, longest = 0;
    for (Index c = 0; c < g.cells; ++c) {
      const std::vector<int> got(items.data() + offsets(c), items.data() + offsets(c + 1));
      wrong += got != expected[static_cast<std::size_t>(c)] ? 1 : 0;
      longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(got.size()));
    }
    EXPECT_EQ(wrong, 0) << "cell size " << cell;
    EXPECT_GT(longest, 8);  // cells long enough for the order to be at stake
    EXPECT_EQ(s.cells.entries, offsets(g.cells));
  }
}

// A grid far too small for the scene: boxes outside it land in clamped
// border cells and are still found exactly once.
TEST(Search, ClampedGridStillFindsEveryPair) {
  const Scene s = make_scene(3, 20);
  Scene small = s;
  Grid g;
  g.lo[0] = g.lo[1] = g.lo[2] = unit;
  g.cell = unit;
  g.dims[0] = g.dims[1] = g.dims[2] = 2;
  g.cells = 8;
  CellLists cl;
  bin(s.boxes, g, cl);
  small.cells = cl;
  const Rows a = csr_rows(s, false), b = csr_rows(small, true);
  sort_rows(a);
  sort_rows(b);
  EXPECT_EQ(rows_differing(a, b), 0);
  EXPECT_GT(a.num_entries(), 0);
}

template <class Dynamic>
Rows dynamic_rows(const Scene& s, bool pairs, std::int64_t capacity, int& refills) {
  const Search search(s.boxes, s.cells, pairs);
  Dynamic d("dyn", s.shape.elements, capacity);
  fill_dynamic(search, d);
  const std::int64_t overflowed = d.overflowed_rows();
  const OverflowedRows scratch(s.shape.elements);
  const std::int64_t refilled = recover_dynamic(search, d, scratch, false, 1.0).refilled;
  EXPECT_EQ(refilled, overflowed);  // exactly the rows that overflowed
  refills = refilled > 0 ? 1 : 0;
  EXPECT_EQ(d.overflowed_rows(), 0);
  EXPECT_EQ(recover_dynamic(search, d, scratch, false, 1.0).refilled, 0);
  return canonical_dynamic(d);
}

Rows linked_rows(const Scene& s, bool pairs, std::int64_t pool, int& refills, int stripes = 1) {
  const Search search(s.boxes, s.cells, pairs);
  LinkedLists l = make_lists(s.shape.elements, pool, stripes);
  refills = 0;
  const PoolUse use = fill_lists(search, l);
  if (use.largest_stripe > l.stripe_size) {
    grow_pool(l, use.largest_stripe);
    const PoolUse again = fill_lists(search, l);
    EXPECT_EQ(again.largest_stripe, use.largest_stripe);  // the same demand, now met
    EXPECT_EQ(again.total, use.total);
    ++refills;
  }
  return canonical(l);
}

// A grow takes the capacity to at least the growth factor times the old
// one, and to the longest row where that is more; growth 1 to the longest
// row alone. The rows are the same either way.
TEST(Storages, DynamicRowsGrowGeometrically) {
  EXPECT_EQ(grown_capacity(32, 33, 1.5), 48);
  EXPECT_EQ(grown_capacity(32, 60, 1.5), 60);
  EXPECT_EQ(grown_capacity(32, 33, 1.0), 33);
  EXPECT_EQ(grown_capacity(3, 4, 1.5), 5);  // rounded up
  using Right = karma::DynamicRaggedRight<int, Memory>;
  const Scene s = make_scene(4, 26);
  const Rows reference = canonical(csr_rows(s, false));
  const Search search(s.boxes, s.cells, true);
  for (double growth : {1.0, 1.5, 4.0}) {
    SCOPED_TRACE(growth);
    Right d("dyn", s.shape.elements, 2);
    fill_dynamic(search, d);
    const std::int64_t longest = d.max_count();
    const Recovery r = recover_dynamic(search, d, OverflowedRows(s.shape.elements), false, growth);
    EXPECT_EQ(r.from, 2);
    EXPECT_EQ(r.largest, longest);
    EXPECT_EQ(r.to, grown_capacity(2, longest, growth));
    EXPECT_EQ(d.capacity(), r.to);
    EXPECT_EQ(d.overflowed_rows(), 0);
    EXPECT_EQ(rows_differing(canonical_dynamic(d), reference), 0);
    // Kept from step to step: no grow while the rows fit.
    fill_dynamic(search, d);
    EXPECT_EQ(recover_dynamic(search, d, OverflowedRows(s.shape.elements), false, growth).to, r.to);
  }
}

// Rows or pairs, overflowing or not: the same lists everywhere.
TEST(Storages, AllThreeHoldTheSameListsAfterOverflow) {
  using Right = karma::DynamicRaggedRight<int, Memory>;
  using Left = karma::DynamicRaggedRight<int, Memory, Kokkos::LayoutLeft>;
  const Scene s = make_scene(4, 26);
  const Rows reference = canonical(csr_rows(s, false));
  for (bool pairs : {false, true}) {
    SCOPED_TRACE(pairs ? "pairs" : "rows");
    int refills = 0;
    EXPECT_EQ(rows_differing(canonical(csr_rows(s, pairs)), reference), 0);
    EXPECT_EQ(rows_differing(dynamic_rows<Right>(s, pairs, 4, refills), reference), 0);
    EXPECT_EQ(refills, 1);
    EXPECT_EQ(rows_differing(dynamic_rows<Left>(s, pairs, 200, refills), reference), 0);
    EXPECT_EQ(refills, 0);
    EXPECT_EQ(rows_differing(dynamic_rows<Left>(s, pairs, 1, refills), reference), 0);
    EXPECT_EQ(refills, 1);
    EXPECT_EQ(rows_differing(linked_rows(s, pairs, 10, refills), reference), 0);
    EXPECT_EQ(refills, 1);
    EXPECT_EQ(rows_differing(linked_rows(s, pairs, reference.num_entries(), refills), reference),
              0);
    EXPECT_EQ(refills, 0);
    // A pool in 7 stripes, each with its own counter: too small, then grown.
    EXPECT_EQ(rows_differing(linked_rows(s, pairs, 70, refills, 7), reference), 0);
    EXPECT_EQ(refills, 1);
  }
}

TEST(Stats, EveryStorageAndLaneCountAgrees) {
  const Scene s = make_scene(4, 28);
  const Rows rows = csr_rows(s, true);
  const Rows sorted = canonical(rows);
  RowStats stats("stats", s.shape.elements);
  std::uint64_t expected = 0;
  for (int lanes : {1, 4, 32}) {
    Kokkos::deep_copy(stats, -1.0);
    array_row_stats(CompressedAccess{rows}, stats, lanes);
    EXPECT_EQ(stats_rows_wrong(stats, sorted), 0) << lanes << " lanes";
    if (lanes == 1) expected = stats_checksum(stats);
    EXPECT_EQ(stats_checksum(stats), expected);
  }
  // A row statistic off by one is caught, and changes the checksum.
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, stats);
  h(17, 2) += 1;
  Kokkos::deep_copy(stats, h);
  EXPECT_EQ(stats_rows_wrong(stats, sorted), 1);
  EXPECT_NE(stats_checksum(stats), expected);
}

TEST(Stats, EmptyRowsAreZeros) {
  const Rows rows = rows_from({{}, {3}, {}, {1, 2}});
  RowStats stats("stats", 4);
  array_row_stats(CompressedAccess{rows}, stats, 1);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, stats);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(h(0, k), 0.0);
  EXPECT_EQ(h(1, 0), row_value(3));
  EXPECT_EQ(h(1, 3), row_value(3));
  EXPECT_EQ(h(3, 2), row_value(1) + row_value(2));
  EXPECT_EQ(h(3, 3), (row_value(1) + row_value(2)) / 2.0);
  EXPECT_EQ(stats_rows_wrong(stats, rows), 0);
}

// Each kind of corruption is seen by the checks that should see it.
class Corrupted : public ::testing::Test {
 protected:
  void SetUp() override {
    scene = make_scene(3, 25);
    good = canonical(csr_rows(scene, false));
    lists = host_lists(good);
    host_boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, scene.boxes);
    row = static_cast<int>(scene.shape.elements_a);  // B's first element
    ASSERT_GE(lists[row].size(), 2u);
  }
  void expect_caught(const std::vector<std::vector<int>>& bad, const StructureErrors& expected) {
    const Rows r = rows_from(bad);
    const StructureErrors e = structure_errors(r);
    EXPECT_EQ(e.out_of_range, expected.out_of_range);
    EXPECT_EQ(e.self, expected.self);
    EXPECT_EQ(e.duplicates, expected.duplicates);
    EXPECT_EQ(e.asymmetric, expected.asymmetric);
    EXPECT_EQ(rows_differing(r, good), 1);
    EXPECT_NE(pair_checksum(r), pair_checksum(good));
    EXPECT_EQ(brute_force_rows_wrong(host_boxes, karma::to_host(r)), 1);
    EXPECT_EQ(mesh_rows_wrong(scene.shape, scene.bz, scene.boxes, r).rows_wrong, 1);
    Kokkos::View<Index*, Memory> samples("samples", 3);
    auto hs = Kokkos::create_mirror_view(samples);
    hs(0) = 0;
    hs(1) = row;
    hs(2) = scene.shape.elements - 1;
    Kokkos::deep_copy(samples, hs);
    EXPECT_EQ(sample_rows_wrong(scene.boxes, samples, signatures_of(r)), 1);
    EXPECT_EQ(signatures_differing(signatures_of(r), signatures_of(good)), 1);
  }
  static Signatures signatures_of(const Rows& r) {
    const Signatures sig = make_signatures(r.num_rows());
    array_signatures(CompressedAccess{r}, sig);
    return sig;
  }
  Scene scene;
  Rows good;
  std::vector<std::vector<int>> lists;
  decltype(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, Boxes())) host_boxes;
  int row = 0;
};

TEST_F(Corrupted, CleanListsPassEveryCheck) {
  EXPECT_EQ(structure_errors(good).total(), 0);
  EXPECT_EQ(brute_force_rows_wrong(host_boxes, karma::to_host(good)), 0);
  EXPECT_EQ(mesh_rows_wrong(scene.shape, scene.bz, scene.boxes, good).rows_wrong, 0);
  Kokkos::View<Index*, Memory> samples("samples", 1);
  Kokkos::deep_copy(samples, Index(row));
  EXPECT_EQ(sample_rows_wrong(scene.boxes, samples, signatures_of(good)), 0);
  // The signatures' checksum is the pair checksum; their sizes the rows'.
  const SignatureSummary sum = summarize_signatures(signatures_of(good));
  EXPECT_EQ(sum.checksum, pair_checksum(good));
  EXPECT_EQ(sum.entries, good.num_entries());
  EXPECT_EQ(sum.empty, 0);
  EXPECT_GT(sum.longest, 26);  // in contact: more than a block's own 26 neighbours
}

TEST_F(Corrupted, SignaturesOfEveryStorageAgree) {
  const Index n = scene.shape.elements;
  const Signatures want = signatures_of(good), got = make_signatures(n);
  const Search search(scene.boxes, scene.cells, true);
  karma::DynamicRaggedRight<int, Memory, Kokkos::LayoutLeft> d("d", n, 200);
  fill_dynamic(search, d);
  array_signatures(DynamicAccess<decltype(d)>{d}, got);
  EXPECT_EQ(signatures_differing(got, want), 0);
  LinkedLists l = make_lists(n, 2 * good.num_entries(), 5);
  fill_lists(search, l);
  list_signatures(l, got);
  EXPECT_EQ(signatures_differing(got, want), 0);
  inject_fault(ListAccessForFault{l.heads, l.pool}, row, /*self=*/true, n);
  list_signatures(l, got);
  EXPECT_EQ(signatures_differing(got, want), 1);
}

TEST_F(Corrupted, SelfPair) {
  auto bad = lists;
  bad[row].push_back(row);
  StructureErrors e;
  e.self = 1;
  expect_caught(bad, e);
}

TEST_F(Corrupted, Duplicate) {
  auto bad = lists;
  bad[row].push_back(bad[row][0]);
  StructureErrors e;
  e.duplicates = 1;
  expect_caught(bad, e);
}

TEST_F(Corrupted, MissingPartner) {
  auto bad = lists;
  bad[row].pop_back();  // row j still lists row: asymmetric once
  StructureErrors e;
  e.asymmetric = 1;
  expect_caught(bad, e);
}

TEST_F(Corrupted, OutOfRange) {
  auto bad = lists;
  bad[row].push_back(static_cast<int>(scene.shape.elements) + 5);
  StructureErrors e;
  e.out_of_range = 1;
  expect_caught(bad, e);
}

TEST_F(Corrupted, FaultInjectionChangesEveryStorage) {
  const Index n = scene.shape.elements;
  const Rows r = csr_rows(scene, true);
  inject_fault(CompressedAccessForFault{r}, row, /*self=*/true, n);
  const Rows c = canonical(r);
  EXPECT_EQ(structure_errors(c).self, 1);
  EXPECT_EQ(rows_differing(c, good), 1);

  karma::DynamicRaggedRight<int, Memory> d("d", n, 64);
  fill_dynamic(Search(scene.boxes, scene.cells, true), d);
  inject_fault(DynamicAccessForFault<decltype(d)>{d}, row, /*self=*/false, n);
  EXPECT_EQ(rows_differing(canonical_dynamic(d), good), 1);

  LinkedLists l = make_lists(n, good.num_entries(), 1);
  fill_lists(Search(scene.boxes, scene.cells, true), l);
  inject_fault(ListAccessForFault{l.heads, l.pool}, row, /*self=*/false, n);
  EXPECT_EQ(rows_differing(canonical(l), good), 1);
}

// --- partitioned runs: the split, the ghost rule and the search of one rank ---------------

std::vector<int> host_ids(const Kokkos::View<int*, Memory>& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  return std::vector<int>(h.data(), h.data() + h.extent(0));
}

// Two ranks split the square plane across y: each keeps whole rows of A and
// B along x (the elements' fastest index), half of them each.
TEST(Decomposition, TwoRanksKeepWholeRows) {
  const int n = 126;
  const auto regions = bisect_plane(n, 2);
  for (const Region& r : regions) {
    EXPECT_EQ(r.lo[0], 0);
    EXPECT_EQ(r.hi[0], n * h_a);
  }
  EXPECT_EQ(regions[0].hi[1], 63 * h_a);
  EXPECT_EQ(regions[1].lo[1], 63 * h_a);
  // A part's own elements are whole rows: n of A, then 2 n of B, in turn.
  const std::vector<int> own = host_ids(decompose(mesh_shape(8), 0, 2).owned);
  ASSERT_EQ(own.size(), std::size_t{5 * 8 * 8 * 8 / 2});
  for (std::size_t k = 1; k < 8; ++k) EXPECT_EQ(own[k], own[0] + static_cast<int>(k));
}

// Every element has exactly one owner, for any rank count the plane allows.
TEST(Decomposition, EveryElementHasOneOwner) {
  for (int n : {2, 5, 8})
    for (int ranks = 1; ranks <= 7; ++ranks) {
      const MeshShape shape = mesh_shape(n);
      const auto regions = bisect_plane(n, ranks);
      if (std::any_of(regions.begin(), regions.end(), [](const Region& r) { return r.empty(); }))
        continue;
      std::vector<int> owners(static_cast<std::size_t>(shape.elements), 0);
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> own = host_ids(decompose(shape, r, ranks).owned);
        EXPECT_TRUE(std::is_sorted(own.begin(), own.end()));
        for (int e : own) ++owners[static_cast<std::size_t>(e)];
      }
      EXPECT_EQ(std::count(owners.begin(), owners.end(), 1), shape.elements)
          << "n = " << n << ", " << ranks << " ranks";
    }
}

// One rank's search over its own elements and the ghosts the rule selects
// (as the exchange would deliver them) gives exactly the whole mesh's rows
// of its own elements, pair and row search, at a step where B is inside A.
TEST(Decomposition, OwnRowsWithGhostsEqualTheWholeMeshRows) {
  const int n = 6;
  const Scene s = make_scene(n, 20, unit / 2);
  auto whole = host_lists(csr_rows(s, true));
  for (auto& row : whole) std::sort(row.begin(), row.end());
  const auto boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
  for (int ranks : {2, 3, 4}) {
    std::int64_t crossing = 0;
    for (int r = 0; r < ranks; ++r) {
      const Decomposition d = decompose(s.shape, r, ranks);
      const Region mine = d.regions[static_cast<std::size_t>(r)];
      std::vector<int> ids = host_ids(d.owned);
      const std::set<int> own(ids.begin(), ids.end());
      for (Index e = 0; e < s.shape.elements; ++e) {
        int b[6];
        for (int k = 0; k < 6; ++k) b[k] = boxes(e, k);
        if (!own.count(static_cast<int>(e)) && reaches(b, mine.lo, mine.hi, ghost_reach))
          ids.push_back(static_cast<int>(e));
      }
      const Index count = static_cast<Index>(ids.size());
      Boxes local("local", count);
      Kokkos::View<int*, Memory> local_ids("local_ids", count);
      auto hb = Kokkos::create_mirror_view(local);
      auto hi = Kokkos::create_mirror_view(local_ids);
      for (Index k = 0; k < count; ++k) {
        hi(k) = ids[static_cast<std::size_t>(k)];
        for (int c = 0; c < 6; ++c) hb(k, c) = boxes(ids[static_cast<std::size_t>(k)], c);
      }
      Kokkos::deep_copy(local, hb);
      Kokkos::deep_copy(local_ids, hi);
      CellLists cells;
      bin(local, region_grid(n, s.bz, unit / 2, mine), cells);
      for (bool pairs : {true, false}) {
        CompressedRows c;
        c.sizes = Kokkos::View<int*, Memory>("sizes", d.owned_count);
        c.offsets = Kokkos::View<std::int64_t*, Memory>("offsets", d.owned_count + 1);
        const Search search(local, cells, pairs, local_ids, d.owned_count, count);
        count_rows(search, c);
        fill_rows(search, c);
        sort_rows(c.rows);
        const auto got = host_lists(c.rows);
        for (Index k = 0; k < d.owned_count; ++k) {
          const int e = ids[static_cast<std::size_t>(k)];
          EXPECT_EQ(got[static_cast<std::size_t>(k)], whole[static_cast<std::size_t>(e)])
              << ranks << " ranks, rank " << r << ", element " << e << (pairs ? ", pairs" : "");
          if (pairs)
            for (int j : got[static_cast<std::size_t>(k)]) crossing += own.count(j) ? 0 : 1;
        }
      }
    }
    EXPECT_GT(crossing, 0) << ranks << " ranks: no pair crossed a rank boundary";
  }
}

// The plan made from the boxes of step 0 packs, at a later step, peer after
// peer, the own elements each peer's rule selects then, in order, with
// their boxes of that step (block B has moved down since).
TEST(Ghosts, ThePlanOfStepZeroPacksWhatTheRuleSelectsAtALaterStep) {
  const int n = 8;
  const Scene s = make_scene(n, 20, unit / 2);
  const auto boxes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, s.boxes);
  const Decomposition d = decompose(s.shape, 0, 4);
  LocalElements l = make_local_elements(d);
  Ghosts g;
  g.peers = d.peers;
  for (int p : d.peers) g.peer_regions.push_back(d.regions[static_cast<std::size_t>(p)]);
  own_boxes(s.shape, s.xyz, static_cast<int>(b_bottom(n, 0)), l);
  plan_sends(g, l);
  const auto start = Kokkos::create_mirror(Kokkos::HostSpace{}, l.boxes);  // a copy on hosts too
  Kokkos::deep_copy(start, l.boxes);
  own_boxes(s.shape, s.xyz, static_cast<int>(s.bz), l);
  pack_ghosts(g, l);

  const std::vector<int> own = host_ids(d.owned);
  std::vector<std::vector<int>> expected(g.peers.size());
  for (std::size_t k = 0; k < expected.size(); ++k)
    for (int e : own) {
      int b[6];
      for (int c = 0; c < 6; ++c) b[c] = boxes(e, c);
      if (reaches(b, g.peer_regions[k].lo, g.peer_regions[k].hi, ghost_reach))
        expected[k].push_back(e);
    }
  ASSERT_GE(expected.size(), 2u);
  const auto send = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g.send);
  std::int64_t slot = 0, moved = 0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    ASSERT_EQ(g.send_counts[k], static_cast<std::int64_t>(expected[k].size())) << "peer " << k;
    for (int e : expected[k]) {
      EXPECT_EQ(send(slot * ghost_ints), e) << "peer " << k;
      for (int c = 0; c < 6; ++c)
        EXPECT_EQ(send(slot * ghost_ints + 1 + c), boxes(e, c)) << "peer " << k << ", " << e;
      const auto at = std::find(own.begin(), own.end(), e) - own.begin();
      moved += start(at, 2) != boxes(e, 2) ? 1 : 0;
      ++slot;
    }
  }
  EXPECT_EQ(slot, static_cast<std::int64_t>(g.send.extent(0)) / ghost_ints);
  EXPECT_GT(moved, 0) << "no ghost of block B: the test would not see a stale box";
}

// On the wire, in ints: the fault leaves out each non-empty part's first
// ghost; sent parts keep their packed places, received ones follow each
// other.
TEST(Ghosts, WirePartsLeaveOutEachNonEmptyPartsFirstGhostOnAFault) {
  const std::vector<std::int64_t> elements{3, 0, 2};
  const WireParts whole = wire_parts(elements, false, true);
  EXPECT_EQ(whole.offsets, (std::vector<std::int64_t>{0, 21, 21}));
  EXPECT_EQ(whole.counts, (std::vector<std::int64_t>{21, 0, 14}));
  EXPECT_EQ(whole.total, 35);
  const WireParts sent = wire_parts(elements, true, true);
  EXPECT_EQ(sent.offsets, (std::vector<std::int64_t>{7, 21, 28}));
  EXPECT_EQ(sent.counts, (std::vector<std::int64_t>{14, 0, 7}));
  const WireParts received = wire_parts(elements, true, false);
  EXPECT_EQ(received.offsets, (std::vector<std::int64_t>{0, 14, 14}));
  EXPECT_EQ(received.counts, sent.counts);
  EXPECT_EQ(received.total, 21);
}

// The strong deck as shipped (one mesh partitioned over the ranks) is class
// strong on any number of ranks, in a Release build on the pinned Kokkos.
TEST(ContactRunRules, StrongDeckOnAnyRanks) {
  const std::string path = std::string(KARMA_INPUTS) + "/contact/strong.yaml";
  const karma::Deck deck = karma::Deck::load(path, contact_schema());
  EXPECT_EQ(deck.string("contact.decomposition"), "partitioned");
  for (int ranks : {1, 2, 8}) {
    const karma::RunFacts run{"contact", ranks, true, "Release", karma::build_info::kokkos_pinned};
    const nlohmann::json r = karma::reportable_record(contact_schema(), deck, run);
    EXPECT_EQ(r["class"], "strong") << ranks;
    EXPECT_TRUE(r["reportable"].get<bool>()) << r.dump();
  }
}

}  // namespace karma_test_contact
