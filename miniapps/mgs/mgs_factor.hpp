// The factorizations (mgs_kernels.hpp): the workspace, reductions over the
// ranks, and mgs, mgs-fused and cgs2 as sequences of kernels.
#pragma once

#include "mgs_cgs2.hpp"
#include "mgs_fused.hpp"
#include "mgs_level1.hpp"

#include "karma/comm.hpp"
#include "karma/device_comm.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace karma::mgs {

// --- the factorizations --------------------------------------------------------

template <class T>
struct Workspace {
  int m;
  bool on_device;   // reduction results stay on the device
  bool over_ranks;  // ... and are summed over the ranks there (run.comm: nccl, gpu-aware MPI)
  Kokkos::View<T**, Kokkos::LayoutRight, DeviceMemory> r_dev;   // R, results on the device
  Kokkos::View<T**, Kokkos::LayoutRight, ResultMemory> r_host;  // R, results through the host
  Kokkos::View<T*, DeviceMemory> coef1, coef2;                  // coefficients kernels read
  Kokkos::View<T*, ResultMemory> sums;                          // reductions bound for MPI
#if defined(KOKKOS_ENABLE_CUDA)
  Kokkos::View<T*, DeviceMemory> team_sums;         // PackedColumnDot's teams ...
  Kokkos::View<unsigned, DeviceMemory> teams_done;  // ... and their count
#endif

  Workspace(int columns, bool device)
      : m(columns),
        on_device(device),
        over_ranks(device && comm::size() > 1),
        r_dev("mgs::R", columns, columns),
        r_host("mgs::R_host", columns, columns),
        coef1("mgs::coef1", columns + 1),
        coef2("mgs::coef2", columns + 1),
        sums("mgs::sums", columns + 1) {
#if defined(KOKKOS_ENABLE_CUDA)
    team_sums = decltype(team_sums)("mgs::team_sums", resident_teams(packed_dot_teams));
    teams_done = decltype(teams_done)("mgs::teams_done");
#endif
  }

  T* rd(int i, int j) const { return r_dev.data() + static_cast<std::ptrdiff_t>(i) * m + j; }
  // Whether a reduction's final() runs in its kernel: on one rank, and in
  // host mode (which finishes on the host); over ranks it runs after the sum.
  bool final_in_kernel() const { return on_device && !over_ranks; }

  // R in double on the host, once the device is done: from r_dev or r_host.
  std::vector<double> r_matrix(bool from_device) const {
    Kokkos::fence();
    std::vector<double> out(static_cast<std::size_t>(m) * m);
    if (from_device) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, r_dev);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) out[i * m + j] = static_cast<double>(h(i, j));
    } else {
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) out[i * m + j] = static_cast<double>(r_host(i, j));
    }
    return out;
  }
};

// Host mode: a multi-dot's local sums into ws.sums, then summed over ranks.
template <class Body, class T>
T* multi_over_ranks(const char* label, const Body& body, std::int64_t rows, Workspace<T>& ws,
                    unsigned count, Tally& t) {
  multi_reduce<ResultMemory>(label, body, rows, ws.sums.data(), count);
  Kokkos::fence();
  ++t.host_waits;
  comm::sum_in_place(ws.sums.data(), count);
  ++t.allreduces;
  return ws.sums.data();
}

// Host mode: `count` values from host-visible memory to device memory,
// ordered on the stream before the next kernel; the host does not wait.
template <class T>
void to_device(T* dst, const T* src, int count) {
  Kokkos::deep_copy(Kokkos::DefaultExecutionSpace(),
                    Kokkos::View<T*, DeviceMemory, Unmanaged>(dst, count),
                    Kokkos::View<const T*, ResultMemory, Unmanaged>(src, count));
}

