// Multidimensional arrays of the karma core: Kokkos::View, with karma's own
// element access (Array, below).
//
// A kernel is written once against a template parameter for the layout; the
// deck's `layout: left|right` picks the instantiation at run time through
// dispatch_layout(), so no kernel is ever written twice.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace karma {

// Whether ExecSpace runs on a GPU: kernels choose their work per item by it.
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
KOKKOS_INLINE_FUNCTION constexpr bool is_gpu_space() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<ExecSpace, Kokkos::Cuda>::value) return true;
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
  if (std::is_same<ExecSpace, Kokkos::HIP>::value) return true;
#elif defined(KOKKOS_ENABLE_HIP)
  if (std::is_same<ExecSpace, Kokkos::Experimental::HIP>::value) return true;
#endif
  return false;
}

using Left = Kokkos::LayoutLeft;    // Fortran order: first index fastest
using Right = Kokkos::LayoutRight;  // C order: last index fastest

using DefaultSpace = Kokkos::DefaultExecutionSpace;
using DefaultMemory = DefaultSpace::memory_space;
using HostMemory = Kokkos::HostSpace;

namespace detail {

// How many run-time extents a Kokkos data type has: the stars of double**[3].
template <class T>
struct StarCount : std::integral_constant<int, 0> {};
template <class T>
struct StarCount<T*> : std::integral_constant<int, 1 + StarCount<T>::value> {};

// The I-th extent of a C array type such as double[3][8].
template <class T, int I>
KOKKOS_INLINE_FUNCTION constexpr std::int64_t array_extent() {
  if constexpr (I == 0)
    return static_cast<std::int64_t>(std::extent<T>::value);
  else
    return array_extent<std::remove_extent_t<T>, I - 1>();
}

// Rank and compile-time extents of a Kokkos data type: the run-time extents
// come first (the stars), the compile-time ones last.
template <class DataType>
struct DataShape {
  static constexpr int dynamic_rank = StarCount<std::remove_all_extents_t<DataType>>::value;
  static constexpr int rank = dynamic_rank + static_cast<int>(std::rank<DataType>::value);

  // Extent D if the type fixes it, 0 if it is given at run time.
  template <int D>
  KOKKOS_INLINE_FUNCTION static constexpr std::int64_t extent() {
    if constexpr (D < dynamic_rank)
      return 0;
    else
      return array_extent<DataType, D - dynamic_rank>();
  }

  // The product of extents [From, To), 0 if one of them is a run-time one.
  template <int From, int To>
  KOKKOS_INLINE_FUNCTION static constexpr std::int64_t product() {
    if constexpr (From >= To) {
      return 1;
    } else {
      constexpr std::int64_t first = extent<From>();
      constexpr std::int64_t rest = product<From + 1, To>();
      return first == 0 || rest == 0 ? 0 : first * rest;
    }
  }
};

// The stride of dimension D in a compact (unpadded) array when the extents in
// the type fix it, else 0. With LayoutRight that is the product of the later
// extents, with LayoutLeft of the earlier ones.
template <class DataType, class Layout, int D>
KOKKOS_INLINE_FUNCTION constexpr std::int64_t static_stride() {
  using Shape = DataShape<DataType>;
  if constexpr (std::is_same<Layout, Kokkos::LayoutRight>::value)
    return Shape::template product<D + 1, Shape::rank>();
  else
    return Shape::template product<0, D>();
}

}  // namespace detail

