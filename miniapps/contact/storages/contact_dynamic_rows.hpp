// Storage 3: dynamic ragged rows (capacity, count, grow and refill).
#pragma once

#include "search/contact_cells.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

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

// One search pass; a row past capacity keeps counting (rows: each row
// written by its own thread without atomics; pairs: push_back). The caller
// learns of an overflow from lists.max_count().
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

// Overflow recovery after fill_dynamic: when some row asked for more than
// its capacity, grow every row to the largest count (keeping what the rows
// hold) and search again only for the rows that overflowed, each by its own
// thread (a row's set of neighbours does not depend on how it was found).
// Returns the number of rows refilled (0: nothing overflowed).
template <class Dynamic>
std::int64_t recover_dynamic(const Search& search, Dynamic& lists) {
  const std::int64_t needed = lists.max_count();
  const std::int64_t capacity = lists.capacity();
  if (needed <= capacity) return 0;
  const Index n = lists.num_rows();
  Kokkos::View<Index*, Memory> rows(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::dynamic::overflowed"), n);
  const auto counts = lists.counts();
  std::int64_t overflowed = 0;
  Kokkos::parallel_scan(
      "contact::dynamic::find_overflowed", Range(0, n),
      KOKKOS_LAMBDA(const Index i, std::int64_t& k, const bool final) {
        if (counts(i) <= capacity) return;
        if (final) rows(k) = i;
        ++k;
      },
      overflowed);
  lists.grow(needed);
  const Dynamic grown = lists;
  Search by_rows = search;
  by_rows.pairs = false;
  Kokkos::parallel_for(
      "contact::dynamic::refill", Range(0, overflowed), KOKKOS_LAMBDA(const Index k) {
        const Index i = rows(k);
        DynamicRowSink<Dynamic> sink{grown, i, 0};
        by_rows(i, sink);
        grown.set_count(i, sink.n);
      });
  return overflowed;
}

}  // namespace karma::contact
