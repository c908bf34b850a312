// Multidimensional arrays of the karma core: thin names over Kokkos::View.
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

// DataType carries rank and extents the Kokkos way: double*** is a dynamic
// rank-3 array, double*[3][8] has two static inner extents.
template <class DataType, class Layout = Right, class Memory = DefaultMemory>
using Array = Kokkos::View<DataType, Layout, Memory>;

template <class DataType, class Memory = DefaultMemory>
using CArray = Array<DataType, Right, Memory>;

template <class DataType, class Memory = DefaultMemory>
using FArray = Array<DataType, Left, Memory>;

template <class DataType, class Layout = Right>
using HostArray = Array<DataType, Layout, HostMemory>;

// A view over memory someone else owns (a raw pointer, an MPI buffer).
template <class DataType, class Layout = Right, class Memory = HostMemory>
using UnmanagedArray =
    Kokkos::View<DataType, Layout, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

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
