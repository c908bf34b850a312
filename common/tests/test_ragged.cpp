// Ragged arrays: compressed rows and columns built from sizes (host and
// device), 64-bit offsets, mirrors and copies; dynamic rows with concurrent
// push_back into one row, overflow that never spills into a neighbour, its
// detection and recovery, and the conversion to compressed rows. Empty rows,
// N = 0 and N = 1 everywhere.
#include "karma/ragged.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace karma_test_ragged {

using karma::DynamicRaggedDown;
using karma::DynamicRaggedRight;
using karma::RaggedDown;
using karma::RaggedRight;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using Exec = Kokkos::DefaultExecutionSpace;
using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

static_assert(std::is_same<RaggedRight<int>::offsets_type::value_type, std::int64_t>::value,
              "offsets are 64-bit");
static_assert(std::is_same<RaggedRight<int>::memory_space, Memory>::value,
              "the default memory space is the default execution space's");
// One class: rows by default, columns by LayoutLeft, mirrors keep the layout.
static_assert(
    std::is_same<karma::Ragged<int>, RaggedRight<int, Memory>>::value &&
        std::is_same<karma::Ragged<int, Kokkos::LayoutLeft, Kokkos::HostSpace>,
                     RaggedDown<int, Kokkos::HostSpace>>::value &&
        std::is_same<RaggedDown<int>::HostMirror, RaggedDown<int, Kokkos::HostSpace>>::value,
    "RaggedRight and RaggedDown are Ragged's two layouts");
static_assert(std::is_same<decltype(karma::to_compressed(DynamicRaggedDown<int>())),
                           RaggedDown<int>>::value &&
                  std::is_same<decltype(karma::to_compressed(
                                   DynamicRaggedRight<int, Memory, Kokkos::LayoutLeft>())),
                               RaggedRight<int>>::value,
              "dynamic rows compress to rows, dynamic columns to columns");

// Every row's entries as the device sees them, through row_size and (i, j).
template <class T, class M>
std::vector<std::vector<T>> rows_on_device(const RaggedRight<T, M>& r) {
  const std::int64_t n = r.num_rows();
  Kokkos::View<std::int64_t*, M> sizes("sizes", n);
  Kokkos::parallel_for(
      "test::sizes", Policy(0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { sizes(i) = r.row_size(i); });
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sizes);
  Kokkos::View<T*, M> flat("flat", r.num_entries());
  Kokkos::parallel_for(
      "test::gather", Policy(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        for (std::int64_t j = 0; j < r.row_size(i); ++j) flat(r.begin(i) + j) = r(i, j);
      });
  auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, flat);
  std::vector<std::vector<T>> rows(n);
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < s(i); ++j) rows[i].push_back(f(k++));
  return rows;
}

TEST(RaggedRight, FromHostRowsIncludingEmptyOnes) {
  const std::vector<std::vector<int>> rows = {{1, 2, 3}, {}, {4}, {}, {5, 6, 7, 8, 9}};
  const auto r = RaggedRight<int>::from_rows("r", rows);
  EXPECT_EQ(r.num_rows(), 5);
  EXPECT_EQ(r.num_entries(), 9);
  EXPECT_EQ(rows_on_device(r), rows);
  const auto h = karma::to_host(r);
  EXPECT_EQ(h.begin(4), 4);
  EXPECT_EQ(h.end(4), 9);
  EXPECT_EQ(h.row_size(1), 0);
  EXPECT_EQ(h(4, 2), 7);
  EXPECT_EQ(h.offsets()(5), 9);
}

TEST(RaggedRight, ZeroAndOneRows) {
  const auto none = RaggedRight<double>::from_sizes("none", std::vector<std::int64_t>{});
  EXPECT_EQ(none.num_rows(), 0);
  EXPECT_EQ(none.num_entries(), 0);
  EXPECT_EQ(none.offsets().extent(0), 1u);
  EXPECT_TRUE(rows_on_device(none).empty());
  const RaggedRight<double> unset;
  EXPECT_EQ(unset.num_rows(), 0);

  const auto one = RaggedRight<double>::from_rows("one", {{2.5, -1.0}});
  EXPECT_EQ(one.num_rows(), 1);
  EXPECT_EQ(rows_on_device(one), (std::vector<std::vector<double>>{{2.5, -1.0}}));
  const auto one_empty = RaggedRight<double>::from_rows("one_empty", {{}});
  EXPECT_EQ(one_empty.num_rows(), 1);
  EXPECT_EQ(one_empty.num_entries(), 0);
}

