// STREAM kernels over karma arrays of rank 1 or 3, any layout, float or double.
#pragma once

#include "karma/array.hpp"
#include "karma/divisor.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

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

// Accumulates in double for float arrays too: the sum of 2^28 floats in
// float would lose the answer, and the extra precision moves no bytes.
template <class View>
struct Dot {
  using value_type = double;
  View a, b;
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, const I j, const I k, double& sum) const {
    sum += static_cast<double>(a(i, j, k)) * static_cast<double>(b(i, j, k));
  }
};

// A 1D dot on a host, `width` elements a work item: their products summed
// as a tree, then added to the thread's sum once. With one element an item
// (Dot) every element waits for the add before it, a chain that bounds the
// dot wherever memory does not (results/campaigns/vm/README.md).
template <class View>
struct DotBlocks {
  using value_type = double;
  static constexpr int width = 8;
  View a, b;
  std::int64_t n;
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I item, double& sum) const {
    const std::int64_t i = static_cast<std::int64_t>(item) * width;
    if (i + width > n) {
      for (std::int64_t k = i; k < n; ++k)
        sum += static_cast<double>(a(k)) * static_cast<double>(b(k));
      return;
    }
    static_assert(width == 8, "the sum below adds 8 products");
    double p[width];
    for (int j = 0; j < width; ++j)
      p[j] = static_cast<double>(a(i + j)) * static_cast<double>(b(i + j));
    sum += ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
  }
};

// The dot over Items3D of one element, as a Kokkos reduction:
// Policy3D::range on hosts (whose items are one element each).
template <class View>
struct DotItems3D {
  using value_type = double;
  View a, b;
  Items3D<1> items;
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I t, double& sum) const {
    std::uint32_t x, y, z;
    items.first(static_cast<std::uint32_t>(t), x, y, z);
    sum += static_cast<double>(in_memory_order(a, x, y, z)) *
           static_cast<double>(in_memory_order(b, x, y, z));
  }
};

// Largest relative difference from the value every element should hold;
// NaN counts as the largest double (DBL_MAX is usable in device code).
template <class View>
struct MaxRelativeError {
  using value_type = double;
  View v;
  double expected;
  KOKKOS_INLINE_FUNCTION double error(double x) const {
    const double diff = x > expected ? x - expected : expected - x;
    const double scale = expected != 0 ? (expected > 0 ? expected : -expected) : 1.0;
    const double e = diff / scale;
    return e == e ? e : DBL_MAX;
  }
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, double& worst) const {
    const double e = error(static_cast<double>(v(i)));
    if (e > worst) worst = e;
  }
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, const I j, const I k, double& worst) const {
    const double e = error(static_cast<double>(v(i, j, k)));
    if (e > worst) worst = e;
  }
};

// Where dot writes its sums: pinned host memory on GPUs, so the device writes
// them where the host reads them and no copy follows the kernel (6 us a call
// on an H200).
using ResultMemory = PinnedHostSpace;

// A 1D dot on a GPU, in two stages as BabelStream's CUDA dot: each team adds
// a grid-strided share of the products and writes one partial sum; the host
// adds the partials. Kokkos' one-kernel reduction, which also combines the
// blocks' sums on the device, took about 3 us a call longer on an H200
// (results/stream/README.md).
template <class View, class ExecSpace>
struct DotTeams {
  View a, b;
  std::int64_t n;
  Kokkos::View<double*, ResultMemory> partials;  // one per team
  KOKKOS_INLINE_FUNCTION void operator()(
      const typename Kokkos::TeamPolicy<ExecSpace>::member_type& team) const {
    const std::int64_t stride = std::int64_t{team.league_size()} * team.team_size();
    // Two sums, so that two products' loads are in flight per thread.
    double sum = 0, other = 0;
    std::int64_t i = std::int64_t{team.league_rank()} * team.team_size() + team.team_rank();
    for (; i + stride < n; i += 2 * stride) {
      sum += static_cast<double>(a(i)) * static_cast<double>(b(i));
      other += static_cast<double>(a(i + stride)) * static_cast<double>(b(i + stride));
    }
    if (i < n) sum += static_cast<double>(a(i)) * static_cast<double>(b(i));
    sum += other;
    team.team_reduce(Kokkos::Sum<double>(sum));
    if (team.team_rank() == 0) partials(team.league_rank()) = sum;
  }
};

// DotTeams over a 3D array (Policy3D::range on GPUs): the same grid-strided
// walk in memory order, each thread stepping its (x, y, z) by the stride
// with carries instead of dividing for every element. On an H200 Items3D's
// short columns read by a grid-strided loop reached only 0.78-0.83 of 1D's
// float dot, this walk 0.86-0.97.
template <class View, class ExecSpace>
struct DotTeams3D {
  View a, b;
  std::int64_t n;
  std::uint32_t nx, ny;                          // the contiguous and the middle extent
  Kokkos::View<double*, ResultMemory> partials;  // one per team

