// karma arrays: the types over Kokkos::View and their own element access,
// the run-time layout and precision dispatch, and copies that permute
// between layouts.
#include "karma/array.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace karma_test_array {

// Pointer<R>::type is double with R stars: the Kokkos spelling of rank R.
template <int R>
struct Pointer {
  using type = typename Pointer<R - 1>::type*;
};
template <>
struct Pointer<0> {
  using type = double;
};
template <int R>
using Dyn = typename Pointer<R>::type;

template <class V>
constexpr int rank_of() {
  return static_cast<int>(V::traits::rank);
}
template <class V>
constexpr int dynamic_rank_of() {
  return static_cast<int>(V::traits::rank_dynamic);
}

// Compile-time: rank, layout and memory space of one alias instantiation.
template <class V, int R, class Layout, class Memory>
constexpr bool has_shape() {
  return rank_of<V>() == R && dynamic_rank_of<V>() == R &&
         std::is_same<typename V::array_layout, Layout>::value &&
         std::is_same<typename V::memory_space, Memory>::value &&
         std::is_same<typename V::non_const_value_type, double>::value;
}

template <int R>
constexpr bool aliases_have_shape() {
  using D = Dyn<R>;
  return has_shape<karma::Array<D>, R, Kokkos::LayoutRight, karma::DefaultMemory>() &&
         has_shape<karma::Array<D, karma::Left>, R, Kokkos::LayoutLeft, karma::DefaultMemory>() &&
         has_shape<karma::Array<D, karma::Left, karma::HostMemory>, R, Kokkos::LayoutLeft,
                   Kokkos::HostSpace>() &&
         has_shape<karma::CArray<D>, R, Kokkos::LayoutRight, karma::DefaultMemory>() &&
         has_shape<karma::FArray<D>, R, Kokkos::LayoutLeft, karma::DefaultMemory>() &&
         has_shape<karma::CArray<D, karma::HostMemory>, R, Kokkos::LayoutRight,
                   Kokkos::HostSpace>() &&
         has_shape<karma::FArray<D, karma::HostMemory>, R, Kokkos::LayoutLeft,
                   Kokkos::HostSpace>() &&
         has_shape<karma::HostArray<D>, R, Kokkos::LayoutRight, Kokkos::HostSpace>() &&
         has_shape<karma::HostArray<D, karma::Left>, R, Kokkos::LayoutLeft, Kokkos::HostSpace>() &&
         has_shape<karma::UnmanagedArray<D>, R, Kokkos::LayoutRight, Kokkos::HostSpace>() &&
         has_shape<karma::UnmanagedArray<D, karma::Left>, R, Kokkos::LayoutLeft,
                   Kokkos::HostSpace>();
}

static_assert(aliases_have_shape<1>(), "rank-1 aliases");
static_assert(aliases_have_shape<2>(), "rank-2 aliases");
static_assert(aliases_have_shape<3>(), "rank-3 aliases");
static_assert(aliases_have_shape<4>(), "rank-4 aliases");
static_assert(aliases_have_shape<5>(), "rank-5 aliases");
static_assert(aliases_have_shape<6>(), "rank-6 aliases");
static_assert(aliases_have_shape<7>(), "rank-7 aliases");

static_assert(std::is_same<karma::Left, Kokkos::LayoutLeft>::value, "Left");
static_assert(std::is_same<karma::Right, Kokkos::LayoutRight>::value, "Right");
static_assert(
    std::is_same<karma::DefaultMemory, Kokkos::DefaultExecutionSpace::memory_space>::value,
    "DefaultMemory");
static_assert(karma::UnmanagedArray<double**>::traits::memory_traits::is_unmanaged,
              "UnmanagedArray is unmanaged");
static_assert(!karma::Array<double**>::traits::memory_traits::is_unmanaged, "Array is managed");

