// STREAM's kernels and their work items (stream_kernels.hpp): the kernel
// table, start values, policies and items of rank 1 and 3, and the
// element-wise operations.
#pragma once

#include "karma/array.hpp"
#include "karma/divisor.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace karma::stream {

enum class Kernel { copy, mul, add, triad, dot, nstream };

// BabelStream's accounting: an element of every array a kernel reads or
// writes counts once; flops per element as written.
struct KernelSpec {
  Kernel kernel;
  const char* name;
  int arrays_touched;
  int flops_per_element;
};

inline constexpr KernelSpec kernel_table[] = {
    {Kernel::copy, "copy", 2, 0},   {Kernel::mul, "mul", 2, 1}, {Kernel::add, "add", 3, 1},
    {Kernel::triad, "triad", 3, 2}, {Kernel::dot, "dot", 2, 2}, {Kernel::nstream, "nstream", 4, 3},
};

// BabelStream's start values and scalar: no array starts or stays at zero
// once copy or add has run.
inline constexpr double start_a = 0.1;
inline constexpr double start_b = 0.2;
inline constexpr double start_c = 0.0;
inline constexpr double scalar = 0.4;

template <class View>
constexpr int rank_of() {
  return static_cast<int>(View::traits::rank);
}

// Elements one work item handles: in 1D U elements a tile apart (below), in
// 3D with Policy3D::range U neighbours along the middle axis (Items3D). On
// GPUs one element per item left too few loads in flight for copy and mul;
// add, triad and nstream, which load two or three arrays, are best at one.
// Float items take twice as many, so that an item moves the same bytes.
// Host spaces keep one, so loops stay simple and vectorize. (A dot runs in
// teams on a GPU, DotTeams and DotTeams3D, and 8 elements an item on a host
// in 1D, DotBlocks.) The measurements:
// results/stream/README.md and results/campaigns/h200/README.md.
template <Kernel K, class T, class ExecSpace = Kokkos::DefaultExecutionSpace>
constexpr int elements_per_item() {
  if (!is_gpu_space<ExecSpace>()) return 1;
  const int per_double = K == Kernel::copy || K == Kernel::mul ? 2 : 1;
  return sizeof(T) >= 8 ? per_double : 2 * per_double;
}

// 1D items in tiles: the tile_items consecutive items of a tile cover
// tile_items * U consecutive elements, item t of the tile the elements
// t, t + tile_items, ..., so that a warp's loads of each of its U elements
// are one contiguous segment. With one element per item, item j is element j.
inline constexpr std::int64_t tile_items = 32;

template <int U>
constexpr std::int64_t items_1d(std::int64_t n) {
  if (U == 1) return n;
  return (n + tile_items * U - 1) / (tile_items * U) * tile_items;
}

template <int U>
KOKKOS_INLINE_FUNCTION constexpr std::int64_t element_1d(std::int64_t item, int u) {
  if (U == 1) return item;
  return item / tile_items * (tile_items * U) + item % tile_items + u * tile_items;
}

// 1D: items_1d<U>(n) items of U elements. 3D with
// Policy3D::mdrange: one element per item, iterated in memory order, with tiles measured on an H200
// (up to 2x the default's copy bandwidth, 3.7x its dot). Kokkos maps tile extents to blockDim (x,
// y, z) and clamps z to the device's 64 without covering the rest (Kokkos 4.6: half the elements
// went unvisited with 128), so the LayoutRight tile keeps its contiguous extent at 64.
template <class View, class Index, int U = 1>
auto policy_for(const View& v) {
  static_assert(rank_of<View>() == 1 || rank_of<View>() == 3, "STREAM arrays are 1D or 3D");
  if constexpr (rank_of<View>() == 1) {
    const auto items = items_1d<U>(static_cast<std::int64_t>(v.extent(0)));
    return Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, static_cast<Index>(items));
  } else {
    constexpr bool left = std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value;
    constexpr auto order = left ? Kokkos::Iterate::Left : Kokkos::Iterate::Right;
    using Policy = Kokkos::MDRangePolicy<Kokkos::Rank<3, order, order>, Kokkos::IndexType<Index>>;
    const typename Policy::point_type lower{{0, 0, 0}};
    const typename Policy::point_type upper{{static_cast<Index>(v.extent(0)),
                                             static_cast<Index>(v.extent(1)),
                                             static_cast<Index>(v.extent(2))}};
    if (!is_gpu_space<Kokkos::DefaultExecutionSpace>()) return Policy(lower, upper);
    const typename Policy::tile_type tile =
        left ? typename Policy::tile_type{{128, 2, 1}} : typename Policy::tile_type{{1, 4, 64}};
    return Policy(lower, upper, tile);
  }
}