// Device mode over ranks: the `count` sums at `dst` (device memory) summed
// over the ranks, then what body.final() makes of them, in one thread.
template <class Body, class T>
void final_over_ranks(Body body, T* dst, unsigned count, Tally& t) {
  sum_over_ranks(dst, static_cast<std::int64_t>(count));
  ++t.allreduces;
  if (comm::path().path != comm::Path::nccl) ++t.host_waits;
  body.finalize = true;
  Kokkos::parallel_for(
      "mgs::final_over_ranks", Kokkos::RangePolicy<>(0, 1),
      KOKKOS_LAMBDA(const int) { body.final(dst, count); });
  ++t.launches;
}

// Device mode over ranks: a dot summed over the ranks in place, its square
// root taken for a norm.
template <class T>
void dot_over_ranks(T* dst, bool root, Tally& t) {
  sum_over_ranks(dst, 1);
  ++t.allreduces;
  if (comm::path().path != comm::Path::nccl) ++t.host_waits;
  if (!root) return;
  Kokkos::parallel_for(
      "mgs::root_over_ranks", Kokkos::RangePolicy<>(0, 1),
      KOKKOS_LAMBDA(const int) { *dst = math::sqrt(*dst); });
  ++t.launches;
}

// Runs `dot` into `result` (a device View, or a host value): as
// PackedColumnDot where both columns are contiguous and start on 16 bytes
// on CUDA (counted in t.packed_dots), else as ColumnDot over `dots`.
// Returns whether the kernel also summed it over the ranks (through peer
// memory, karma/peer_memory.hpp) and took a norm's root.
template <class View, class Result>
bool column_dot(const char* label, const DotPolicy<value_t<View>>& dots, const ColumnDot<View>& dot,
                Result&& result, [[maybe_unused]] Workspace<value_t<View>>& ws,
                [[maybe_unused]] Tally& t) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
    using T = value_t<View>;
    const T* x = dot.a.data() + dot.x * static_cast<std::int64_t>(dot.a.stride(1));
    const T* y = dot.a.data() + dot.y * static_cast<std::int64_t>(dot.a.stride(1));
    if (dot.rows.rows > 0 && packed_aligned(x) && packed_aligned(y)) {
      constexpr bool to_device = Kokkos::is_view<std::decay_t<Result>>::value;
      T* out = ws.sums.data();  // host-visible
      if constexpr (to_device) out = result.data();
      const auto league = static_cast<int>(ws.team_sums.extent(0));  // one sum a team
      const bool over_ranks = to_device && ws.over_ranks && comm::peer_sums<T>(1);
      PackedColumnDot<T> k{x,
                           y,
                           dot.rows.rows,
                           over_ranks ? dot.x == dot.y : dot.root,
                           ws.team_sums.data(),
                           ws.teams_done.data(),
                           out};
      if (over_ranks) {
        k.peers = comm::peer_slots();
        k.epoch = comm::next_peer_epoch();
        ++t.allreduces;
      }
      Kokkos::parallel_for(label, PackedDotPolicy(league, packed_dot_team), k);
      if constexpr (!to_device) {
        Kokkos::fence();
        result = *out;
      }
      ++t.packed_dots;
      return over_ranks;
    }
  }
#endif
  Kokkos::parallel_reduce(label, dots, dot, result);
  return false;
}