  struct Position {
    std::uint32_t x, y, z;
  };
  KOKKOS_INLINE_FUNCTION Position position(std::uint32_t t) const {
    const std::uint32_t line = t / nx;  // once per thread: a plain division
    return {t - line * nx, line % ny, line / ny};
  }
  KOKKOS_INLINE_FUNCTION void advance(Position& p, const Position& by) const {
    p.x += by.x;
    const std::uint32_t carry_x = p.x >= nx;
    p.x -= carry_x ? nx : 0;
    p.y += by.y + carry_x;
    const std::uint32_t carry_y = p.y >= ny;
    p.y -= carry_y ? ny : 0;
    p.z += by.z + carry_y;
  }
  KOKKOS_INLINE_FUNCTION double product(const Position& p) const {
    return static_cast<double>(in_memory_order(a, p.x, p.y, p.z)) *
           static_cast<double>(in_memory_order(b, p.x, p.y, p.z));
  }
  KOKKOS_INLINE_FUNCTION void operator()(
      const typename Kokkos::TeamPolicy<ExecSpace>::member_type& team) const {
    const std::int64_t stride = std::int64_t{team.league_size()} * team.team_size();
    std::int64_t i = std::int64_t{team.league_rank()} * team.team_size() + team.team_rank();
    const Position by = position(static_cast<std::uint32_t>(stride));
    Position p = i < n ? position(static_cast<std::uint32_t>(i)) : Position{0, 0, 0};
    // Two sums, so that two products' loads are in flight per thread.
    double sum = 0, other = 0;
    for (; i + stride < n; i += 2 * stride) {
      Position q = p;
      advance(q, by);
      sum += product(p);
      other += product(q);
      p = q;
      advance(p, by);
    }
    if (i < n) sum += product(p);
    sum += other;
    team.team_reduce(Kokkos::Sum<double>(sum));
    if (team.team_rank() == 0) partials(team.league_rank()) = sum;
  }
};

// The 1D dot: teams of 512, four times as many as the device holds at once
// (four waves). The GPU's time hardly changes with the team size (256 to
// 1024) on an H100 or an H200; the host adds one partial a team, so fewer,
// larger teams take it less time. The 3D walk runs one wave of 256, as
// measured for it. (results/stream/README.md)
inline constexpr int dot_team_size = 512;
inline constexpr int dot_waves = 4;
inline constexpr int dot_team_size_3d = 256;

// The sum of `count` partials in eight running sums: one running sum is a
// chain of dependent additions, microseconds for thousands of partials, and
// the dot's time includes it.
inline double add_partials(const double* partials, int count) {
  double lane[8] = {};
  int t = 0;
  for (; t + 8 <= count; t += 8)
    for (int l = 0; l < 8; ++l) lane[l] += partials[t + l];
  for (; t < count; ++t) lane[t % 8] += partials[t];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Runs `teams` (DotTeams or DotTeams3D) as `league` teams of `team_size`,
// waits for them and adds their partial sums.
template <class Teams, class ExecSpace = Kokkos::DefaultExecutionSpace>
double sum_of_teams(const Teams& teams, int league, int team_size) {
  Kokkos::parallel_for("stream::dot", Kokkos::TeamPolicy<ExecSpace>(league, team_size), teams);
  Kokkos::fence();
  return add_partials(teams.partials.data(), league);
}

// One partial per team, as many teams as `partials` holds.
template <class View, class ExecSpace = Kokkos::DefaultExecutionSpace>
double dot_in_teams(const View& a, const View& b,
                    const Kokkos::View<double*, ResultMemory>& partials, int team_size) {
  return sum_of_teams<DotTeams<View, ExecSpace>, ExecSpace>(
      {a, b, static_cast<std::int64_t>(a.extent(0)), partials},
      static_cast<int>(partials.extent(0)), team_size);
}

// The same over a 3D array in `league` teams (at most partials' extent).
template <class View, class ExecSpace = Kokkos::DefaultExecutionSpace>
double dot_in_teams_3d(const View& a, const View& b,
                       const Kokkos::View<double*, ResultMemory>& partials, int team_size,
                       int league) {
  constexpr bool left = std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value;
  return sum_of_teams<DotTeams3D<View, ExecSpace>, ExecSpace>(
      {a, b, static_cast<std::int64_t>(a.size()),
       static_cast<std::uint32_t>(a.extent(left ? 0 : 2)), static_cast<std::uint32_t>(a.extent(1)),
       partials},
      league, team_size);
}

// Runs the reduction `dot` over `policy` into `total`, waits for it and
// reads the sum.
template <class Policy, class Reduction>
double reduce_into(const Policy& policy, const Reduction& dot,
                   const Kokkos::View<double, ResultMemory>& total) {
  Kokkos::parallel_reduce("stream::dot", policy, dot, total);
  Kokkos::fence();
  return total();
}

// DotBlocks over a 1D array, its sum in `total`.
template <class View, class Index, class ExecSpace = Kokkos::DefaultExecutionSpace>
double dot_in_blocks(const View& a, const View& b,
                     const Kokkos::View<double, ResultMemory>& total) {
  constexpr int width = DotBlocks<View>::width;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const auto items = static_cast<Index>((n + width - 1) / width);
  return reduce_into(Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, items),
                     DotBlocks<View>{a, b, n}, total);
}