// Row sizes in a device View of either integer width; values start at zero.
template <class SizeType>
void from_device_sizes() {
  const std::vector<SizeType> host_sizes = {0, 3, 1, 0, 0, 7, 2};
  Kokkos::View<SizeType*, Memory> sizes("sizes", host_sizes.size());
  auto hs = Kokkos::create_mirror_view(sizes);
  for (std::size_t i = 0; i < host_sizes.size(); ++i) hs(i) = host_sizes[i];
  Kokkos::deep_copy(sizes, hs);
  const auto r = RaggedRight<float>::from_sizes("r", sizes);
  const auto h = karma::to_host(r);
  ASSERT_EQ(h.num_rows(), 7);
  ASSERT_EQ(h.num_entries(), 13);
  std::int64_t expected = 0;
  for (std::size_t i = 0; i < host_sizes.size(); ++i) {
    EXPECT_EQ(h.begin(i), expected);
    EXPECT_EQ(h.row_size(i), host_sizes[i]);
    expected += host_sizes[i];
    for (std::int64_t j = 0; j < h.row_size(i); ++j) EXPECT_EQ(h(i, j), 0.0f);
  }
}

TEST(RaggedRight, FromDeviceSizes32) { from_device_sizes<std::int32_t>(); }
TEST(RaggedRight, FromDeviceSizes64) { from_device_sizes<std::int64_t>(); }

TEST(RaggedRight, NegativeSizesAreRefused) {
  EXPECT_THROW(RaggedRight<int>::from_sizes("bad", std::vector<std::int64_t>{1, -2, 3}),
               karma::Error);
  Kokkos::View<int*, Memory> sizes("sizes", 4);
  Kokkos::deep_copy(Kokkos::subview(sizes, 2), -1);
  EXPECT_THROW(RaggedRight<int>::from_sizes("bad", sizes), karma::Error);
}

// Past 2^31 entries the offsets keep counting: the scan alone, so no 8 GiB
// of values is allocated.
TEST(RaggedRight, OffsetsAreSixtyFourBit) {
  const std::int64_t big = std::int64_t{3} << 30;  // 3 * 2^30 per row
  Kokkos::View<std::int64_t*, Memory> sizes("sizes", 3);
  Kokkos::deep_copy(sizes, big);
  Kokkos::View<std::int64_t*, Memory> offsets("offsets", 4);
  const std::int64_t total = karma::sizes_to_offsets("scan", sizes, offsets);
  EXPECT_EQ(total, 3 * big);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, offsets);
  EXPECT_EQ(h(1), big);
  EXPECT_EQ(h(2), 2 * big);
  EXPECT_EQ(h(3), 3 * big);
  EXPECT_GT(h(3), std::int64_t{1} << 32);
  Kokkos::View<std::int64_t*, Memory> short_offsets("short", 3);
  EXPECT_THROW(karma::sizes_to_offsets("scan", sizes, short_offsets), karma::Error);
}

// Negative sizes, spread over a scan long enough to be split among
// threads, are all counted, and the scan throws naming how many.
TEST(RaggedRight, ScanCountsNegativeSizes) {
  const std::int64_t n = 1 << 20;
  Kokkos::View<int*, Memory> sizes("sizes", n);
  Kokkos::deep_copy(sizes, 1);
  Kokkos::View<std::int64_t*, Memory> offsets("offsets", n + 1);
  EXPECT_EQ(karma::sizes_to_offsets("scan", sizes, offsets), n);
  for (const std::int64_t i : {std::int64_t{0}, n / 3, n - 1})
    Kokkos::deep_copy(Kokkos::subview(sizes, i), -2);
  try {
    karma::sizes_to_offsets("scan", sizes, offsets);
    ADD_FAILURE() << "no throw";
  } catch (const karma::Error& e) {
    EXPECT_EQ(std::string(e.what()), "scan: 3 negative row size(s)");
  }
}

