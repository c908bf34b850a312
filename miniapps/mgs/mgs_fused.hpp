// Algorithm mgs-fused's kernels (mgs_kernels.hpp): one right-looking kernel
// per column.
#pragma once

#include "mgs_multi.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::mgs {

// --- mgs-fused ---------------------------------------------------------------

// r_cc = sqrt(dst[0]), r_ck = dst[k - c] / r_cc: row c of R from the dots
// a(:, c) . a(:, k), k >= c.
template <class T>
KOKKOS_INLINE_FUNCTION void dots_to_row(T* dst, unsigned count) {
  const T d = math::sqrt(dst[0]);
  dst[0] = d;
  for (unsigned k = 1; k < count; ++k) dst[k] /= d;
}

// part[k - c] += a(:, c) . a(:, k), k = c .. m-1; final(): row c of R.
template <class View>
struct GramRow {
  using T = value_t<View>;
  static constexpr int share(int w) { return fused_share(w); }
  static constexpr bool fine_widths = true;
  static constexpr bool has_tail = false;
  View a;
  int c;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T&) const {
    const int m = static_cast<int>(a.extent(1));
    const T x = a(r, c);
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int t = 0; t < W; ++t)
        if (c + t < m) part[t] += x * a(r, c + t);
    } else {
      for (int k = c; k < m; ++k) part[k - c] += x * a(r, k);
    }
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned count) const {
    if (finalize) dots_to_row(dst, count);
  }
};

// How many steps of mgs-fused share one store of the updated columns: a step
// stores them only every fused_depth steps (see FusedStep). Column counts at
// m = 32, depth 1, 2, 3, 4, 6: 1088, 848, 778, 752, 738.
inline constexpr int fused_depth = 3;

// One right-looking step: q_i = v_i / r_ii, v_k -= r_ik q_i for k > i, and
// the next step's dots part[k - i - 1] += v_{i+1} . v_k (k > i) on the
// updated columns (final(): row i+1 of R). `rrow` is row i of R, indexed by
// column.
//
// Stores of the updated columns are deferred: a step `stale` s > 0 finds the
// columns k >= i in memory as they were before step i - s (q_{i-s} .. q_{i-1}
// stored, not yet applied to them) and applies r_{p,k} q_p for p = i - s ..
// i - 1 first, in that order, from the rows of R at `rstale` (row i - s, then
// the next rows at a stride of m): the same operations in the same order as
// if each step had stored its columns. A step that does not `store` leaves
// columns k > i as they were and writes q_i only. With a store every Depth
// steps, mgs-fused saves most column writes for Depth - 1 extra column reads
// a step.
template <class View, int Depth = fused_depth>
struct FusedStep {
  using T = value_t<View>;
  static constexpr int share(int w) { return fused_share(w); }
  static constexpr bool fine_widths = true;
  static constexpr bool has_tail = false;
  static constexpr int max_stale = Depth > 1 ? Depth - 1 : 1;
  View a;
  int i;
  const T* rrow;
  const T* rstale;  // row i - stale of R, or null with stale == 0
  int stale;        // 0 .. Depth - 1
  bool store;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T&) const {
    const int m = static_cast<int>(a.extent(1));
    if constexpr (W > 0) {
      // Column i + t of row r at col + t ld, each one add from the last:
      // written as a(r, i + t), every access took five or six 64-bit
      // integer instructions (818 in all per row at W = 32, ncu), and
      // mgs-fused took 9.49 ms against 8.49 this way (H200, probe).
      const std::ptrdiff_t ld = static_cast<std::ptrdiff_t>(a.stride(1));
      T* const col = &a(r, i);
      const auto has = [&](int t) { return t <= sure_slots(W) || i + t < m; };
      T qs[max_stale];  // q_{i-stale} .. q_{i-1} of this row
      KARMA_MGS_UNROLL
      for (int p = 0; p < max_stale; ++p)
        if (p < stale) qs[p] = col[(p - stale) * ld];
      // The whole row first: a load after a store to the same array waits
      // for it (the compiler cannot tell the columns apart), so loads and
      // stores interleaved would leave one load in flight per thread.
      T v[W + 1];
      const T* in = col;
      KARMA_MGS_UNROLL
      for (int t = 0; t <= W; ++t, in += ld)
        if (has(t)) v[t] = *in;
      KARMA_MGS_UNROLL
      for (int p = 0; p < max_stale; ++p)
        if (p < stale) {
          const T* rp = rstale + static_cast<std::ptrdiff_t>(p) * m + i;
          KARMA_MGS_UNROLL
          for (int t = 0; t <= W; ++t)
            if (has(t)) v[t] -= rp[t] * qs[p];
        }
      const T* rr = rrow + i;
      const T q = v[0] * (T(1) / rr[0]);
      col[0] = q;
      const T next = v[1] - rr[1] * q;
      if (store) col[ld] = next;
      part[0] += next * next;
      T* out = col + 2 * ld;
      KARMA_MGS_UNROLL
      for (int t = 2; t <= W; ++t, out += ld)
        if (has(t)) {
          const T w = v[t] - rr[t] * q;
          if (store) *out = w;
          part[t - 1] += next * w;
        }
    } else {
      T qs[max_stale];
      for (int p = 0; p < stale; ++p) qs[p] = a(r, i - stale + p);
      const auto current = [&](int k) {
        T v = a(r, k);
        for (int p = 0; p < stale; ++p) v -= rstale[static_cast<std::ptrdiff_t>(p) * m + k] * qs[p];
        return v;
      };
      const T q = current(i) * (T(1) / rrow[i]);
      a(r, i) = q;
      const T next = current(i + 1) - rrow[i + 1] * q;
      if (store) a(r, i + 1) = next;
      part[0] += next * next;
      for (int k = i + 2; k < m; ++k) {
        const T w = current(k) - rrow[k] * q;
        if (store) a(r, k) = w;
        part[k - i - 1] += next * w;
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned count) const {
    if (finalize) dots_to_row(dst, count);
  }
};

// The last column of mgs-fused: q_{m-1} = v_{m-1} / r, v_{m-1} brought up to
// date first where earlier steps deferred it (`stale` rows of R from
// `rstale`, at a stride of m).
template <class View, class Coef>
struct FusedLast {
  View a;
  int j;
  Coef r;
  const value_t<View>* rstale;
  int stale;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    const value_t<View> inverse = value_t<View>(1) / r();
    const int m = static_cast<int>(a.extent(1));
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      auto v = a(i, j);
      for (int p = 0; p < stale; ++p)
        v -= rstale[static_cast<std::ptrdiff_t>(p) * m + j] * a(i, j - stale + p);
      a(i, j) = v * inverse;
    }
  }
};

}  // namespace karma::mgs