// karma's array: a Kokkos::View (allocation, extents, subview, deep_copy,
// mirrors: all of View's interface) whose element access a(i, j, k) is
// karma's own offset arithmetic:
// - strides the type fixes are compile-time constants. Kokkos 3.4 multiplies
//   the first index of a LayoutRight double*[3][3] by a run-time stride
//   (m_stride, kept for padding), and Kokkos 4.6's View on mdspan keeps every
//   stride of a LayoutLeft array run-time (layout_left_padded), even when all
//   extents are in the type;
// - run-time strides are signed 64-bit copies. Kokkos 3.4 stores the extents
//   of a view with three or more run-time ones as 32-bit unsigned, which a
//   store to an int array may alias (reloads after every store, no
//   vectorization), and its size_t offsets, which may wrap, keep GCC from
//   vectorizing across work items;
// - extent(r) is a compile-time constant where the type fixes it, else a
//   64-bit copy: Kokkos 4.6 keeps run-time extents as 32-bit integers too, so
//   a loop bounded by a.extent(1) that stores into an int array reloaded the
//   bound after every store.
// karma never pads, so a compact array's strides are those of its extents;
// one built over padded memory whose type fixes a stride aborts.
// DataType carries rank and extents the Kokkos way: double*** is a dynamic
// rank-3 array, double*[3][8] has two static inner extents.
template <class DataType, class Layout = Right, class Memory = DefaultMemory, class... Traits>
class Array : public Kokkos::View<DataType, Layout, Memory, Traits...> {
 public:
  using view_type = Kokkos::View<DataType, Layout, Memory, Traits...>;
  using reference_type = typename view_type::reference_type;

 private:
  using Shape = detail::DataShape<DataType>;
  static constexpr int array_rank = Shape::rank;
  static_assert(array_rank == static_cast<int>(view_type::traits::rank),
                "karma::Array reads the rank of DataType as Kokkos does");
  static_assert(std::is_same<Layout, Left>::value || std::is_same<Layout, Right>::value,
                "karma arrays use LayoutLeft or LayoutRight");
  // Atomic and random-access (texture) views keep Kokkos' access path.
  static constexpr bool own_access = !view_type::traits::memory_traits::is_atomic &&
                                     !view_type::traits::memory_traits::is_random_access;

  std::int64_t m_strides[array_rank > 0 ? array_rank : 1] = {};
  std::size_t m_extents[array_rank > 0 ? array_rank : 1] = {};

  // Extent r if the type fixes it, else 0.
  template <std::size_t... D>
  KOKKOS_INLINE_FUNCTION static constexpr std::int64_t fixed_extent(int r,
                                                                    std::index_sequence<D...>) {
    std::int64_t e = 0;
    ((e = static_cast<int>(D) == r ? Shape::template extent<static_cast<int>(D)>() : e), ...);
    return e;
  }

  // LayoutLeft stride D >= 2 is stride D-1 times extent D-1 (only stride 1
  // may differ from the extents, for padding or a window); with extent D-1
  // in the type the compiler then knows, for instance, that stride 2 of an
  // int*[512][512] is 512 times stride 1, as mdspan's layout_left_padded says.
  template <int D>
  KOKKOS_INLINE_FUNCTION static constexpr bool follows_previous() {
    if constexpr (std::is_same<Layout, Left>::value && D >= 2)
      return detail::static_stride<DataType, Layout, D>() == 0 &&
             Shape::template extent<D - 1>() != 0;
    else
      return false;
  }

  template <std::size_t... D>
  KOKKOS_INLINE_FUNCTION void cache_layout(std::index_sequence<D...>) {
    ((m_strides[D] = static_cast<std::int64_t>(view_type::stride(D))), ...);
    ((m_extents[D] = static_cast<std::size_t>(view_type::extent(D))), ...);
    // The strides karma's access will use must be the ones Kokkos gave.
    const bool as_assumed =
        this->size() == 0 || (true && ... && (stride_of<int(D)>() == m_strides[D]));
    if (!as_assumed)
      Kokkos::abort("karma::Array: padded memory under a type that fixes its strides");
  }
  KOKKOS_INLINE_FUNCTION void cache_layout() {
    cache_layout(std::make_index_sequence<array_rank>{});
  }

  template <int D>
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t stride_of() const {
    constexpr std::int64_t fixed = detail::static_stride<DataType, Layout, D>();
    if constexpr (fixed != 0)
      return fixed;
    else if constexpr (follows_previous<D>())
      return stride_of<D - 1>() * Shape::template extent<D - 1>();
    else
      return m_strides[D];
  }

  template <std::size_t... D, class... I>
  KOKKOS_FORCEINLINE_FUNCTION std::int64_t offset(std::index_sequence<D...>, I... i) const {
    return (std::int64_t(0) + ... + (static_cast<std::int64_t>(i) * stride_of<int(D)>()));
  }