template <class View>
void factor_mgs(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  using Result = Kokkos::View<T, DeviceMemory, Unmanaged>;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const Rows each = Rows::each<typename View::array_layout>(n);
  const DotPolicy<T> dots = dot_policy<T>(n);
  for (int j = 0; j < ws.m; ++j) {
    for (int i = 0; i < j; ++i) {
      const ColumnDot<View> dot{a, i, j, each, false};
      if (ws.on_device) {
        const bool summed = column_dot("mgs::dot", dots, dot, Result(ws.rd(i, j)), ws, t);
        t.kernel(2, 0);
        if (ws.over_ranks && !summed) dot_over_ranks(ws.rd(i, j), false, t);
        Kokkos::parallel_for("mgs::axpy", each.policy(),
                             ColumnAxpy<View, FromDevice<T>>{a, i, j, {ws.rd(i, j)}, each});
      } else {
        T s = 0;
        column_dot("mgs::dot", dots, dot, s, ws, t);
        t.kernel(2, 0);
        ++t.host_waits;
        comm::sum_in_place(&s, 1);
        ++t.allreduces;
        ws.r_host(i, j) = s;
        Kokkos::parallel_for("mgs::axpy", each.policy(),
                             ColumnAxpy<View, FromHost<T>>{a, i, j, {s}, each});
      }
      t.kernel(2, 1);
    }
    const ColumnDot<View> norm{a, j, j, each, ws.final_in_kernel()};
    if (ws.on_device) {
      const bool summed = column_dot("mgs::norm", dots, norm, Result(ws.rd(j, j)), ws, t);
      t.kernel(1, 0);
      if (ws.over_ranks && !summed) dot_over_ranks(ws.rd(j, j), true, t);
      Kokkos::parallel_for("mgs::scale", each.policy(),
                           ColumnScale<View, FromDevice<T>>{a, j, {ws.rd(j, j)}, each});
    } else {
      T s = 0;
      column_dot("mgs::norm", dots, norm, s, ws, t);
      t.kernel(1, 0);
      ++t.host_waits;
      comm::sum_in_place(&s, 1);
      ++t.allreduces;
      const T r = math::sqrt(s);
      ws.r_host(j, j) = r;
      Kokkos::parallel_for("mgs::scale", each.policy(),
                           ColumnScale<View, FromHost<T>>{a, j, {r}, each});
    }
    t.kernel(1, 1);
  }
}

// Host mode: row i of R from the summed dots a(:, i) . a(:, k), k >= i.
template <class T>
void finish_row(Workspace<T>& ws, int i, const T* s) {
  const T d = math::sqrt(s[0]);
  ws.r_host(i, i) = d;
  for (int k = i + 1; k < ws.m; ++k) ws.r_host(i, k) = s[k - i] / d;
}

template <class View, int Depth = fused_depth>
void factor_mgs_fused(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  const int m = ws.m;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const auto count = [&](int i) { return static_cast<unsigned>(m - i); };
  // Rows of R where the kernels read them: in host mode each row, once
  // summed over ranks, is copied to its place in r_dev.
  const auto row = [&](int i) -> const T* { return ws.rd(i, 0); };
  const auto row_to_device = [&](int i) { to_device(ws.rd(i, 0), &ws.r_host(i, 0), m); };
  // Step i finds the columns i % Depth steps behind; the last of every
  // Depth steps stores them (see FusedStep).
  const auto stale = [](int i) { return i % Depth; };
  const auto stores = [](int i) { return i % Depth == Depth - 1; };

  const GramRow<View> first{a, 0, ws.final_in_kernel()};
  if (ws.on_device) {
    multi_reduce<DeviceMemory>("mgs::fused_gram", first, n, ws.rd(0, 0), count(0));
    if (ws.over_ranks) final_over_ranks(first, ws.rd(0, 0), count(0), t);
  } else {
    finish_row(ws, 0, multi_over_ranks("mgs::fused_gram", first, n, ws, count(0), t));
    row_to_device(0);
  }
  t.kernel(m, 0);
  for (int i = 0; i + 1 < m; ++i) {
    const int s = stale(i);
    const FusedStep<View, Depth> step{
        a, i, row(i), s > 0 ? row(i - s) : nullptr, s, stores(i), ws.final_in_kernel()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::fused_step", step, n, ws.rd(i + 1, i + 1), count(i + 1));
      if (ws.over_ranks) final_over_ranks(step, ws.rd(i + 1, i + 1), count(i + 1), t);
    } else {
      finish_row(ws, i + 1, multi_over_ranks("mgs::fused_step", step, n, ws, count(i + 1), t));
      row_to_device(i + 1);
    }
    t.kernel(m - i + s, stores(i) ? m - i : 1);
  }
  const int j = m - 1, s = stale(j);
  const T* rstale = s > 0 ? row(j - s) : nullptr;
  const Rows each = Rows::each<typename View::array_layout>(n);
  if (ws.on_device)
    Kokkos::parallel_for("mgs::fused_last", each.policy(),
                         FusedLast<View, FromDevice<T>>{a, j, {ws.rd(j, j)}, rstale, s, each});
  else
    Kokkos::parallel_for("mgs::fused_last", each.policy(),
                         FusedLast<View, FromHost<T>>{a, j, {ws.r_host(j, j)}, rstale, s, each});
  t.kernel(1 + s, 1);
}