template <Kernel K, class View, class Index, class Op>
void for_each(const char* label, const Arrays<View>& x, const Op& op) {
  constexpr int U = elements_per_item<K, value_t<View>>();
  if constexpr (rank_of<View>() == 1) {
    Kokkos::parallel_for(label, policy_for<View, Index, U>(x.a),
                         ForEach<View, Op, U>{x.a, x.b, x.c, op, std::int64_t(x.a.extent(0))});
  } else if (x.policy == Policy3D::range) {
    const auto items = Items3D<U>::of(x.a);
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, items.count),
                         ForEachItem3D<View, Op, U>{x.a, x.b, x.c, op, items});
  } else {
    Kokkos::parallel_for(label, policy_for<View, Index>(x.a),
                         ForEach<View, Op, 1>{x.a, x.b, x.c, op, 0});
  }
}

// Every element of a, b and c set to `values` (by default the start values).
template <class View, class Index>
void initialize(const Arrays<View>& x, const Init<value_t<View>>& values = {}) {
  // The same policy as the kernels: on a CPU, pages land near their threads.
  for_each<Kernel::copy, View, Index>("stream::init", x, values);
}

struct DotResult {
  Kokkos::View<double, ResultMemory> total;      // Kokkos' reduction
  Kokkos::View<double*, ResultMemory> partials;  // DotTeams, GPUs only: dot_waves waves
  int one_wave_3d = 0;  // DotTeams3D: teams of dot_team_size_3d the device holds at once
};

inline DotResult make_dot_result() {
  int teams = 0, one_wave_3d = 0;
  if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
    const int concurrency = Kokkos::DefaultExecutionSpace().concurrency();
    teams = dot_waves * std::max(1, concurrency / dot_team_size);
    one_wave_3d = std::min(teams, std::max(1, concurrency / dot_team_size_3d));
  }
  return {Kokkos::View<double, ResultMemory>("stream::dot_total"),
          Kokkos::View<double*, ResultMemory>("stream::dot_partials", teams), one_wave_3d};
}

// Runs one kernel once; returns the local dot product for Kernel::dot.
// Allocate `result` once, outside any timed region.
template <class View, class Index>
double execute(Kernel kernel, const Arrays<View>& x, const DotResult& result) {
  using T = value_t<View>;
  const T s = static_cast<T>(scalar);
  switch (kernel) {
    case Kernel::copy:
      for_each<Kernel::copy, View, Index>("stream::copy", x, Copy<T>{});
      break;
    case Kernel::mul:
      for_each<Kernel::mul, View, Index>("stream::mul", x, Mul<T>{s});
      break;
    case Kernel::add:
      for_each<Kernel::add, View, Index>("stream::add", x, Add<T>{});
      break;
    case Kernel::triad:
      for_each<Kernel::triad, View, Index>("stream::triad", x, Triad<T>{s});
      break;
    case Kernel::nstream:
      for_each<Kernel::nstream, View, Index>("stream::nstream", x, Nstream<T>{s});
      break;
    case Kernel::dot:
      if constexpr (rank_of<View>() == 1) {
        if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>())
          return dot_in_teams(x.a, x.b, result.partials, dot_team_size);
        else
          return dot_in_blocks<View, Index>(x.a, x.b, result.total);
      } else {
        if (x.policy == Policy3D::range) {
          if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
            return dot_in_teams_3d(x.a, x.b, result.partials, dot_team_size_3d, result.one_wave_3d);
          } else {
            const auto items = Items3D<1>::of(x.a);
            return reduce_into(Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, items.count),
                               DotItems3D<View>{x.a, x.b, items}, result.total);
          }
        }
        return reduce_into(policy_for<View, Index>(x.a), Dot<View>{x.a, x.b}, result.total);
      }
  }
  return 0;
}

template <class View, class Index>
double execute(Kernel kernel, const Arrays<View>& x) {
  return execute<View, Index>(kernel, x, make_dot_result());
}