TEST(RaggedRight, AdoptingChecksTheLastOffset) {
  Kokkos::View<std::int64_t*, Memory> offsets("offsets", 3);
  auto h = Kokkos::create_mirror_view(offsets);
  h(0) = 0;
  h(1) = 2;
  h(2) = 5;
  Kokkos::deep_copy(offsets, h);
  Kokkos::View<int*, Memory> buffer("buffer", 8);
  EXPECT_THROW(RaggedRight<int>(offsets, buffer), karma::Error);
  // A subview of a larger buffer is fine when its length matches.
  const RaggedRight<int> r(offsets, Kokkos::subview(buffer, std::make_pair(0, 5)));
  EXPECT_EQ(r.num_rows(), 2);
  EXPECT_EQ(r.num_entries(), 5);
  EXPECT_THROW(RaggedRight<int>(Kokkos::View<std::int64_t*, Memory>("empty", 0), buffer),
               karma::Error);
}

TEST(RaggedRight, MirrorAndDeepCopyBothWays) {
  const std::vector<std::vector<int>> rows = {{7}, {}, {8, 9}};
  const auto r = RaggedRight<int>::from_rows("r", rows);
  auto m = karma::create_mirror(r);
  EXPECT_EQ(m.num_rows(), 3);
  EXPECT_EQ(m.row_size(2), 2);  // the shape comes with the mirror
  karma::deep_copy(m, r);
  EXPECT_EQ(m(2, 1), 9);
  m(2, 1) = 42;
  karma::deep_copy(r, m);
  EXPECT_EQ(rows_on_device(r), (std::vector<std::vector<int>>{{7}, {}, {8, 42}}));
  const auto other = RaggedRight<int>::from_rows("other", {{1, 2, 3}});
  EXPECT_THROW(karma::deep_copy(m, other), karma::Error);
}

// Row i holds i % 4 entries: i * 10 + j. (Device lambdas live in free
// functions: CUDA forbids them in a test body, a private member function.)
RaggedRight<std::int64_t> build_mod4(std::int64_t n) {
  return karma::build_ragged_right<std::int64_t>(
      "built", n, KOKKOS_LAMBDA(const std::int64_t i) { return i % 4; },
      KOKKOS_LAMBDA(const std::int64_t i, const RaggedRight<std::int64_t>& out) {
        for (std::int64_t j = 0; j < out.row_size(i); ++j) out(i, j) = i * 10 + j;
      });
}

TEST(RaggedRight, CountScanFill) {
  const std::int64_t n = 1001;
  const auto r = build_mod4(n);
  const auto h = karma::to_host(r);
  ASSERT_EQ(h.num_rows(), n);
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(h.row_size(i), i % 4);
    for (std::int64_t j = 0; j < h.row_size(i); ++j) ASSERT_EQ(h(i, j), i * 10 + j);
    total += i % 4;
  }
  EXPECT_EQ(h.num_entries(), total);
}

TEST(RaggedDown, ColumnsAreContiguousAndIndexedFirst) {
  const auto d = RaggedDown<int>::from_columns("d", {{1, 2}, {}, {3, 4, 5}});
  EXPECT_EQ(d.num_cols(), 3);
  EXPECT_EQ(d.num_entries(), 5);
  const auto h = karma::to_host(d);
  EXPECT_EQ(h.col_size(0), 2);
  EXPECT_EQ(h.col_size(1), 0);
  EXPECT_EQ(h(2, 2), 5);  // entry 2 of column 2
  EXPECT_EQ(h(1, 0), 2);
  EXPECT_EQ(&h(1, 2), &h(0, 2) + 1);
  EXPECT_EQ(h.values()(2), 3);
  auto m = karma::create_mirror(d);
  karma::deep_copy(m, d);
  EXPECT_EQ(m(0, 2), 3);
  m(1, 2) = 40;
  karma::deep_copy(d, m);
  const auto back = karma::to_host(d);
  EXPECT_EQ(back(1, 2), 40);
  EXPECT_EQ(back.offsets()(3), 5);
  EXPECT_THROW(karma::deep_copy(m, RaggedDown<int>::from_columns("other", {{1}})), karma::Error);
  const auto sized = RaggedDown<double>::from_sizes("sized", std::vector<std::int64_t>{0, 2});
  EXPECT_EQ(sized.num_cols(), 2);
  EXPECT_EQ(karma::to_host(sized).col_size(1), 2);
}