template <class View>
void factor_cgs2(const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  using T = value_t<View>;
  const int m = ws.m;
  const auto n = static_cast<std::int64_t>(a.extent(0));
  std::vector<T> s1(m + 1);  // host mode: pass-1 coefficients of the current column

  // Project column c (pass 1 applied from coef1, pass 2 measured) -> coef2.
  const auto project = [&](int c) {
    const auto count = static_cast<unsigned>(c + 1);
    const Project<View> p{a, c, ws.coef1.data(), ws.rd(0, c), m, ws.final_in_kernel()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::cgs2_project", p, n, ws.coef2.data(), count);
      if (ws.over_ranks) final_over_ranks(p, ws.coef2.data(), count, t);
    } else {
      T* s = multi_over_ranks("mgs::cgs2_project", p, n, ws, count, t);
      T s2 = 0;
      for (int k = 0; k < c; ++k) s2 += s[k] * s[k];
      s[c] = math::sqrt(s[c] - s2);
      for (int k = 0; k < c; ++k) ws.r_host(k, c) = s1[k] + s[k];
      ws.r_host(c, c) = s[c];
      to_device(ws.coef2.data(), s, c + 1);
    }
    t.kernel(c + 1, c > 0 ? 1 : 0);
  };

  project(0);
  for (int j = 0; j + 1 < m; ++j) {
    const auto count = static_cast<unsigned>(j + 1);
    const Finish<View> f{a, j, ws.coef2.data()};
    if (ws.on_device) {
      multi_reduce<DeviceMemory>("mgs::cgs2_finish", f, n, ws.coef1.data(), count);
      if (ws.over_ranks) {
        sum_over_ranks(ws.coef1.data(), static_cast<std::int64_t>(count));
        ++t.allreduces;
      }
    } else {
      const T* s = multi_over_ranks("mgs::cgs2_finish", f, n, ws, count, t);
      for (int k = 0; k <= j; ++k) s1[k] = s[k];
      to_device(ws.coef1.data(), s, j + 1);
    }
    t.kernel(j + 2, 1);
    project(j + 1);
  }
  const Rows each = Rows::each<typename View::array_layout>(n);
  Kokkos::parallel_for("mgs::cgs2_finish", each.policy(),
                       FinishLast<View>{{a, m - 1, ws.coef2.data()}, each});
  t.kernel(m, 1);
}

// For tests of the checks: a(0, 0) += delta.
template <class View>
struct AddToFirst {
  View a;
  value_t<View> delta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t) const { a(0, 0) += delta; }
};

template <class View>
void factor(Algorithm algorithm, const View& a, Workspace<value_t<View>>& ws, Tally& t) {
  switch (algorithm) {
    case Algorithm::mgs:
      factor_mgs(a, ws, t);
      break;
    case Algorithm::mgs_fused:
      factor_mgs_fused(a, ws, t);
      break;
    case Algorithm::cgs2:
      factor_cgs2(a, ws, t);
      break;
  }
}

// One factorization (algorithm mgs) by a hand-written implementation's
// `factor` on the rows x m array at `data` (element (r, j) at data + r *
// row_stride + j * column_stride), R into `r` on the device; its Context (its
// buffers, handles) is made here, once, outside the timed region.
template <class Context, class T, class Factor>
std::function<void()> factorization_by(Factor factor, T* data, std::int64_t rows, int m,
                                       std::int64_t row_stride, std::int64_t column_stride, T* r,
                                       bool on_device, Tally& t) {
  auto context = std::make_shared<Context>();
  return [=, &t] { factor(*context, data, rows, m, row_stride, column_stride, r, on_device, t); };
}

}  // namespace karma::mgs
