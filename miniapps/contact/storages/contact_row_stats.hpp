// The row statistics over each storage.
#pragma once

#include "storages/contact_compressed_rows.hpp"
#include "storages/contact_dynamic_rows.hpp"
#include "storages/contact_linked_lists.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

// --- row statistics --------------------------------------------------------------

// min, max, sum and average of f(j) over each row, as doubles (all exact).
using RowStats = Kokkos::View<double* [4], Memory>;

// 32-bit lanes so that CPUs vectorize a row; a sum of f below 1000 over a
// row of fewer than 2^21 entries fits (rows here have at most a few hundred).
struct Accumulator {
  int min, max, sum;
};
inline constexpr std::int64_t max_row_for_int_sum = std::int64_t{1} << 21;

KOKKOS_INLINE_FUNCTION void accumulate(Accumulator& a, int v) {
  a.min = v < a.min ? v : a.min;
  a.max = v > a.max ? v : a.max;
  a.sum += v;
}

KOKKOS_INLINE_FUNCTION void store_stats(const RowStats& out, Index i, const Accumulator& a,
                                        std::int64_t count) {
  const bool empty = count == 0;  // an empty row: all four are zero
  out(i, 0) = empty ? 0.0 : static_cast<double>(a.min);
  out(i, 1) = empty ? 0.0 : static_cast<double>(a.max);
  out(i, 2) = static_cast<double>(a.sum);
  out(i, 3) = empty ? 0.0 : static_cast<double>(a.sum) / static_cast<double>(count);
}

KOKKOS_INLINE_FUNCTION Accumulator empty_accumulator() { return Accumulator{INT_MAX, INT_MIN, 0}; }

// Reduction of Accumulators across the vector lanes that share a row.
struct AccumulatorReducer {
  using reducer = AccumulatorReducer;
  using value_type = Accumulator;
  using result_view_type = Kokkos::View<value_type, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  value_type* value;
  KOKKOS_INLINE_FUNCTION explicit AccumulatorReducer(value_type& v) : value(&v) {}
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const {
    dst.min = src.min < dst.min ? src.min : dst.min;
    dst.max = src.max > dst.max ? src.max : dst.max;
    dst.sum += src.sum;
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dst, const volatile value_type& src) const {
    dst.min = src.min < dst.min ? src.min : dst.min;
    dst.max = src.max > dst.max ? src.max : dst.max;
    dst.sum += src.sum;
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = empty_accumulator(); }
  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *value; }
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return result_view_type(value); }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }
};

// Row access for the two array storages: size(i) and at(i, k).
struct CompressedAccess {
  RaggedRight<int, Memory> rows;
  KOKKOS_INLINE_FUNCTION Index num_rows() const { return rows.num_rows(); }
  KOKKOS_INLINE_FUNCTION std::int64_t size(Index i) const { return rows.row_size(i); }
  KOKKOS_INLINE_FUNCTION std::int64_t begin(Index i) const { return rows.begin(i); }
  KOKKOS_INLINE_FUNCTION int at(std::int64_t begin, Index, std::int64_t k) const {
    return rows.values()(begin + k);
  }
};

template <class Dynamic>
struct DynamicAccess {
  Dynamic lists;
  KOKKOS_INLINE_FUNCTION Index num_rows() const { return lists.num_rows(); }
  KOKKOS_INLINE_FUNCTION std::int64_t size(Index i) const { return lists.row_size(i); }
  KOKKOS_INLINE_FUNCTION std::int64_t begin(Index) const { return 0; }
  KOKKOS_INLINE_FUNCTION int at(std::int64_t, Index i, std::int64_t k) const { return lists(i, k); }
};

// Statistics of rows stored as arrays. lanes == 1: a thread per row; more:
// that many vector lanes share a row (GPUs: coalesced reads of a compressed
// row). Rows per team fill a 256-thread block.
template <class Access>
void array_row_stats(const Access& rows, const RowStats& out, int lanes) {
  const Index n = rows.num_rows();
  if (lanes <= 1) {
    Kokkos::parallel_for(
        "contact::stats::rows", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          const std::int64_t size = rows.size(i), begin = rows.begin(i);
          Accumulator a = empty_accumulator();
          for (std::int64_t k = 0; k < size; ++k) accumulate(a, row_value(rows.at(begin, i, k)));
          store_stats(out, i, a, size);
        });
    return;
  }
  if constexpr (on_gpu) {
    using Team = Kokkos::TeamPolicy<Exec>;
    const int per_team = 256 / lanes;
    const Index teams = (n + per_team - 1) / per_team;
    Kokkos::parallel_for(
        "contact::stats::rows_lanes", Team(teams, per_team, lanes),
        KOKKOS_LAMBDA(const Team::member_type& t) {
          const Index i = t.league_rank() * Index(per_team) + t.team_rank();
          if (i >= n) return;
          const std::int64_t size = rows.size(i), begin = rows.begin(i);
          Accumulator a;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, size),
              [&](const std::int64_t k, Accumulator& part) {
                accumulate(part, row_value(rows.at(begin, i, k)));
              },
              AccumulatorReducer(a));
          Kokkos::single(Kokkos::PerThread(t), [&]() { store_stats(out, i, a, size); });
        });
  } else {
    array_row_stats(rows, out, 1);  // host spaces: a row per thread vectorizes best
  }
}

// Statistics of the linked lists: a thread per row follows its list.
inline void list_row_stats(const LinkedLists& l, const RowStats& out) {
  const auto heads = l.heads;
  const auto pool = l.pool;
  Kokkos::parallel_for(
      "contact::stats::lists", Range(0, static_cast<Index>(heads.extent(0))),
      KOKKOS_LAMBDA(const Index i) {
        Accumulator a = empty_accumulator();
        std::int64_t count = 0;
        for (unsigned k = heads(i); k != list_end;) {
          const ListNode node = pool(k);
          accumulate(a, row_value(node.j));
          ++count;
          k = node.next;
        }
        store_stats(out, i, a, count);
      });
}

}  // namespace karma::contact
