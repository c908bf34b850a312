// STREAM's reductions (stream_kernels.hpp): dot on hosts and GPUs, in
// blocks, items or teams, and the largest relative error of an array.
#pragma once

#include "stream_basics.hpp"

#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cstdint>

namespace karma::stream {

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

}  // namespace karma::stream