// How 3D kernels iterate. mdrange: Kokkos' MDRangePolicy, tiled as above.
// range: a RangePolicy over Items3D; the dot on a GPU walks the elements in
// memory order (DotTeams3D). On an H200 the tiled MDRangePolicy reached
// 0.41-0.76 of 1D's copy bandwidth and 0.16-0.34 of its dot
// (results/stream/README.md).
enum class Policy3D { mdrange, range };

template <class View>
struct Arrays {
  View a, b, c;
  Policy3D policy = Policy3D::mdrange;  // 3D only
};

// A 3D element (x, y, z) in memory order: x the contiguous index (i in
// LayoutLeft, k in LayoutRight), z the slowest; indices stay (i, j, k).
template <class View>
KOKKOS_INLINE_FUNCTION decltype(auto) in_memory_order(const View& v, std::uint32_t x,
                                                      std::uint32_t y, std::uint32_t z) {
  if constexpr (std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value)
    return v(x, y, z);
  else
    return v(z, y, x);
}

// The work items of Policy3D::range: item t covers the U elements
// (x, y0 + u, z), neighbours along the middle axis, with x = t mod nx, so
// that a warp reads U contiguous segments. (x, y0, z) come from two
// divisions by constants done as multiplications (karma::Divisor: a GPU has
// no integer divider). Items of elements a whole range apart, each element
// located by its own divisions, held float copy to 0.80-0.96 of 1D on an
// H200. Items and extents are 32-bit: the caller keeps range to arrays of
// fewer than 2^31 elements.
template <int U>
struct Items3D {
  Divisor contiguous, blocks;  // by nx, by the blocks of U along y
  std::uint32_t ny = 0;
  std::int64_t count = 0;

  template <class View>
  static Items3D of(const View& v) {
    constexpr bool left = std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value;
    const auto nx = static_cast<std::uint32_t>(v.extent(left ? 0 : 2));
    const auto ny = static_cast<std::uint32_t>(v.extent(1));
    const auto nz = static_cast<std::int64_t>(v.extent(left ? 2 : 0));
    const std::uint32_t blocks = (ny + U - 1) / U;
    return {Divisor(nx), Divisor(blocks), ny, std::int64_t{nx} * blocks * nz};
  }
  // The first element of item t; elements y0 + u past ny do not exist.
  KOKKOS_INLINE_FUNCTION void first(std::uint32_t t, std::uint32_t& x, std::uint32_t& y0,
                                    std::uint32_t& z) const {
    const std::uint32_t line = contiguous.quotient(t);
    x = t - line * contiguous.divisor();
    z = blocks.quotient(line);
    y0 = (line - z * blocks.divisor()) * U;
  }
};

template <class View>
using value_t = typename View::non_const_value_type;