 public:
  KOKKOS_DEFAULTED_FUNCTION Array() = default;
  KOKKOS_DEFAULTED_FUNCTION Array(const Array&) = default;
  KOKKOS_DEFAULTED_FUNCTION Array(Array&&) = default;
  KOKKOS_DEFAULTED_FUNCTION Array& operator=(const Array&) = default;
  KOKKOS_DEFAULTED_FUNCTION Array& operator=(Array&&) = default;

  // A view of the same memory: another karma array, a subview, a Kokkos::View.
  template <class D, class... P,
            std::enable_if_t<std::is_constructible<view_type, const Kokkos::View<D, P...>&>::value,
                             int> = 0>
  KOKKOS_INLINE_FUNCTION Array(const Kokkos::View<D, P...>& other) : view_type(other) {
    cache_layout();
  }
  template <class D, class... P,
            std::enable_if_t<std::is_constructible<view_type, const Kokkos::View<D, P...>&>::value,
                             int> = 0>
  KOKKOS_INLINE_FUNCTION Array& operator=(const Kokkos::View<D, P...>& other) {
    view_type::operator=(view_type(other));
    cache_layout();
    return *this;
  }

  // Allocating or wrapping, as View's constructors: a label or
  // view_alloc(...) and the run-time extents, or a pointer and the extents.
  template <class A0, class... A,
            std::enable_if_t<!Kokkos::is_view<std::decay_t<A0>>::value &&
                                 std::is_constructible<view_type, A0&&, A&&...>::value,
                             int> = 0>
  explicit Array(A0&& a0, A&&... a) : view_type(std::forward<A0>(a0), std::forward<A>(a)...) {
    cache_layout();
  }

  // View's extent, from the type or karma's 64-bit copy (1 past the rank).
  template <class I, std::enable_if_t<std::is_integral<I>::value, int> = 0>
  KOKKOS_FORCEINLINE_FUNCTION constexpr std::size_t extent(const I& r) const {
    const int d = static_cast<int>(r);
    if (d < 0 || d >= array_rank) return 1;
    const std::int64_t fixed = fixed_extent(d, std::make_index_sequence<array_rank>{});
    return fixed != 0 ? static_cast<std::size_t>(fixed) : m_extents[d];
  }

  template <class... I>
  KOKKOS_FORCEINLINE_FUNCTION reference_type operator()(I... i) const {
    if constexpr (own_access && array_rank > 0 && sizeof...(I) == array_rank &&
                  (std::is_integral<I>::value && ...))
      return this->data()[offset(std::index_sequence_for<I...>{}, i...)];
    else
      return view_type::operator()(i...);
  }
};

template <class DataType, class Memory = DefaultMemory>
using CArray = Array<DataType, Right, Memory>;

template <class DataType, class Memory = DefaultMemory>
using FArray = Array<DataType, Left, Memory>;

template <class DataType, class Layout = Right>
using HostArray = Array<DataType, Layout, HostMemory>;

// A view over memory someone else owns (a raw pointer, an MPI buffer).
template <class DataType, class Layout = Right, class Memory = HostMemory>
using UnmanagedArray = Array<DataType, Layout, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

enum class Layout { left, right };
enum class Precision { single, double_ };

inline const char* to_string(Layout l) { return l == Layout::left ? "left" : "right"; }
inline const char* to_string(Precision p) { return p == Precision::single ? "float" : "double"; }

// The names used in decks; the deck schema has already restricted the choice.
inline Layout layout_from_string(const std::string& s) {
  return s == "left" ? Layout::left : Layout::right;
}
inline Precision precision_from_string(const std::string& s) {
  return s == "float" ? Precision::single : Precision::double_;
}

template <class KokkosLayout>
constexpr Layout layout_of() {
  static_assert(std::is_same<KokkosLayout, Left>::value || std::is_same<KokkosLayout, Right>::value,
                "karma arrays use LayoutLeft or LayoutRight");
  return std::is_same<KokkosLayout, Left>::value ? Layout::left : Layout::right;
}