static_assert(karma::layout_of<karma::Left>() == karma::Layout::left, "layout_of<Left>");
static_assert(karma::layout_of<karma::Right>() == karma::Layout::right, "layout_of<Right>");
static_assert(karma::layout_of<karma::Array<double***, karma::Left>::array_layout>() ==
                  karma::Layout::left,
              "layout_of a view's layout");

// Extents 2, 3, ..., R+1 and the strides the layout implies (no padding).
template <class V, std::size_t... I>
void check_runtime_shape(std::index_sequence<I...>) {
  constexpr int R = static_cast<int>(sizeof...(I));
  const V v("v", (I + 2)...);
  const bool left = std::is_same<typename V::array_layout, Kokkos::LayoutLeft>::value;
  std::size_t product = 1;
  for (int r = 0; r < R; ++r) {
    EXPECT_EQ(v.extent(r), static_cast<std::size_t>(r + 2)) << "rank " << R << " extent " << r;
    product *= static_cast<std::size_t>(r + 2);
  }
  EXPECT_EQ(v.size(), product);
  EXPECT_EQ(v.span(), product);
  for (int r = 0; r < R; ++r) {
    std::size_t expected = 1;
    if (left)
      for (int q = 0; q < r; ++q) expected *= static_cast<std::size_t>(q + 2);
    else
      for (int q = r + 1; q < R; ++q) expected *= static_cast<std::size_t>(q + 2);
    EXPECT_EQ(v.stride(r), expected)
        << "rank " << R << " stride " << r << (left ? " left" : " right");
  }
}

template <template <class> class Alias, std::size_t... R>
void check_all_ranks(std::index_sequence<R...>) {
  (check_runtime_shape<Alias<Dyn<static_cast<int>(R) + 1>>>(std::make_index_sequence<R + 1>{}),
   ...);
}

template <class D>
using ArrayDefault = karma::Array<D>;
template <class D>
using ArrayLeft = karma::Array<D, karma::Left>;
template <class D>
using CArrayDefault = karma::CArray<D>;
template <class D>
using FArrayDefault = karma::FArray<D>;
template <class D>
using HostRight = karma::HostArray<D>;
template <class D>
using HostLeft = karma::HostArray<D, karma::Left>;

TEST(Array, AliasesOfRank1To7HaveExtentsAndStridesOfTheirLayout) {
  check_all_ranks<ArrayDefault>(std::make_index_sequence<7>{});
  check_all_ranks<ArrayLeft>(std::make_index_sequence<7>{});
  check_all_ranks<CArrayDefault>(std::make_index_sequence<7>{});
  check_all_ranks<FArrayDefault>(std::make_index_sequence<7>{});
  check_all_ranks<HostRight>(std::make_index_sequence<7>{});
  check_all_ranks<HostLeft>(std::make_index_sequence<7>{});
}

TEST(Array, StaticAndDynamicExtentsAgree) {
  using Static = karma::Array<double* [3][8]>;
  using Dynamic = karma::Array<double***>;
  static_assert(rank_of<Static>() == 3 && dynamic_rank_of<Static>() == 1, "double*[3][8]");
  static_assert(rank_of<Dynamic>() == 3 && dynamic_rank_of<Dynamic>() == 3, "double***");
  static_assert(Static::static_extent(1) == 3 && Static::static_extent(2) == 8,
                "static inner extents");
  const Static s("s", 5);
  const Dynamic d("d", 5, 3, 8);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(s.extent(r), d.extent(r)) << "extent " << r;
    EXPECT_EQ(s.stride(r), d.stride(r)) << "stride " << r;
  }
  EXPECT_EQ(s.extent(0), 5u);
  EXPECT_EQ(s.extent(1), 3u);
  EXPECT_EQ(s.extent(2), 8u);
  EXPECT_EQ(s.size(), 120u);

  using StaticLeft = karma::FArray<double* [3][8]>;
  const StaticLeft sl("sl", 5);
  const karma::FArray<double***> dl("dl", 5, 3, 8);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(sl.extent(r), dl.extent(r)) << "extent " << r;
    EXPECT_EQ(sl.stride(r), dl.stride(r)) << "stride " << r;
  }
}

