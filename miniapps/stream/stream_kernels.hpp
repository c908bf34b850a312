// STREAM kernels over karma arrays of rank 1 or 3, any layout, float or double.
#pragma once

#include "karma/array.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

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

// Elements one work item handles, j, j+m, j+2m, ... (coalesced across a
// warp). On an H200 (results/README.md) one element per thread capped
// copy and mul at 83% of BabelStream's bandwidth: too few loads in flight.
// Two per item (four for float) reached 99%; add, triad and nstream were
// best at one. Host spaces keep one, so loops stay simple and vectorize.
// (A 1D dot on a GPU runs in teams instead: DotTeams.)
template <Kernel K, class T, class ExecSpace = Kokkos::DefaultExecutionSpace>
constexpr int elements_per_item() {
  if (!is_gpu_space<ExecSpace>()) return 1;
  switch (K) {
    case Kernel::copy:
    case Kernel::mul:
      return sizeof(T) >= 8 ? 2 : 4;
    default:
      return 1;
  }
}

// 1D: U elements per work item, so m = ceil(n / U) items. 3D: one element
// per item, iterated in memory order, with tiles measured on an H200 (up to
// 2x the default's copy bandwidth, 3.7x its dot). Kokkos maps tile extents to
// blockDim (x, y, z) and clamps z to the device's 64 without covering the
// rest (Kokkos 4.6: half the elements went unvisited with 128), so the
// LayoutRight tile keeps its contiguous extent at 64.
template <class View, class Index, int U = 1>
auto policy_for(const View& v) {
  static_assert(rank_of<View>() == 1 || rank_of<View>() == 3, "STREAM arrays are 1D or 3D");
  if constexpr (rank_of<View>() == 1) {
    const Index n = static_cast<Index>(v.extent(0));
    return Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, (n + U - 1) / U);
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

template <class View>
struct Arrays {
  View a, b, c;
};

template <class View>
using value_t = typename View::non_const_value_type;

// Every element-wise kernel is an Op on one element's (a, b, c) applied by
// ForEach: in 1D to U elements per work item, loads first so they are all in
// flight before the stores; in 3D to the element (i, j, k).
template <class View, class Op, int U>
struct ForEach {
  View a, b, c;
  Op op;
  std::int64_t m, n;  // 1D: items and elements

  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I j) const {
    value_t<View> in[U][Op::inputs];
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = j + u * m;
      if (U == 1 || i < n) op.load(a(i), b(i), c(i), in[u]);
    }
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = j + u * m;
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
  KOKKOS_INLINE_FUNCTION void operator()(const I i, double& sum) const {
    sum += static_cast<double>(a(i)) * static_cast<double>(b(i));
  }
  template <class I>
  KOKKOS_INLINE_FUNCTION void operator()(const I i, const I j, const I k, double& sum) const {
    sum += static_cast<double>(a(i, j, k)) * static_cast<double>(b(i, j, k));
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
#if defined(KOKKOS_ENABLE_CUDA)
using ResultMemory = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using ResultMemory = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using ResultMemory = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using ResultMemory = Kokkos::HostSpace;
#endif

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

// Teams of 256, as many as the device holds at once: among the fastest shapes
// measured on an H200 (results/stream/README.md).
inline constexpr int dot_team_size = 256;

// One partial per team; waits for the kernel.
template <class View, class ExecSpace = Kokkos::DefaultExecutionSpace>
double dot_in_teams(const View& a, const View& b,
                    const Kokkos::View<double*, ResultMemory>& partials, int team_size) {
  const int league = static_cast<int>(partials.extent(0));
  Kokkos::parallel_for(
      "stream::dot", Kokkos::TeamPolicy<ExecSpace>(league, team_size),
      DotTeams<View, ExecSpace>{a, b, static_cast<std::int64_t>(a.extent(0)), partials});
  Kokkos::fence();
  double sum = 0;
  for (int t = 0; t < league; ++t) sum += partials(t);
  return sum;
}

template <Kernel K, class View, class Index, class Op>
void for_each(const char* label, const Arrays<View>& x, const Op& op) {
  constexpr int U = rank_of<View>() == 1 ? elements_per_item<K, value_t<View>>() : 1;
  const auto policy = policy_for<View, Index, U>(x.a);
  const std::int64_t n = static_cast<std::int64_t>(x.a.extent(0));
  Kokkos::parallel_for(label, policy, ForEach<View, Op, U>{x.a, x.b, x.c, op, (n + U - 1) / U, n});
}

// Every element of a, b and c set to `values` (by default the start values).
template <class View, class Index>
void initialize(const Arrays<View>& x, const Init<value_t<View>>& values = {}) {
  // The same policy as the kernels: on a CPU, pages land near their threads.
  for_each<Kernel::copy, View, Index>("stream::init", x, values);
}

struct DotResult {
  Kokkos::View<double, ResultMemory> total;      // Kokkos' reduction
  Kokkos::View<double*, ResultMemory> partials;  // DotTeams, GPUs only
};

inline DotResult make_dot_result() {
  int teams = 0;
  if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>())
    teams = std::max(1, Kokkos::DefaultExecutionSpace().concurrency() / dot_team_size);
  return {Kokkos::View<double, ResultMemory>("stream::dot_total"),
          Kokkos::View<double*, ResultMemory>("stream::dot_partials", teams)};
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
      if constexpr (rank_of<View>() == 1 && is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
        return dot_in_teams(x.a, x.b, result.partials, dot_team_size);
      } else {
        Kokkos::parallel_reduce("stream::dot", policy_for<View, Index>(x.a), Dot<View>{x.a, x.b},
                                result.total);
        Kokkos::fence();
        return result.total();
      }
  }
  return 0;
}

template <class View, class Index>
double execute(Kernel kernel, const Arrays<View>& x) {
  return execute<View, Index>(kernel, x, make_dot_result());
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

}  // namespace karma::stream