// Calls fn(Left{}) or fn(Right{}): the run-time choice becomes a type.
template <class Fn>
decltype(auto) dispatch_layout(Layout layout, Fn&& fn) {
  if (layout == Layout::left) return std::forward<Fn>(fn)(Left{});
  return std::forward<Fn>(fn)(Right{});
}

// Calls fn(float{}) or fn(double{}).
template <class Fn>
decltype(auto) dispatch_precision(Precision precision, Fn&& fn) {
  if (precision == Precision::single) return std::forward<Fn>(fn)(float{});
  return std::forward<Fn>(fn)(double{});
}

// Allocates without the zero-fill kernel: every mini-app initialises its
// arrays itself, in parallel, with the policy its kernels use (first touch).
template <class ViewType, class... Extents>
ViewType allocate(const std::string& label, Extents... extents) {
  return ViewType(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
}

// An array whose first element is aligned to `alignment` bytes. A View's
// data follows Kokkos' allocation header, so it is only 128-byte aligned;
// 256-byte alignment made streaming kernels 1-7% faster on an H200. The
// owner keeps the memory alive; kernels use the unmanaged view.
template <class DataType, class Layout = Right, class Memory = DefaultMemory>
struct AlignedArray {
  Kokkos::View<unsigned char*, Memory> owner;
  UnmanagedArray<DataType, Layout, Memory> view;
};

template <class DataType, class Layout = Right, class Memory = DefaultMemory, class... Extents>
AlignedArray<DataType, Layout, Memory> allocate_aligned(const std::string& label,
                                                        std::size_t alignment, Extents... extents) {
  using ViewType = UnmanagedArray<DataType, Layout, Memory>;
  const std::size_t bytes =
      ViewType::required_allocation_size(static_cast<std::size_t>(extents)...);
  AlignedArray<DataType, Layout, Memory> a;
  a.owner = Kokkos::View<unsigned char*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label), bytes + alignment);
  const auto address = reinterpret_cast<std::uintptr_t>(a.owner.data());
  const std::uintptr_t aligned = (address + alignment - 1) / alignment * alignment;
  a.view = ViewType(reinterpret_cast<typename ViewType::pointer_type>(aligned),
                    static_cast<std::size_t>(extents)...);
  return a;
}

// deep_copy that also works between layouts in different memory spaces:
// Kokkos permutes between layouts only inside one space, so stage first.
template <class Dst, class Src>
void copy_permuting(const Dst& dst, const Src& src) {
  using same_layout = std::is_same<typename Dst::array_layout, typename Src::array_layout>;
  using same_space = std::is_same<typename Dst::memory_space, typename Src::memory_space>;
  if constexpr (same_layout::value || same_space::value) {
    Kokkos::deep_copy(dst, src);
  } else {
    auto staged = Kokkos::create_mirror_view_and_copy(typename Dst::memory_space{}, src);
    Kokkos::deep_copy(dst, staged);
  }
}

}  // namespace karma

// Kokkos' algorithms take a karma::Array wherever they take a View: it is one.
// Except resize and realloc: they would replace the View under the array's
// strides, so they do not compile; assign a new karma::Array instead.
namespace Kokkos {
template <class D, class L, class M, class... T>
struct is_view<karma::Array<D, L, M, T...>> : public std::true_type {};
template <class D, class L, class M, class... T>
struct is_view<const karma::Array<D, L, M, T...>> : public std::true_type {};

template <class D, class L, class M, class... T, class... Args>
void resize(karma::Array<D, L, M, T...>&, Args&&...) = delete;
template <class Property, class D, class L, class M, class... T, class... Args>
void resize(const Property&, karma::Array<D, L, M, T...>&, Args&&...) = delete;
template <class D, class L, class M, class... T, class... Args>
void realloc(karma::Array<D, L, M, T...>&, Args&&...) = delete;
template <class Property, class D, class L, class M, class... T, class... Args>
void realloc(const Property&, karma::Array<D, L, M, T...>&, Args&&...) = delete;
}  // namespace Kokkos