// karma's own extents (64-bit copies, or the type's) are the View's after
// every way an array is made or assigned, and 1 past the rank, as View's.
TEST(Array, OwnExtentsAreTheViewsEverywhere) {
  using Mixed = karma::FArray<int** [3]>;
  const Mixed a("a", 7, 5);
  const Mixed::view_type& base = a;
  for (int r = 0; r < 5; ++r) EXPECT_EQ(a.extent(r), base.extent(r)) << "extent " << r;
  EXPECT_EQ(a.extent(3), 1u);
  Mixed b;
  EXPECT_EQ(b.extent(0), 0u);
  b = a;
  const Mixed c(a);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(b.extent(r), a.extent(r)) << "assigned, extent " << r;
    EXPECT_EQ(c.extent(r), a.extent(r)) << "copied, extent " << r;
  }
  const Kokkos::View<int***, Kokkos::LayoutLeft, karma::DefaultMemory> v("v", 4, 6, 2);
  karma::FArray<int***> d(v);
  EXPECT_EQ(d.extent(0), 4u);
  EXPECT_EQ(d.extent(1), 6u);
  EXPECT_EQ(d.extent(2), 2u);
  d = Kokkos::View<int***, Kokkos::LayoutLeft, karma::DefaultMemory>("w", 9, 1, 3);
  EXPECT_EQ(d.extent(0), 9u);
  EXPECT_EQ(d.extent(1), 1u);
  EXPECT_EQ(d.extent(2), 3u);
  const karma::FArray<int**> slice(Kokkos::subview(v, Kokkos::ALL, Kokkos::ALL, 1));
  EXPECT_EQ(slice.extent(0), 4u);
  EXPECT_EQ(slice.extent(1), 6u);
}

TEST(Array, AllocateSetsLabelAndExtents) {
  auto v = karma::allocate<karma::FArray<float***>>("named", 4, 5, 6);
  EXPECT_EQ(v.label(), "named");
  EXPECT_EQ(v.extent(0), 4u);
  EXPECT_EQ(v.extent(1), 5u);
  EXPECT_EQ(v.extent(2), 6u);
  EXPECT_EQ(v.stride(0), 1u);
  EXPECT_EQ(v.stride(2), 20u);
}

TEST(UnmanagedArray, RightLayoutSeesAndWritesTheVectorsMemory) {
  std::vector<double> buffer(12);
  for (std::size_t n = 0; n < buffer.size(); ++n) buffer[n] = static_cast<double>(n);
  karma::UnmanagedArray<double**> u(buffer.data(), 3, 4);
  EXPECT_EQ(u.data(), buffer.data());
  EXPECT_EQ(u.extent(0), 3u);
  EXPECT_EQ(u.extent(1), 4u);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(u(i, j), static_cast<double>(4 * i + j));
  u(1, 2) = -7.5;
  EXPECT_EQ(buffer[6], -7.5);
  buffer[11] = 42.0;
  EXPECT_EQ(u(2, 3), 42.0);
}

