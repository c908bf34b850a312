// Multi-dot reductions (mgs_kernels.hpp): one value per slot summed over the
// rows, the ground of mgs-fused and cgs2.
#pragma once

#include "mgs_basics.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace karma::mgs {

// --- multi-dot kernels -----------------------------------------------------------

// Sums one value per slot over the rows: Body::row<W>(i, part, tail) adds
// row i's terms to part[0 .. n) and, for a Body with a tail, its last slot's
// term to `tail` (slot n, whose index is only known at run time: an indexed
// register array would be moved to local memory). W > 0: part is W
// registers, indices known at compile time; W == 0: an array in local
// memory, for more columns than registers hold, and on hosts. The partial
// sums are added to the reduction's sums once per item.
template <class Body, int W>
struct MultiRows {
  using T = typename Body::T;
  using value_type = T[];
  unsigned value_count;
  Body body;
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, T* sums) const {
    constexpr int P = W > 0 ? W : max_columns + 1;
    const int n = static_cast<int>(value_count) - (Body::has_tail ? 1 : 0);
    T part[P];
    T tail = 0;
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < P; ++k) part[k] = 0;
    } else {
      for (int k = 0; k < n; ++k) part[k] = 0;
    }
    for (std::int64_t u = 0; u < rows.per_item; ++u) {
      const std::int64_t i = rows(w, u);
      if (i >= rows.rows) break;
      body.template row<W>(i, part, tail);
    }
    if constexpr (W > 0) {
      KARMA_MGS_UNROLL
      for (int k = 0; k < P; ++k)
        if (k < n) sums[k] += part[k];
    } else {
      for (int k = 0; k < n; ++k) sums[k] += part[k];
    }
    if (Body::has_tail) sums[n] += tail;
  }
  KOKKOS_INLINE_FUNCTION void final(T* dst) const { body.final(dst, value_count); }
};

// run(integral_constant<int, W>) for the first W of the list that holds
// `slots` (the last must).
template <class Run, int... W>
void run_narrowest(unsigned slots, const Run& run, std::integer_sequence<int, W...>) {
  bool done = false;
  ((done || slots > static_cast<unsigned>(W)
        ? void()
        : (run(std::integral_constant<int, W>{}), done = true, void())),
   ...);
}

// Runs the multi-dot `body` with `count` sums into dst (memory space Space);
// no fence. On a GPU the partial sums live in registers, in the narrowest of
// 4, 8, 16 or 32 that holds them, or for a Body with fine_widths of 4, 8,
// 12, ..., 32: a kernel compiled for 32 holds about 250 registers per thread
// whatever the count, the late steps, with few columns left and so few loads
// per row, need the occupancy of a narrow one, and every slot past `count`
// costs predicated instructions in each row. Widths every 4 took mgs-fused
// from 9.89 to 9.49 ms on an H200 (2^22 x 32 doubles, probe) and cgs2 from
// 14.3 to 15.3 ms (karma-mgs): cgs2 keeps powers of two. With fine widths a
// body run at width W > 4 has more than W - 4 slots (sure_slots), which it
// need not test.
template <class Space, class Body, class T>
void multi_reduce(const char* label, const Body& body, std::int64_t rows, T* dst, unsigned count) {
  const Kokkos::View<T*, Space, Unmanaged> out(dst, count);
  // Each thread's running sums live in shared memory (count x 8 bytes a
  // thread), which caps the resident blocks: with an item per resident
  // thread a wide reduction ran in about three waves. Fewer items, each with
  // more rows, fit in one. Measured per step of mgs-fused on an H200, 2^22
  // rows, items = resident threads / share (share 1, 2, 3, 4, 6, 8, 16):
  // 31 sums 504, 440, 449, 406, 544, 384, 629 us; 15 sums 279, 247, 258,
  // 234, 310, 223, 382; 7 sums 120, 107, 132, 99, 124, 149, 262; 1 sum 53,
  // 59, 48, 57, 76, 93, 168: Body::share(W) (mgs-fused: 8, 4 and 3 for 9-32,
  // 5-8 and 1-4 sums; cgs2, measured whole: 4 and 1, 16.6 -> 14.4 ms).
  const auto run = [&](auto width) {
    constexpr int W = decltype(width)::value;
    const Rows r = Rows::spread(rows, Body::share(W));
    Kokkos::parallel_reduce(label, r.policy(), MultiRows<Body, W>{count, body, r}, out);
  };
  const unsigned slots = count - (Body::has_tail ? 1 : 0);
  if (!Rows::gpu || slots > 32) {
    run(std::integral_constant<int, 0>{});
    return;
  }
  using Fine = std::integer_sequence<int, 4, 8, 12, 16, 20, 24, 28, 32>;
  using Coarse = std::integer_sequence<int, 4, 8, 16, 32>;
  run_narrowest(slots, run, std::conditional_t<Body::fine_widths, Fine, Coarse>{});
}

// Slots a body with fine_widths run at width W > 0 surely has (multi_reduce).
// Host-device: the fused step's kernels call it (nvcc warns #20013 otherwise).
KOKKOS_INLINE_FUNCTION constexpr int sure_slots(int w) { return w <= 4 ? 1 : w - 3; }

// Reduction items as resident threads / share, by register width W (see
// multi_reduce).
constexpr int fused_share(int w) { return w <= 4 ? 3 : w <= 8 ? 4 : 8; }
constexpr int cgs2_share(int w) { return w >= 8 ? 4 : 1; }

}  // namespace karma::mgs