// What execute() runs for `kernel` (karma/code_version.hpp): the
// definitions of its code path and the launch choices the deck leaves open.
template <class View>
std::vector<std::string> code_of(Kernel kernel, const Arrays<View>& x) {
  const std::string ns = "karma::stream::";
  const bool range_3d = rank_of<View>() == 3 && x.policy == Policy3D::range;
  if (kernel == Kernel::dot) {
    if (is_gpu_space<Kokkos::DefaultExecutionSpace>() && (rank_of<View>() == 1 || range_3d))
      return {ns + (range_3d ? "dot_in_teams_3d" : "dot_in_teams")};
    if (rank_of<View>() == 1) return {ns + "dot_in_blocks"};
    if (range_3d) return {ns + "DotItems3D", ns + "Items3D"};
    return {ns + "Dot", ns + "policy_for"};
  }
  const char* op = kernel == Kernel::copy    ? "Copy"
                   : kernel == Kernel::mul   ? "Mul"
                   : kernel == Kernel::add   ? "Add"
                   : kernel == Kernel::triad ? "Triad"
                                             : "Nstream";
  if (range_3d) return {ns + "ForEachItem3D", ns + "Items3D", ns + "elements_per_item", ns + op};
  return {ns + "ForEach", ns + "policy_for", ns + "elements_per_item", ns + op};
}

template <class View>
nlohmann::json launch_of(Kernel kernel, const Arrays<View>& x) {
  using T = value_t<View>;
  const int items = kernel == Kernel::copy      ? elements_per_item<Kernel::copy, T>()
                    : kernel == Kernel::mul     ? elements_per_item<Kernel::mul, T>()
                    : kernel == Kernel::add     ? elements_per_item<Kernel::add, T>()
                    : kernel == Kernel::triad   ? elements_per_item<Kernel::triad, T>()
                    : kernel == Kernel::nstream ? elements_per_item<Kernel::nstream, T>()
                    : rank_of<View>() == 1 && !is_gpu_space<Kokkos::DefaultExecutionSpace>()
                        ? DotBlocks<View>::width
                        : 1;
  nlohmann::json launch = {{"elements_per_item", items}};
  if (rank_of<View>() == 3) launch["policy_3d"] = x.policy == Policy3D::range ? "range" : "mdrange";
  if (kernel == Kernel::dot && is_gpu_space<Kokkos::DefaultExecutionSpace>())
    launch["team_size"] = rank_of<View>() == 1 ? dot_team_size : dot_team_size_3d;
  return launch;
}

// code_of and launch_of where the run picks the 3D policy (`auto` on a GPU:
// range where 32-bit indices reach every element of a rank, so the size
// picks): the code of both policies, and the launch's policy "auto".
template <class View>
std::vector<std::string> code_of_auto_3d(Kernel kernel, Arrays<View> x) {
  x.policy = Policy3D::range;
  std::vector<std::string> code = code_of(kernel, x);
  x.policy = Policy3D::mdrange;
  for (const auto& symbol : code_of(kernel, x))
    if (std::find(code.begin(), code.end(), symbol) == code.end()) code.push_back(symbol);
  return code;
}

template <class View>
nlohmann::json launch_of_auto_3d(Kernel kernel, const Arrays<View>& x) {
  nlohmann::json launch = launch_of(kernel, x);
  launch["policy_3d"] = "auto";
  return launch;
}

template <class View, class Index>
double max_relative_error(const View& v, double expected) {
  double worst = 0;
  Kokkos::parallel_reduce("stream::verify", policy_for<View, Index>(v),
                          MaxRelativeError<View>{v, expected}, Kokkos::Max<double>(worst));
  return worst;
}

// The same recurrence on scalars, in the arrays' precision: what every
// element must hold after the kernels ran in the same order.
template <class T>
struct Gold {
  T a = static_cast<T>(start_a);
  T b = static_cast<T>(start_b);
  T c = static_cast<T>(start_c);

  // Returns the per-element product for Kernel::dot.
  double apply(Kernel kernel) {
    const T s = static_cast<T>(scalar);
    switch (kernel) {
      case Kernel::copy:
        c = a;
        break;
      case Kernel::mul:
        b = s * c;
        break;
      case Kernel::add:
        c = a + b;
        break;
      case Kernel::triad:
        a = b + s * c;
        break;
      case Kernel::nstream:
        a += b + s * c;
        break;
      case Kernel::dot:
        return static_cast<double>(a) * static_cast<double>(b);
    }
    return 0;
  }
};

// run.inject_fault: array: the first element in memory doubled, which the
// check of that array against the recurrence must see.
template <class View>
struct DoubleFirst {
  View view;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const { view.data()[0] *= 2; }
};

}  // namespace karma::stream
