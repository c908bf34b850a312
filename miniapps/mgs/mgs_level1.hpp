// Algorithm mgs's level-1 kernels (mgs_kernels.hpp): column dots and norms,
// scale and axpy.
#pragma once

#include "mgs_basics.hpp"

#include "karma/device_comm.hpp"
#include "karma/packed.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::mgs {

// --- mgs: the level-1 kernels ------------------------------------------------

// a(:, x) . a(:, y); final() takes the square root for a norm. On a GPU
// (DotPolicy) each thread strides over the rows with eight independent
// sums, to keep loads in flight; on a host each item sums a block of rows.
template <class View>
struct ColumnDot {
  using value_type = value_t<View>;
  View a;
  int x, y;
  Rows rows;
  bool root;
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  KOKKOS_INLINE_FUNCTION void operator()(const typename DotPolicy<value_type>::member_type& team,
                                         value_type& sum) const {
    constexpr int sums = DotShape<value_type>::sums;
    const std::int64_t n = rows.rows;
    const std::int64_t stride = std::int64_t{team.league_size()} * team.team_size();
    std::int64_t i = std::int64_t{team.league_rank()} * team.team_size() + team.team_rank();
    value_type s[sums] = {};
    for (; i + (sums - 1) * stride < n; i += sums * stride) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < sums; ++k) s[k] += a(i + k * stride, x) * a(i + k * stride, y);
    }
    for (; i < n; i += stride) s[0] += a(i, x) * a(i, y);
    sum += fold_sums(s);
  }
#else
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, value_type& sum) const {
    value_type s = 0;
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      s += a(i, x) * a(i, y);
    }
    sum += s;
  }
#endif
  KOKKOS_INLINE_FUNCTION void final(value_type& sum) const {
    if (root) sum = math::sqrt(sum);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
// Dots of two contiguous columns that start on 16 bytes (layout left): a
// thread keeps two Packed units of each column in flight, in teams of 512,
// two per 2048 threads the device holds, in both precisions. ColumnDot's
// element loads left float's dot a quarter slower than the hand-written
// kernel's on an H100. A parallel_for with its own ending: each team stores
// its sum and the last team to finish adds them with all its threads, as
// the hand-written kernel does; Kokkos's reduction ending cost the float
// dot 1% more on an H100 (results/mgs/README.md, "16-byte dots").
inline constexpr int packed_dot_team = 512;
inline constexpr int packed_dot_teams = 2;  // per 2048 resident threads
inline constexpr int packed_dot_units = 2;  // in flight a thread and column
using PackedDotPolicy = Kokkos::TeamPolicy<Kokkos::IndexType<std::int64_t>,
                                           Kokkos::LaunchBounds<packed_dot_team, packed_dot_teams>>;

template <class T>
struct PackedColumnDot {
  using P = Packed<T>;
  const T* x;
  const T* y;
  std::int64_t n;
  bool root;
  T* team_sums;          // one a team
  unsigned* teams_done;  // 0 before and after
  T* out;
  // Over the ranks: the last team's thread adds the peers' sums through
  // peer memory before the root, in this kernel (epoch 0: one rank).
  comm::PeerSlots peers{};
  unsigned long long epoch = 0;

  KOKKOS_INLINE_FUNCTION T thread_sum(std::int64_t thread, std::int64_t stride) const {
    constexpr int U = packed_dot_units;
    constexpr int S = U * P::width;
    const P* px = reinterpret_cast<const P*>(x);
    const P* py = reinterpret_cast<const P*>(y);
    const std::int64_t units = n / P::width;
    T s[S] = {};
    std::int64_t u = thread;
    for (; u + (U - 1) * stride < units; u += U * stride) {
      P a[U], b[U];
      KARMA_MGS_UNROLL
      for (int k = 0; k < U; ++k) {
        a[k] = px[u + k * stride];
        b[k] = py[u + k * stride];
      }
      KARMA_MGS_UNROLL
      for (int k = 0; k < U; ++k) {
        KARMA_MGS_UNROLL
        for (int e = 0; e < P::width; ++e) s[k * P::width + e] += a[k].v[e] * b[k].v[e];
      }
    }
    for (; u < units; u += stride) {
      const P a = px[u], b = py[u];
      KARMA_MGS_UNROLL
      for (int e = 0; e < P::width; ++e) s[e] += a.v[e] * b.v[e];
    }
    const std::int64_t r = units * P::width + thread;  // rows past the last unit
    if (r < n) s[0] += x[r] * y[r];
    return fold_sums(s);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const PackedDotPolicy::member_type& team) const {
    const int league = team.league_size();
    T v = thread_sum(std::int64_t{team.league_rank()} * team.team_size() + team.team_rank(),
                     std::int64_t{league} * team.team_size());
    team.team_reduce(Kokkos::Sum<T>(v));
    int last = 0;
    if (team.team_rank() == 0) {
      team_sums[team.league_rank()] = v;
      Kokkos::memory_fence();  // the sum is seen before the count
      last = Kokkos::atomic_fetch_add(teams_done, 1u) == static_cast<unsigned>(league - 1);
    }
    team.team_broadcast(last, 0);
    if (!last) return;
    const volatile T* sums = team_sums;  // past the L1 cache
    T total = 0;
    for (int b = team.team_rank(); b < league; b += team.team_size()) total += sums[b];
    team.team_reduce(Kokkos::Sum<T>(total));
    if (team.team_rank() == 0) {
      if (epoch != 0) {
        *out = total;
        peer_sum(peers, out, 1, epoch);
        total = *out;
      }
      *out = root ? math::sqrt(total) : total;
      *teams_done = 0;
    }
  }
};
#endif

// a(:, x) *= 1 / r
template <class View, class Coef>
struct ColumnScale {
  View a;
  int x;
  Coef r;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> inverse = value_t<View>(1) / r();
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      a(i, x) *= inverse;
    }
  }
};

// a(:, y) -= c a(:, x)
template <class View, class Coef>
struct ColumnAxpy {
  View a;
  int x, y;
  Coef c;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> coefficient = c();
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      a(i, y) -= coefficient * a(i, x);
    }
  }
};

}  // namespace karma::mgs
