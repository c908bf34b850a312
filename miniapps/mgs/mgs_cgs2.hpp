// Algorithm cgs2's kernels (mgs_kernels.hpp): classical Gram-Schmidt twice,
// two multi-dot kernels per column.
#pragma once

#include "mgs_multi.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::mgs {

// --- cgs2 --------------------------------------------------------------------

// Pass 1 applied, pass 2 measured, for column c against q_0 .. q_{c-1}:
// w = a(:, c) - Q s1 (stored), part[k] += q_k . w (k < c), tail += w . w.
// final(): s2 = dst[0..c-1], r_cc = sqrt(w.w - |s2|^2) (Pythagoras: after
// one pass, s2 is tiny beside w), column c of R = s1 + s2 and r_cc, written
// to `rcol` (R(0, c), stride m); dst keeps s2 and r_cc for Finish.
template <class View>
struct Project {
  using T = value_t<View>;
  static constexpr int share(int w) { return cgs2_share(w); }
  static constexpr bool fine_widths = false;
  static constexpr bool has_tail = true;  // w . w
  View a;
  int c;
  const T* s1;
  T* rcol;
  int rstride;
  bool finalize;
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T& tail) const {
    T w = a(r, c);
    if constexpr (W > 0) {
      T q[W];  // Q's row, read once
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < c) {
          q[k] = a(r, k);
          w -= q[k] * s1[k];
        }
      if (c > 0) a(r, c) = w;
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < c) part[k] += q[k] * w;
    } else {
      for (int k = 0; k < c; ++k) w -= a(r, k) * s1[k];
      if (c > 0) a(r, c) = w;
      for (int k = 0; k < c; ++k) part[k] += a(r, k) * w;
    }
    tail += w * w;
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst, unsigned) const {
    if (!finalize) return;
    T s2 = 0;
    for (int k = 0; k < c; ++k) s2 += dst[k] * dst[k];
    const T d = math::sqrt(dst[c] - s2);
    dst[c] = d;
    for (int k = 0; k < c; ++k) rcol[k * rstride] = s1[k] + dst[k];
    rcol[c * rstride] = d;
  }
};

// Pass 2 applied to column j and normalised: q_j = (w - Q s2) / r_jj, with
// p2 = (s2, r_jj) from Project. With a next column the same sweep measures
// its pass 1: part[k] += q_k . a(:, j+1), k < j, tail += q_j . a(:, j+1)
// (no final(): the sums are the coefficients).
template <class View>
struct Finish {
  using T = value_t<View>;
  static constexpr int share(int w) { return cgs2_share(w); }
  static constexpr bool fine_widths = false;
  static constexpr bool has_tail = true;  // q_j . a(:, j+1)
  View a;
  int j;
  const T* p2;
  KOKKOS_INLINE_FUNCTION T finish(const std::int64_t r) const {
    T w = a(r, j);
    for (int k = 0; k < j; ++k) w -= a(r, k) * p2[k];
    const T q = w * (T(1) / p2[j]);
    a(r, j) = q;
    return q;
  }
  template <int W>
  KOKKOS_INLINE_FUNCTION void row(const std::int64_t r, T* part, T& tail) const {
    const T v = a(r, j + 1);
    T w = a(r, j);
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < W; ++k)
        if (k < j) {
          const T qk = a(r, k);
          w -= qk * p2[k];
          part[k] += qk * v;
        }
    } else {
      for (int k = 0; k < j; ++k) {
        const T qk = a(r, k);
        w -= qk * p2[k];
        part[k] += qk * v;
      }
    }
    const T q = w * (T(1) / p2[j]);
    a(r, j) = q;
    tail += q * v;
  }
  KOKKOS_INLINE_FUNCTION void final(T*, unsigned) const {}
};

// The last column of cgs2: pass 2 and normalisation, no reduction.
template <class View>
struct FinishLast {
  Finish<View> body;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const {
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      body.finish(i);
    }
  }
};

}  // namespace karma::mgs