// --- dynamic ------------------------------------------------------------------

template <class L>
class DynamicRagged : public ::testing::Test {};
using Layouts = ::testing::Types<Kokkos::LayoutRight, Kokkos::LayoutLeft>;
TYPED_TEST_SUITE(DynamicRagged, Layouts);

template <class D>
std::vector<std::vector<int>> stored_rows(const D& d) {
  auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.counts());
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.data());
  std::vector<std::vector<int>> rows(d.num_rows());
  for (std::int64_t i = 0; i < d.num_rows(); ++i)
    for (std::int64_t k = 0; k < std::min<std::int64_t>(counts(i), d.capacity()); ++k)
      rows[i].push_back(data(i, k));
  return rows;
}

// Thread t pushes t into row 2 and, for every third t, -t into row 4.
template <class D>
void push_many(const D& d, int pushes) {
  Kokkos::parallel_for(
      "test::push", Kokkos::RangePolicy<Exec>(0, pushes), KOKKOS_LAMBDA(const int t) {
        d.push_back(2, t);
        if (t % 3 == 0) d.push_back(4, -t);
      });
}

// Row 1 gets 37 values 100.., row 2 gets 5 values 237.., rows 0 and 3 nothing.
template <class D>
void push_overflowing(const D& d) {
  Kokkos::parallel_for(
      "test::overflow_fill", Kokkos::RangePolicy<Exec>(0, 42), KOKKOS_LAMBDA(const int t) {
        if (t < 37)
          d.push_back(1, 100 + t);
        else
          d.push_back(2, 200 + t);
      });
}

// Row i gets 2 i values from one writer through store(); capacity decides.
template <class D>
void store_single_writer(const D& d) {
  Kokkos::parallel_for(
      "test::store", Kokkos::RangePolicy<Exec>(0, d.num_rows()), KOKKOS_LAMBDA(const int i) {
        int n = 0;
        for (int k = 0; k < i * 2; ++k) d.store(i, n++, 10 * i + k);
        d.set_count(i, n);
      });
}

// Row i gets i % 7 values i * 7 + k.
template <class D>
void push_mod7(const D& d) {
  Kokkos::parallel_for(
      "test::fill", Kokkos::RangePolicy<Exec>(0, d.num_rows()), KOKKOS_LAMBDA(const int i) {
        for (int k = 0; k < i % 7; ++k) d.push_back(i, i * 7 + k);
      });
}

// Three values into row 0.
template <class D>
void push_three(const D& d) {
  Kokkos::parallel_for(
      "test::one", Kokkos::RangePolicy<Exec>(0, 3),
      KOKKOS_LAMBDA(const int t) { d.push_back(0, t); });
}

template <class D>
void push_nothing(const D&) {}

// One thread: 1 into column 0, 3 and 4 into column 2, six values 50.. into column 1.
template <class D>
void push_columns(const D& d) {
  Kokkos::parallel_for(
      "test::down", Kokkos::RangePolicy<Exec>(0, 1), KOKKOS_LAMBDA(const int) {
        d.push_back(0, 1);
        d.push_back(2, 3);
        d.push_back(2, 4);
        for (int k = 0; k < 6; ++k) d.push_back(1, 50 + k);
      });
}

// Many threads push distinct values into one row (and a few others): no
// value lost or doubled, every count exact.
TYPED_TEST(DynamicRagged, ConcurrentPushBackIntoOneRow) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  const int pushes = 200000;
  D d("d", 5, pushes);
  push_many(d, pushes);
  EXPECT_EQ(d.max_count(), pushes);
  EXPECT_EQ(d.overflowed_rows(), 0);
  EXPECT_EQ(d.num_entries(), pushes + (pushes + 2) / 3);
  auto rows = stored_rows(d);
  EXPECT_TRUE(rows[0].empty());
  EXPECT_TRUE(rows[1].empty());
  EXPECT_TRUE(rows[3].empty());
  std::sort(rows[2].begin(), rows[2].end());
  std::vector<int> all(pushes);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(rows[2], all);
  EXPECT_EQ(static_cast<int>(rows[4].size()), (pushes + 2) / 3);
  for (int v : rows[4]) EXPECT_EQ(-v % 3, 0);
}