TEST(UnmanagedArray, LeftLayoutSeesTheVectorInColumnOrder) {
  std::vector<double> buffer(12);
  for (std::size_t n = 0; n < buffer.size(); ++n) buffer[n] = static_cast<double>(n);
  karma::UnmanagedArray<double**, karma::Left> u(buffer.data(), 3, 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(u(i, j), static_cast<double>(i + 3 * j));
  u(1, 2) = -1.0;
  EXPECT_EQ(buffer[7], -1.0);
  // The vector outlives the view and keeps what was written through it.
  {
    karma::UnmanagedArray<double*> flat(buffer.data(), buffer.size());
    flat(0) = 99.0;
  }
  EXPECT_EQ(buffer[0], 99.0);
  EXPECT_EQ(u(0, 0), 99.0);
}

TEST(Dispatch, LayoutPassesTheMatchingType) {
  auto probe = [](auto tag) {
    using L = decltype(tag);
    static_assert(std::is_same<L, karma::Left>::value || std::is_same<L, karma::Right>::value,
                  "dispatch_layout passes a layout");
    return std::is_same<L, karma::Left>::value ? 1 : 2;
  };
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::left, probe), 1);
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::right, probe), 2);

  // The type is usable to instantiate an array: its strides tell the layout.
  auto stride0 = [](auto tag) {
    using L = decltype(tag);
    karma::HostArray<double**, L> v("v", 3, 5);
    return v.stride(0);
  };
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::left, stride0), 1u);
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::right, stride0), 5u);

  // layout_of inverts the dispatch.
  auto round_trip = [](auto tag) { return karma::layout_of<decltype(tag)>(); };
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::left, round_trip), karma::Layout::left);
  EXPECT_EQ(karma::dispatch_layout(karma::Layout::right, round_trip), karma::Layout::right);
}

TEST(Dispatch, PrecisionPassesTheMatchingType) {
  auto probe = [](auto tag) {
    using T = decltype(tag);
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "dispatch_precision passes float or double");
    return std::is_same<T, float>::value ? std::string("float") : std::string("double");
  };
  EXPECT_EQ(karma::dispatch_precision(karma::Precision::single, probe), "float");
  EXPECT_EQ(karma::dispatch_precision(karma::Precision::double_, probe), "double");
  auto size = [](auto tag) { return sizeof(tag); };
  EXPECT_EQ(karma::dispatch_precision(karma::Precision::single, size), 4u);
  EXPECT_EQ(karma::dispatch_precision(karma::Precision::double_, size), 8u);
}

TEST(Dispatch, NamesRoundTrip) {
  EXPECT_STREQ(karma::to_string(karma::Layout::left), "left");
  EXPECT_STREQ(karma::to_string(karma::Layout::right), "right");
  EXPECT_STREQ(karma::to_string(karma::Precision::single), "float");
  EXPECT_STREQ(karma::to_string(karma::Precision::double_), "double");
  EXPECT_EQ(karma::layout_from_string("left"), karma::Layout::left);
  EXPECT_EQ(karma::layout_from_string("right"), karma::Layout::right);
  EXPECT_EQ(karma::precision_from_string("float"), karma::Precision::single);
  EXPECT_EQ(karma::precision_from_string("double"), karma::Precision::double_);
}

// --- copy_permuting ------------------------------------------------------------

constexpr int N0 = 3, N1 = 5, N2 = 7;

double f3(int i, int j, int k) { return 100.0 * i + 10.0 * j + k; }
double f2(int i, int j) { return 10.0 * i + j; }

// Fills a rank-3 view in its own space with f3, one element per work item.
template <class V>
void fill3(const V& v) {
  const int n1 = static_cast<int>(v.extent(1)), n2 = static_cast<int>(v.extent(2));
  const int n = static_cast<int>(v.size());
  Kokkos::parallel_for(
      "fill3", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, n),
      KOKKOS_LAMBDA(const int m) {
        const int i = m / (n1 * n2), j = (m / n2) % n1, k = m % n2;
        v(i, j, k) = 100.0 * i + 10.0 * j + k;
      });
  Kokkos::fence();
}

template <class V>
void fill2(const V& v) {
  const int n1 = static_cast<int>(v.extent(1));
  const int n = static_cast<int>(v.size());
  Kokkos::parallel_for(
      "fill2", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, n),
      KOKKOS_LAMBDA(const int m) {
        const int i = m / n1, j = m % n1;
        v(i, j) = 10.0 * i + j;
      });
  Kokkos::fence();
}

template <class V>
int mismatches3(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  int bad = 0;
  for (int i = 0; i < N0; ++i)
    for (int j = 0; j < N1; ++j)
      for (int k = 0; k < N2; ++k) bad += h(i, j, k) != f3(i, j, k);
  return bad;
}

