// Storage 3: dynamic ragged rows (capacity, count, grow and refill).
#pragma once

#include "karma/comm.hpp"
#include "search/contact_cells.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>

namespace karma::contact {

// --- storage 3: dynamic ragged rows (capacity, count, grow and refill) ----------

template <class Dynamic>
struct DynamicRowSink {
  Dynamic lists;
  Index row;
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION void add(int, int id, bool) { lists.store(row, n++, id); }
};

// Pairs: the core's push_back, safe with other threads pushing into a row.
template <class Dynamic>
struct DynamicPairSink {
  Dynamic lists;
  int i, id_i;
  KOKKOS_INLINE_FUNCTION void add(int j, int id_j, bool j_row) const {
    lists.push_back(i, id_j);
    if (j_row) lists.push_back(j, id_i);
  }
};

// Search s of row i (s a row search: every neighbour but i itself) by the
// vector lanes of one team thread, the lanes over each cell's items.
template <class Member, class Sink>
KOKKOS_INLINE_FUNCTION void row_by_lanes(const Search& s, const Member& t, const Index i,
                                         const Sink& sink) {
  int a[6];
  for (int d = 0; d < 6; ++d) a[d] = s.boxes(i, d);
  s.walk_cells(a, [&](const std::int64_t begin, const std::int64_t end, const int lo[3]) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, end - begin),
                         [&](const std::int64_t q) { s.test(i, a, lo, begin + q, sink); });
  });
}

// A refilled row, from several lanes at once: push_back.
template <class Dynamic>
struct DynamicPushSink {
  Dynamic lists;
  Index row;
  KOKKOS_INLINE_FUNCTION void add(int, int id, bool) const { lists.push_back(row, id); }
};

// Searches the `count` rows listed in `rows` again into `lists` (grown to
// hold them). Few rows overflow, and each is long: a thread a row leaves a
// GPU nearly idle for one thread's whole walk, whatever the number of rows,
// so there a warp takes a row, its lanes over each cell's items.
template <class Dynamic>
void refill_rows(const Search& by_rows, const Dynamic& lists,
                 const Kokkos::View<int*, Memory>& rows, const Index count) {
  Kokkos::parallel_for(
      "contact::dynamic::refill_reset", Range(0, count),
      KOKKOS_LAMBDA(const Index k) { lists.set_count(rows(k), 0); });
  using Team = Kokkos::TeamPolicy<Exec>;
  // A 256-thread block on a GPU, a warp a row; a row a thread elsewhere.
  constexpr int lanes = on_gpu ? 32 : 1, per_team = on_gpu ? 8 : 1;
  Kokkos::parallel_for(
      "contact::dynamic::refill", Team((count + per_team - 1) / per_team, per_team, lanes),
      KOKKOS_LAMBDA(const Team::member_type& t) {
        const Index k = t.league_rank() * Index(per_team) + t.team_rank();
        if (k >= count) return;
        row_by_lanes(by_rows, t, rows(k), DynamicPushSink<Dynamic>{lists, rows(k)});
      });
}

// One search pass; a row past capacity keeps counting (rows: each row
// written by its own thread without atomics; pairs: push_back). The caller
// learns of an overflow from largest_count.
template <class Dynamic>
void fill_dynamic(const Search& search, const Dynamic& lists) {
  if (search.pairs) {
    lists.clear();
    Kokkos::parallel_for(
        "contact::dynamic::search_pairs", Range(0, lists.num_rows()), KOKKOS_LAMBDA(const Index i) {
          DynamicPairSink<Dynamic> sink{lists, static_cast<int>(i), search.id(i)};
          search(i, sink);
        });
  } else {
    Kokkos::parallel_for(
        "contact::dynamic::search", Range(0, lists.num_rows()), KOKKOS_LAMBDA(const Index i) {
          DynamicRowSink<Dynamic> sink{lists, i, 0};
          search(i, sink);
          lists.set_count(i, sink.n);
        });
  }
}

// Where the rows past capacity are listed: room for every row, kept from
// step to step, so that finding them allocates and scans nothing.
struct OverflowedRows {
  Kokkos::View<int*, Memory> rows;    // int, as a row's entries are
  Kokkos::View<Index, Memory> count;  // zero between recoveries
  explicit OverflowedRows(Index n = 0)
      : rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::dynamic::overflowed"), n),
        count("contact::dynamic::overflowed_count") {}
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(rows.span() * sizeof(int) + sizeof(Index));
  }
};

// One pass over the counts: the largest, and every row past capacity
// appended to `out` (in any order: each is refilled on its own).
template <class Dynamic>
std::int64_t largest_count(const Dynamic& lists, const OverflowedRows& out) {
  const auto counts = lists.counts();
  const std::int64_t capacity = lists.capacity();
  const auto rows = out.rows;
  const auto count = out.count;
  std::int64_t largest = 0;
  Kokkos::parallel_reduce(
      "contact::dynamic::find_overflowed", Range(0, lists.num_rows()),
      KOKKOS_LAMBDA(const Index i, std::int64_t& m) {
        const std::int64_t c = counts(i);
        if (c > m) m = c;
        if (c > capacity) rows(Kokkos::atomic_fetch_add(&count(), Index(1))) = static_cast<int>(i);
      },
      Kokkos::Max<std::int64_t>(largest));
  return lists.num_rows() > 0 ? largest : 0;
}

// The capacity a grow gives: at least the longest row, and at least
// `growth` times the old capacity, so that rows growing step by step cost a
// few reallocations, not one a step (growth 1: exactly the longest row).
inline std::int64_t grown_capacity(std::int64_t capacity, std::int64_t needed, double growth) {
  const auto geometric =
      static_cast<std::int64_t>(std::ceil(growth * static_cast<double>(capacity)));
  return needed > geometric ? needed : geometric;
}

// What one recovery did: the rows refilled here, and the grow, if any.
struct Recovery {
  std::int64_t largest = 0;       // the longest row (of any rank where over_ranks)
  std::int64_t refilled = 0;      // rows refilled on this rank
  std::int64_t from = 0, to = 0;  // capacity before and after (equal: no grow)
  double grow_seconds = 0;        // the reallocation and copy, fenced
};

// Overflow recovery after fill_dynamic: when some row asked for more than
// its capacity, grow every row (grown_capacity, keeping what the rows hold)
// and search again only for the rows that overflowed (a row's set of
// neighbours does not depend on how it was found). Collective when
// over_ranks: the capacity then follows the largest count of any rank, so
// every rank grows at the steps a single rank holding all rows would,
// instead of each at steps of its own, which the others wait for.
template <class Dynamic>
Recovery recover_dynamic(const Search& search, Dynamic& lists, const OverflowedRows& scratch,
                         bool over_ranks, double growth) {
  const std::int64_t largest = largest_count(lists, scratch);
  const std::int64_t needed = over_ranks ? comm::max(largest) : largest;
  Recovery r;
  r.largest = needed;
  r.from = r.to = lists.capacity();
  if (needed <= r.from) return r;
  Index overflowed = 0;
  Kokkos::deep_copy(overflowed, scratch.count);
  Kokkos::deep_copy(scratch.count, Index(0));
  r.to = grown_capacity(r.from, needed, growth);
  const auto start = std::chrono::steady_clock::now();
  lists.grow(r.to);
  Kokkos::fence();
  r.grow_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (overflowed == 0) return r;
  Search by_rows = search;
  by_rows.pairs = false;
  refill_rows(by_rows, lists, scratch.rows, overflowed);
  r.refilled = overflowed;
  return r;
}

}  // namespace karma::contact