// A row pushed past its capacity stores exactly capacity of its values,
// keeps counting, and never writes into another row; growing to the
// largest count and refilling gives every value back.
TYPED_TEST(DynamicRagged, OverflowIsDetectedAndRecovered) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  const int capacity = 8, rows = 4;
  D d("d", rows, capacity);
  Kokkos::deep_copy(d.data(), -7);  // sentinel: must survive outside the rows' own slots
  const auto fill = push_overflowing<D>;
  fill(d);
  EXPECT_EQ(d.max_count(), 37);
  EXPECT_EQ(d.overflowed_rows(), 1);
  EXPECT_EQ(d.num_entries(), capacity + 5);
  auto counts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.counts());
  EXPECT_EQ(counts(1), 37);
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.data());
  for (int k = 0; k < capacity; ++k) {
    EXPECT_EQ(data(0, k), -7) << "row 0 slot " << k;
    EXPECT_EQ(data(3, k), -7) << "row 3 slot " << k;
    EXPECT_GE(data(1, k), 100);
    EXPECT_LT(data(1, k), 137);
  }
  auto stored = stored_rows(d);
  std::sort(stored[2].begin(), stored[2].end());
  EXPECT_EQ(stored[2], (std::vector<int>{237, 238, 239, 240, 241}));
  EXPECT_THROW(karma::to_compressed(d), karma::Error);  // would lose 29 values

  const int refills = karma::fill_growing(d, fill);
  EXPECT_EQ(refills, 1);
  EXPECT_EQ(d.capacity(), 37);
  EXPECT_EQ(d.overflowed_rows(), 0);
  stored = stored_rows(d);
  std::sort(stored[1].begin(), stored[1].end());
  std::vector<int> expected(37);
  std::iota(expected.begin(), expected.end(), 100);
  EXPECT_EQ(stored[1], expected);
  // A fill that fits needs no refill.
  EXPECT_EQ(karma::fill_growing(d, fill), 0);
}

// grow keeps every row's stored entries and count; the overflowed row then
// lacks exactly the entries that did not fit.
TYPED_TEST(DynamicRagged, GrowKeepsWhatTheRowsHold) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  D d("d", 4, 8);
  push_overflowing(d);
  d.grow(40);
  EXPECT_EQ(d.capacity(), 40);
  EXPECT_EQ(d.max_count(), 37);
  EXPECT_EQ(d.overflowed_rows(), 0);  // count 37 now fits, but only 8 were kept
  auto stored = stored_rows(d);
  EXPECT_TRUE(stored[0].empty());
  EXPECT_TRUE(stored[3].empty());
  std::sort(stored[2].begin(), stored[2].end());
  EXPECT_EQ(stored[2], (std::vector<int>{237, 238, 239, 240, 241}));
  auto data = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.data());
  std::set<int> kept;
  for (int k = 0; k < 8; ++k) kept.insert(data(1, k));
  EXPECT_EQ(kept.size(), 8u);
  EXPECT_GE(*kept.begin(), 100);
  EXPECT_LT(*kept.rbegin(), 137);
  EXPECT_THROW(d.grow(10), karma::Error);
}

TYPED_TEST(DynamicRagged, SingleWriterStoreKeepsCounting) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  D d("d", 3, 2);
  store_single_writer(d);
  EXPECT_EQ(d.max_count(), 4);
  EXPECT_EQ(d.overflowed_rows(), 1);
  const auto rows = stored_rows(d);
  EXPECT_EQ(rows, (std::vector<std::vector<int>>{{}, {10, 11}, {20, 21}}));
}

TYPED_TEST(DynamicRagged, ToCompressedWithEmptyRows) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  const std::int64_t n = 300;
  D d("d", n, 6);
  push_mod7(d);  // i % 7 == 6 fills a row exactly
  const auto r = karma::to_compressed(d, "compressed");
  const auto h = karma::to_host(r);
  ASSERT_EQ(h.num_rows(), n);
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(h.row_size(i), i % 7);
    for (std::int64_t k = 0; k < h.row_size(i); ++k) EXPECT_EQ(h(i, k), i * 7 + k);
  }
}