template <class V>
int mismatches2(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  int bad = 0;
  for (int i = 0; i < N0; ++i)
    for (int j = 0; j < N1; ++j) bad += h(i, j) != f2(i, j);
  return bad;
}

// The first two memory cells: (0,0,0) then (1,0,0) for Left, (0,0,1) for Right.
template <class V>
std::pair<double, double> first_cells(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  return {h.data()[0], h.data()[1]};
}

TEST(CopyPermuting, Rank3RightToLeftInOneSpace) {
  karma::Array<double***, karma::Right> right("right", N0, N1, N2);
  karma::Array<double***, karma::Left> left("left", N0, N1, N2);
  fill3(right);
  karma::copy_permuting(left, right);
  EXPECT_EQ(mismatches3(left), 0);
  EXPECT_EQ(first_cells(right).second, f3(0, 0, 1));
  EXPECT_EQ(first_cells(left).second, f3(1, 0, 0));
  // The last cell is (N0-1, N1-1, N2-1) in both; the middle ones differ.
  EXPECT_NE(first_cells(left).second, first_cells(right).second);
}

TEST(CopyPermuting, Rank3LeftToRightInOneSpace) {
  karma::Array<double***, karma::Left> left("left", N0, N1, N2);
  karma::Array<double***, karma::Right> right("right", N0, N1, N2);
  fill3(left);
  karma::copy_permuting(right, left);
  EXPECT_EQ(mismatches3(right), 0);
  EXPECT_EQ(first_cells(left).second, 100.0);
  EXPECT_EQ(first_cells(right).second, 1.0);
}

TEST(CopyPermuting, Rank2NonSquareBothWays) {
  karma::Array<double**, karma::Right> right("right", N0, N1);
  karma::Array<double**, karma::Left> left("left", N0, N1);
  fill2(right);
  karma::copy_permuting(left, right);
  EXPECT_EQ(mismatches2(left), 0);
  EXPECT_EQ(first_cells(left).second, f2(1, 0));
  EXPECT_EQ(first_cells(right).second, f2(0, 1));

  karma::Array<double**, karma::Right> back("back", N0, N1);
  karma::copy_permuting(back, left);
  EXPECT_EQ(mismatches2(back), 0);
}

TEST(CopyPermuting, HostRightToDeviceLeftAndBack) {
  karma::HostArray<double***, karma::Right> host("host", N0, N1, N2);
  for (int i = 0; i < N0; ++i)
    for (int j = 0; j < N1; ++j)
      for (int k = 0; k < N2; ++k) host(i, j, k) = f3(i, j, k);
  karma::Array<double***, karma::Left> device("device", N0, N1, N2);
  karma::copy_permuting(device, host);
  EXPECT_EQ(mismatches3(device), 0);
  EXPECT_EQ(first_cells(device).second, f3(1, 0, 0));
  EXPECT_EQ(host.data()[1], f3(0, 0, 1));

  karma::HostArray<double***, karma::Right> back("back", N0, N1, N2);
  karma::copy_permuting(back, device);
  int bad = 0;
  for (int i = 0; i < N0; ++i)
    for (int j = 0; j < N1; ++j)
      for (int k = 0; k < N2; ++k) bad += back(i, j, k) != f3(i, j, k);
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(back.data()[1], f3(0, 0, 1));
  EXPECT_EQ(back.data()[N2], f3(0, 1, 0));
}

TEST(CopyPermuting, HostLeftToDeviceRightRank2) {
  karma::HostArray<double**, karma::Left> host("host", N0, N1);
  for (int i = 0; i < N0; ++i)
    for (int j = 0; j < N1; ++j) host(i, j) = f2(i, j);
  karma::Array<double**, karma::Right> device("device", N0, N1);
  karma::copy_permuting(device, host);
  EXPECT_EQ(mismatches2(device), 0);
  EXPECT_EQ(first_cells(device).second, f2(0, 1));
  EXPECT_EQ(host.data()[1], f2(1, 0));
}