// Every element-wise kernel is an Op on one element's (a, b, c) applied by
// ForEach: in 1D to the U elements of a work item, loads first so they are
// all in flight before the stores; in 3D to the element (i, j, k).
template <class View, class Op, int U>
struct ForEach {
  View a, b, c;
  Op op;
  std::int64_t n;  // 1D: elements

  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I j) const {
    value_t<View> in[U][Op::inputs];
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = element_1d<U>(j, u);
      if (U == 1 || i < n) op.load(a(i), b(i), c(i), in[u]);
    }
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = element_1d<U>(j, u);
      if (U == 1 || i < n) op.store(a(i), b(i), c(i), in[u]);
    }
  }
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, const I j, const I k) const {
    value_t<View> in[Op::inputs];
    op.load(a(i, j, k), b(i, j, k), c(i, j, k), in);
    op.store(a(i, j, k), b(i, j, k), c(i, j, k), in);
  }
};

// The same Ops over Items3D (Policy3D::range).
template <class View, class Op, int U>
struct ForEachItem3D {
  View a, b, c;
  Op op;
  Items3D<U> items;

  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I t) const {
    std::uint32_t x, y0, z;
    items.first(static_cast<std::uint32_t>(t), x, y0, z);
    value_t<View> in[U][Op::inputs];
    for (int u = 0; u < U; ++u)
      if (U == 1 || y0 + u < items.ny)
        op.load(in_memory_order(a, x, y0 + u, z), in_memory_order(b, x, y0 + u, z),
                in_memory_order(c, x, y0 + u, z), in[u]);
    for (int u = 0; u < U; ++u)
      if (U == 1 || y0 + u < items.ny)
        op.store(in_memory_order(a, x, y0 + u, z), in_memory_order(b, x, y0 + u, z),
                 in_memory_order(c, x, y0 + u, z), in[u]);
  }
};

template <class T>
struct Init {
  static constexpr int inputs = 1;
  T a0 = static_cast<T>(start_a), b0 = static_cast<T>(start_b), c0 = static_cast<T>(start_c);
  KOKKOS_INLINE_FUNCTION void load(const T&, const T&, const T&, T*) const {}
  KOKKOS_INLINE_FUNCTION void store(T& a, T& b, T& c, const T*) const {
    a = a0;
    b = b0;
    c = c0;
  }
};

template <class T>
struct Copy {  // c = a
  static constexpr int inputs = 1;
  KOKKOS_INLINE_FUNCTION void load(const T& a, const T&, const T&, T* in) const { in[0] = a; }
  KOKKOS_INLINE_FUNCTION void store(T&, T&, T& c, const T* in) const { c = in[0]; }
};

template <class T>
struct Mul {  // b = s c
  static constexpr int inputs = 1;
  T s;
  KOKKOS_INLINE_FUNCTION void load(const T&, const T&, const T& c, T* in) const { in[0] = c; }
  KOKKOS_INLINE_FUNCTION void store(T&, T& b, T&, const T* in) const { b = s * in[0]; }
};

template <class T>
struct Add {  // c = a + b
  static constexpr int inputs = 2;
  KOKKOS_INLINE_FUNCTION void load(const T& a, const T& b, const T&, T* in) const {
    in[0] = a;
    in[1] = b;
  }
  KOKKOS_INLINE_FUNCTION void store(T&, T&, T& c, const T* in) const { c = in[0] + in[1]; }
};

template <class T>
struct Triad {  // a = b + s c
  static constexpr int inputs = 2;
  T s;
  KOKKOS_INLINE_FUNCTION void load(const T&, const T& b, const T& c, T* in) const {
    in[0] = b;
    in[1] = c;
  }
  KOKKOS_INLINE_FUNCTION void store(T& a, T&, T&, const T* in) const { a = in[0] + s * in[1]; }
};

template <class T>
struct Nstream {  // a += b + s c
  static constexpr int inputs = 3;
  T s;
  KOKKOS_INLINE_FUNCTION void load(const T& a, const T& b, const T& c, T* in) const {
    in[0] = a;
    in[1] = b;
    in[2] = c;
  }
  KOKKOS_INLINE_FUNCTION void store(T& a, T&, T&, const T* in) const {
    a = in[0] + (in[1] + s * in[2]);
  }
};

}  // namespace karma::stream
