// Storage 1: linked lists (HOSS), one pool of nodes and a head per row.
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

// --- storage 1: linked lists (HOSS) -------------------------------------------------

// A head per element and a pool of nodes taken with an atomic counter; a
// new neighbour goes to the front of its element's list. The pool may be
// split into stripes, each with its own counter, element i taking nodes
// from stripe i mod stripes: one counter (HOSS) is fine on a CPU, but on an
// H200 the threads of the whole GPU queueing on one address took 16 s to
// build the lists of n = 32 that the other storages built in 1 ms.
struct alignas(8) ListNode {
  int j;
  unsigned next;
};
inline constexpr unsigned list_end = 0xffffffffu;
inline constexpr std::uint64_t max_pool = list_end;  // node indices are 32-bit, as the heads
inline constexpr int stripe_pad = 16;                // counters 128 bytes apart

struct LinkedLists {
  Kokkos::View<unsigned*, Memory> heads;
  Kokkos::View<ListNode*, Memory> pool;            // stripes x stripe_size nodes
  Kokkos::View<unsigned long long*, Memory> tops;  // nodes taken per stripe (may pass the size)
  int stripes = 1;
  unsigned long long stripe_size = 0;
};

inline std::int64_t bytes_of(const LinkedLists& l) {
  return static_cast<std::int64_t>(l.heads.span() * sizeof(unsigned) +
                                   l.pool.span() * sizeof(ListNode) +
                                   l.tops.span() * sizeof(unsigned long long));
}

// Lists for n elements with room for at least `nodes` nodes (zeroed, so
// first-touched, when initialize).
inline LinkedLists make_lists(Index n, std::uint64_t nodes, int stripes, bool initialize = true) {
  LinkedLists l;
  l.stripes = stripes < 1 ? 1 : stripes;
  l.stripe_size = (nodes + l.stripes - 1) / l.stripes;
  l.heads = Kokkos::View<unsigned*, Memory>("contact::linked_list::heads", n);
  l.tops = Kokkos::View<unsigned long long*, Memory>(
      "contact::linked_list::tops", static_cast<std::size_t>(l.stripes) * stripe_pad);
  const std::size_t size = static_cast<std::size_t>(l.stripes) * l.stripe_size;
  if (initialize)
    l.pool = Kokkos::View<ListNode*, Memory>("contact::linked_list::pool", size);
  else
    l.pool = Kokkos::View<ListNode*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::linked_list::pool"), size);
  return l;
}

// A larger pool: every stripe holds stripe_size nodes. The lists are gone.
inline void grow_pool(LinkedLists& l, unsigned long long stripe_size) {
  l.pool = Kokkos::View<ListNode*, Memory>();
  l.stripe_size = stripe_size;
  l.pool = Kokkos::View<ListNode*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::linked_list::pool"),
      static_cast<std::size_t>(l.stripes) * stripe_size);
}

// Where element i takes its nodes.
struct ListStripe {
  Kokkos::View<ListNode*, Memory> pool;
  Kokkos::View<unsigned long long*, Memory> tops;
  unsigned long long size, base;
  Index counter;
  KOKKOS_INLINE_FUNCTION ListStripe(const LinkedLists& l, Index i)
      : pool(l.pool),
        tops(l.tops),
        size(l.stripe_size),
        base(static_cast<unsigned long long>(i % l.stripes) * l.stripe_size),
        counter((i % l.stripes) * stripe_pad) {}
  // The first of `count` nodes taken, relative to the stripe.
  KOKKOS_INLINE_FUNCTION unsigned long long take(unsigned long long count) const {
    return Kokkos::atomic_fetch_add(&tops(counter), count);
  }
};

// Rows: each row's list is built by one thread; only the pool is shared.
struct ListRowSink {
  ListStripe stripe;
  unsigned head;
  KOKKOS_INLINE_FUNCTION void add(int, int id, bool) {
    const unsigned long long k = stripe.take(1);
    if (k < stripe.size) {
      const unsigned node = static_cast<unsigned>(stripe.base + k);
      stripe.pool(node) = ListNode{id, head};
      head = node;
    }
  }
};

// Pairs: both rows take a node; heads are swapped in atomically because
// other threads push into the same rows.
struct ListPairSink {
  ListStripe stripe;
  Kokkos::View<unsigned*, Memory> heads;
  int i, id_i;
  KOKKOS_INLINE_FUNCTION void push(int row, int value, unsigned long long k) const {
    if (k >= stripe.size) return;
    const unsigned node = static_cast<unsigned>(stripe.base + k);
    const unsigned next = Kokkos::atomic_exchange(&heads(row), node);
    stripe.pool(node) = ListNode{value, next};
  }
  KOKKOS_INLINE_FUNCTION void add(int j, int id_j, bool j_row) const {
    const unsigned long long k = stripe.take(j_row ? 2 : 1);
    push(i, id_j, k);
    if (j_row) push(j, id_i, k + 1);
  }
};

struct PoolUse {
  std::uint64_t largest_stripe = 0;  // above stripe_size: an overflow
  std::uint64_t total = 0;
};

// One search pass into the lists; says how many nodes the stripes asked for
// (more than a stripe holds means an overflow: grow and search again).
inline PoolUse fill_lists(const Search& search, const LinkedLists& l) {
  Kokkos::deep_copy(l.tops, 0ULL);
  const auto heads = l.heads;
  const Index n = static_cast<Index>(heads.extent(0));
  if (search.pairs) {
    Kokkos::deep_copy(heads, list_end);
    Kokkos::parallel_for(
        "contact::linked_list::search_pairs", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          ListPairSink sink{ListStripe(l, i), heads, static_cast<int>(i), search.id(i)};
          search(i, sink);
        });
  } else {
    Kokkos::parallel_for(
        "contact::linked_list::search", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          ListRowSink sink{ListStripe(l, i), list_end};
          search(i, sink);
          heads(i) = sink.head;
        });
  }
  const auto tops = l.tops;
  PoolUse use;
  Kokkos::parallel_reduce(
      "contact::linked_list::largest_stripe", Range(0, l.stripes),
      KOKKOS_LAMBDA(const Index s, std::uint64_t& m) {
        const std::uint64_t t = tops(s * stripe_pad);
        m = t > m ? t : m;
      },
      Kokkos::Max<std::uint64_t>(use.largest_stripe));
  Kokkos::parallel_reduce(
      "contact::linked_list::nodes_taken", Range(0, l.stripes),
      KOKKOS_LAMBDA(const Index s, std::uint64_t& t) { t += tops(s * stripe_pad); }, use.total);
  return use;
}

}  // namespace karma::contact