TEST(CopyPermuting, SameLayoutCopiesVerbatim) {
  karma::Array<double***, karma::Left> a("a", N0, N1, N2);
  karma::Array<double***, karma::Left> b("b", N0, N1, N2);
  fill3(a);
  karma::copy_permuting(b, a);
  EXPECT_EQ(mismatches3(b), 0);
  karma::HostArray<double***, karma::Left> h("h", N0, N1, N2);
  karma::copy_permuting(h, b);
  EXPECT_EQ(h.data()[1], f3(1, 0, 0));
  EXPECT_EQ(h(2, 4, 6), f3(2, 4, 6));
}

// ---------------------------------------------------------------------------
// karma::Array computes its own offsets; they must be Kokkos' to the element.

static_assert(Kokkos::is_view<karma::Array<double**>>::value, "a karma::Array is a View");
static_assert(Kokkos::is_view<const karma::UnmanagedArray<int* [3]>>::value,
              "a karma::Array is a View");
static_assert(karma::detail::static_stride<int[4][5][6], karma::Left, 2>() == 20 &&
                  karma::detail::static_stride<int* [5][6], karma::Right, 0>() == 30 &&
                  karma::detail::static_stride<int* [5][6], karma::Left, 1>() == 0 &&
                  karma::detail::static_stride<int***, karma::Right, 2>() == 1,
              "strides the type fixes are compile-time, the others run-time (0)");

// The address Kokkos' own View::operator() gives.
template <class A, class... I>
KOKKOS_INLINE_FUNCTION const void* kokkos_address(const A& a, I... i) {
  const typename A::view_type& view = a;
  return &view(i...);
}

// Kokkos::resize and Kokkos::realloc would leave a karma::Array's strides
// behind: they must not compile for it, and still must for a plain View.
template <class V, class = void>
struct resizable : std::false_type {};
template <class V>
struct resizable<V, std::void_t<decltype(Kokkos::resize(std::declval<V&>(), 3, 4))>>
    : std::true_type {};
template <class V, class = void>
struct reallocatable : std::false_type {};
template <class V>
struct reallocatable<V, std::void_t<decltype(Kokkos::realloc(std::declval<V&>(), 3, 4))>>
    : std::true_type {};
static_assert(!resizable<karma::HostArray<double**>>::value &&
                  !reallocatable<karma::HostArray<double**>>::value,
              "resize and realloc of a karma::Array do not compile");
static_assert(resizable<Kokkos::View<double**, Kokkos::HostSpace>>::value &&
                  reallocatable<Kokkos::View<double**, Kokkos::HostSpace>>::value,
              "the detection sees Kokkos' own resize and realloc");

// Cells of a whose address differs between karma's a(i, j, k) and Kokkos'.
template <class A>
int offset_mismatches3(const A& a) {
  using Policy = Kokkos::MDRangePolicy<karma::DefaultSpace, Kokkos::Rank<3>>;
  int bad = 0;
  Kokkos::parallel_reduce(
      "test_array::offsets3",
      Policy({0, 0, 0}, {int(a.extent(0)), int(a.extent(1)), int(a.extent(2))}),
      KOKKOS_LAMBDA(const int i, const int j, const int k, int& n) {
        n += static_cast<const void*>(&a(i, j, k)) != kokkos_address(a, i, j, k);
      },
      bad);
  return bad;
}

