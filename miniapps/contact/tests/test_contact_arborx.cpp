// The arborx storage (ArborX's tree and query over contact's boxes) against
// karma's cell-list search: the same rows, with float and with double
// coordinates, and with rows for only the first elements (a partitioned
// rank's own elements before its ghosts). Built only with ArborX.
#include "contact_scene.hpp"
#include "storages/contact_arborx.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma_test_contact_arborx {

using namespace karma::contact;
using karma_test_contact::make_scene;
using karma_test_contact::Scene;

// The rows a storage builds from `search`, sorted.
Rows rows_of(NeighbourStorage st, const Search& search) {
  StorageRecord rec;
  const Phase run = [](const std::string&, const std::function<void()>& fn) { fn(); };
  st.build(search, run, rec);
  return st.sorted_rows();
}

Rows reference_rows(const Scene& s, Index elements) {
  const Search search(s.boxes, s.cells, /*pair_search=*/false);
  return rows_of(csr_storage(elements, elements * 8, 1), search);
}

TEST(ArborX, RowsEqualTheCellSearchInFloatAndDouble) {
  for (int n : {3, 4})
    for (std::int64_t step : {0, 10, 22, 30})
      for (int cell : {unit / 2, unit}) {
        const Scene s = make_scene(n, step, cell);
        const Index N = s.shape.elements;
        const Rows want = reference_rows(s, N);
        ASSERT_GT(want.num_entries(), 0);
        const Search search(s.boxes, s.cells, /*pair_search=*/true);
        for (bool float_exact : {true, false}) {
          const Rows got = rows_of(arborx_storage(float_exact, 1), search);
          EXPECT_EQ(got.num_entries(), want.num_entries())
              << "n " << n << " step " << step << " float " << float_exact;
          EXPECT_EQ(rows_differing(got, want), 0)
              << "n " << n << " step " << step << " float " << float_exact;
        }
      }
}

// Rows for the first elements only, the others searched but without rows
// (a rank's ghosts), ids given explicitly: those rows are the whole mesh's.
TEST(ArborX, OwnRowsBeforeGhostsEqualTheWholeMeshRows) {
  const Scene s = make_scene(4, 26, unit);
  const Index N = s.shape.elements, own = N / 3;
  const auto whole = karma::to_host(reference_rows(s, N));
  Kokkos::View<int*, Memory> ids("ids", N);
  const auto host_ids = Kokkos::create_mirror_view(ids);
  for (Index i = 0; i < N; ++i) host_ids(i) = static_cast<int>(i);
  Kokkos::deep_copy(ids, host_ids);
  const Search search(s.boxes, s.cells, true, ids, own, N);
  const auto got = karma::to_host(rows_of(arborx_storage(true, 1), search));
  ASSERT_EQ(got.num_rows(), own);
  std::int64_t differing = 0;
  for (Index i = 0; i < own; ++i) {
    bool same = got.row_size(i) == whole.row_size(i);
    for (std::int64_t k = 0; same && k < got.row_size(i); ++k) same = got(i, k) == whole(i, k);
    differing += same ? 0 : 1;
  }
  EXPECT_EQ(differing, 0);
}

// A corrupted row of the arborx storage shows in its sorted rows.
TEST(ArborX, InjectedFaultChangesOneRow) {
  const Scene s = make_scene(3, 25, unit);
  const Index N = s.shape.elements;
  const Rows want = reference_rows(s, N);
  NeighbourStorage st = arborx_storage(true, 1);
  StorageRecord rec;
  st.build(
      Search(s.boxes, s.cells, true),
      [](const std::string&, const std::function<void()>& fn) { fn(); }, rec);
  st.inject(s.shape.elements_a, /*self=*/true, N);
  const Rows got = st.sorted_rows();
  EXPECT_EQ(rows_differing(got, want), 1);
  EXPECT_EQ(structure_errors(got).self, 1);
}

}  // namespace karma_test_contact_arborx