TYPED_TEST(DynamicRagged, ZeroAndOneRows) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  D none("none", 0, 4);
  EXPECT_EQ(none.num_rows(), 0);
  EXPECT_EQ(none.max_count(), 0);
  EXPECT_EQ(none.num_entries(), 0);
  none.clear();
  EXPECT_EQ(karma::to_compressed(none).num_rows(), 0);
  EXPECT_EQ(karma::fill_growing(none, push_nothing<D>), 0);

  D one("one", 1, 1);
  EXPECT_EQ(one.max_count(), 0);
  EXPECT_EQ(karma::fill_growing(one, push_three<D>), 1);
  EXPECT_EQ(one.capacity(), 3);
  auto rows = stored_rows(one);
  std::sort(rows[0].begin(), rows[0].end());
  EXPECT_EQ(rows[0], (std::vector<int>{0, 1, 2}));
  const auto r = karma::to_host(karma::to_compressed(one));
  EXPECT_EQ(karma::to_compressed(one).offsets().label(), "karma::RaggedRight::offsets");
  EXPECT_EQ(r.num_rows(), 1);
  EXPECT_EQ(r.num_entries(), 3);
  EXPECT_THROW(D("negative", -1, 2), karma::Error);
}

TYPED_TEST(DynamicRagged, StorageLayout) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  D d("d", 4, 3);
  auto data = Kokkos::create_mirror_view(d.data());
  const std::ptrdiff_t row_step = &data(1, 0) - &data(0, 0);
  const std::ptrdiff_t slot_step = &data(0, 1) - &data(0, 0);
  if (std::is_same<TypeParam, Kokkos::LayoutRight>::value) {
    EXPECT_EQ(slot_step, 1);  // a row is contiguous
    EXPECT_EQ(row_step, 3);
  } else {
    EXPECT_EQ(row_step, 1);  // slot k of neighbouring rows is contiguous
    EXPECT_EQ(slot_step, 4);
  }
}

// Layout left pads its rows so that every slot starts on a 64-byte line,
// also after a grow; layout right keeps rows of exactly the capacity.
TYPED_TEST(DynamicRagged, LayoutLeftSlotsStartOnWholeLines) {
  using D = DynamicRaggedRight<int, Memory, TypeParam>;
  D d("d", 1001, 3);
  for (int grown = 0; grown < 2; ++grown) {
    const auto data = d.data();
    EXPECT_EQ(data.extent(0), 1001u);
    if (std::is_same<TypeParam, Kokkos::LayoutLeft>::value) {
      EXPECT_EQ(data.stride(1) * sizeof(int) % 64, 0u);
      EXPECT_GE(data.stride(1), 1001u);
    } else {
      EXPECT_EQ(data.stride(0), data.extent(1));
    }
    d.grow(5);
  }
}

TEST(DynamicRaggedDown, ColumnsGrowDownAndCompress) {
  using D = DynamicRaggedDown<int>;
  D d("down", 4, 3);  // capacity 4, 3 columns
  EXPECT_EQ(d.num_cols(), 3);
  EXPECT_EQ(d.capacity(), 4);
  push_columns(d);  // overflows column 1
  EXPECT_EQ(d.max_count(), 6);
  EXPECT_EQ(d.overflowed_rows(), 1);
  EXPECT_THROW(karma::to_compressed(d), karma::Error);
  EXPECT_EQ(karma::fill_growing(d, push_columns<D>), 1);
  const auto r = karma::to_host(karma::to_compressed(d));
  ASSERT_EQ(r.num_cols(), 3);
  EXPECT_EQ(r.col_size(0), 1);
  EXPECT_EQ(r.col_size(1), 6);
  EXPECT_EQ(r.col_size(2), 2);
  EXPECT_EQ(r(5, 1), 55);  // entry 5 of column 1
  EXPECT_EQ(r(1, 2), 4);
  EXPECT_EQ(karma::to_compressed(d).values().label(), "karma::RaggedDown::values");
  auto data = Kokkos::create_mirror_view(d.data());
  EXPECT_EQ(&data(2, 0) - &data(1, 0), 6);  // default storage: a column contiguous
}

}  // namespace karma_test_ragged