template <class Layout>
void expect_kokkos_offsets() {
  EXPECT_EQ(offset_mismatches3(karma::Array<int[4][5][6], Layout>("s")), 0);
  EXPECT_EQ(offset_mismatches3(karma::Array<int* [5][6], Layout>("m", 4)), 0);
  EXPECT_EQ(offset_mismatches3(karma::Array<int***, Layout>("d", 4, 5, 6)), 0);
  // A window of a larger array: its strides are not its extents' products.
  karma::Array<int***, Layout> big("big", 7, 5, 6);
  const karma::Array<int***, Layout> window =
      Kokkos::subview(big, Kokkos::make_pair(2, 6), Kokkos::ALL, Kokkos::ALL);
  EXPECT_EQ(offset_mismatches3(window), 0);
  EXPECT_EQ(&window(0, 0, 0), &big(2, 0, 0));
  EXPECT_EQ(&window(3, 4, 5), &big(5, 4, 5));
  // The same with extents in the type: LayoutLeft's stride 1 is then 7, not
  // 4, and stride 2 follows from it.
  karma::Array<int* [5][6], Layout> wide("wide", 7);
  const karma::Array<int* [5][6], Layout> part =
      Kokkos::subview(wide, Kokkos::make_pair(2, 6), Kokkos::ALL, Kokkos::ALL);
  EXPECT_EQ(offset_mismatches3(part), 0);
  EXPECT_EQ(&part(3, 4, 5), &wide(5, 4, 5));
}

TEST(ArrayAccess, OffsetsAreKokkosOffsetsLeft) { expect_kokkos_offsets<karma::Left>(); }
TEST(ArrayAccess, OffsetsAreKokkosOffsetsRight) { expect_kokkos_offsets<karma::Right>(); }

TEST(ArrayAccess, RanksOneTwoAndFourOnTheHost) {
  karma::HostArray<double*, karma::Left> v("v", 9);
  EXPECT_EQ(&v(8), v.data() + 8);
  karma::HostArray<double* [7], karma::Left> m("m", 3);
  EXPECT_EQ(static_cast<const void*>(&m(2, 5)), kokkos_address(m, 2, 5));
  EXPECT_EQ(&m(2, 5), m.data() + 2 + 3 * 5);
  karma::HostArray<double** [2][3], karma::Right> r4("r4", 4, 5);
  EXPECT_EQ(&r4(3, 4, 1, 2), r4.data() + ((3 * 5 + 4) * 2 + 1) * 3 + 2);
  karma::HostArray<double****, karma::Left> l4("l4", 2, 3, 4, 5);
  EXPECT_EQ(&l4(1, 2, 3, 4), l4.data() + 1 + 2 * (2 + 3 * (3 + 4 * 4)));
  karma::HostArray<double** [3][4], karma::Left> l4s("l4s", 2, 5);
  EXPECT_EQ(&l4s(1, 4, 2, 3), l4s.data() + 1 + 2 * (4 + 5 * (2 + 3 * 3)));
}

TEST(ArrayAccess, WritesThroughKarmaReadThroughKokkos) {
  karma::HostArray<int* [3][3]> a("a", 5);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) a(i, j, k) = 100 * i + 10 * j + k;
  const Kokkos::View<int* [3][3], Kokkos::HostSpace> plain = a;
  int bad = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) bad += plain(i, j, k) != 100 * i + 10 * j + k;
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(a.data()[9 * 4 + 3 * 2 + 1], 421);
}

// karma never pads; memory that is padded where the type fixes the stride
// would be indexed wrongly, so building an array over it aborts.
TEST(ArrayAccessDeathTest, PaddedMemoryUnderFixedStridesAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Kokkos::View<double* [5][7], Kokkos::HostSpace> padded(
      Kokkos::view_alloc("padded", Kokkos::AllowPadding), 4);
  if (padded.stride(0) == 35) GTEST_SKIP() << "this Kokkos did not pad";
  EXPECT_DEATH(
      {
        karma::HostArray<double* [5][7]> a = padded;
        (void)a;
      },
      "padded memory");
  // A type that leaves the stride to run time takes the same memory.
  const karma::HostArray<double***> runtime = padded;
  EXPECT_EQ(&runtime(3, 4, 6), &padded(3, 4, 6));
}

}  // namespace karma_test_array
