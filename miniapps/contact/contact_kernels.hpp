// Contact detection between two blocks of hexahedra: the mesh, the boxes,
// the cell-list search, the three neighbour-list storages it feeds and the
// row statistics over them.
//
// Coordinates are fixed-point integers (units of h / 81920), so every
// backend and thread count computes bit-identical boxes and the overlap test
// is exact: the lists, and so every checksum, are the same everywhere.
#pragma once

#include "karma/array.hpp"
#include "karma/ragged.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Index = std::int64_t;
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>;

// Fixed-point geometry: block A's element size h is `unit`; every length of
// the problem (0.5, 0.2 h, 0.05, 0.05 per step) is a whole number of units.
inline constexpr int unit = 81920;
inline constexpr int h_a = unit;            // block A: n x n x n elements of size 1
inline constexpr int h_b = unit / 2;        // block B: 2n x 2n x n elements of size 0.5
inline constexpr int perturb_a = unit / 5;  // nodes move by up to 0.2 h
inline constexpr int perturb_b = unit / 10;
inline constexpr int inflate = unit / 20;    // boxes grow by 0.05 on every side
inline constexpr int step_move = unit / 20;  // block B moves down 0.05 per step
inline constexpr int start_gap = unit / 2;   // and starts 0.5 above block A
inline constexpr int standard_steps = 30;    // ... ending 1.0 deep inside A

inline constexpr bool on_gpu = is_gpu_space<Exec>();

// --- hashes: counter-based, the same on every backend ---------------------------

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t x) {
  // SplitMix64's finaliser.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

KOKKOS_INLINE_FUNCTION std::uint32_t mix32(std::uint32_t x) {
  // MurmurHash3's finaliser.
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

// The value whose statistics each row computes: f(j) in [0, 1000), a
// multiplicative (Fibonacci) hash of j. Cheap on purpose: the statistics
// measure how fast a storage is read, not integer arithmetic. Sums of these
// are exact in double (and in integers).
KOKKOS_INLINE_FUNCTION int row_value(int j) {
  return static_cast<int>(((static_cast<std::uint32_t>(j) * 0x9e3779b1u) >> 12) % 1000u);
}

// One pair's contribution to the order-independent checksum (a wrapping sum).
KOKKOS_INLINE_FUNCTION std::uint64_t pair_hash(std::int64_t i, std::int64_t j) {
  return mix64((static_cast<std::uint64_t>(i) << 32) ^ static_cast<std::uint64_t>(j) ^
               0x2545f4914f6cdd1dULL);
}

// Perturbation of one node coordinate, uniform in [-amplitude, amplitude].
KOKKOS_INLINE_FUNCTION int perturbation(std::uint64_t seed, std::int64_t node, int component,
                                        int amplitude) {
  const std::uint64_t key =
      mix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(node) * 3u +
            static_cast<std::uint64_t>(component));
  const std::uint64_t span = 2 * static_cast<std::uint64_t>(amplitude) + 1;
  return static_cast<int>((key >> 11) % span) - amplitude;
}

// --- the mesh -----------------------------------------------------------------

struct MeshShape {
  int n = 0;
  Index elements_a = 0, elements_b = 0, elements = 0;
  Index nodes_a = 0, nodes_b = 0, nodes = 0;
};

inline MeshShape mesh_shape(int n) {
  MeshShape s;
  s.n = n;
  const Index m = n;
  s.elements_a = m * m * m;
  s.elements_b = 4 * m * m * m;
  s.elements = s.elements_a + s.elements_b;
  s.nodes_a = (m + 1) * (m + 1) * (m + 1);
  s.nodes_b = (2 * m + 1) * (2 * m + 1) * (m + 1);
  s.nodes = s.nodes_a + s.nodes_b;
  return s;
}

// Block B's lowest nominal z at a step: 0.5 above A, 0.05 lower per step.
inline std::int64_t b_bottom(int n, std::int64_t step) {
  return static_cast<std::int64_t>(n) * h_a + start_gap - step * step_move;
}

using Coords = Kokkos::View<int* [3], Memory>;  // node coordinates, block B at z = 0
using Boxes = Kokkos::View<int* [6], Memory>;   // min x y z, max x y z per element

// Nodes at their perturbed positions; block B's nodes relative to its bottom.
inline void make_nodes(const MeshShape& s, std::uint64_t seed, const Coords& xyz) {
  const int n = s.n;
  const Index nodes_a = s.nodes_a;
  Kokkos::parallel_for(
      "contact::nodes", Range(0, s.nodes), KOKKOS_LAMBDA(const Index v) {
        int base[3];
        int amplitude;
        if (v < nodes_a) {
          const Index m = n + 1;
          base[0] = static_cast<int>(v % m) * h_a;
          base[1] = static_cast<int>((v / m) % m) * h_a;
          base[2] = static_cast<int>(v / (m * m)) * h_a;
          amplitude = perturb_a;
        } else {
          const Index w = v - nodes_a;
          const Index m = 2 * n + 1;
          base[0] = static_cast<int>(w % m) * h_b;
          base[1] = static_cast<int>((w / m) % m) * h_b;
          base[2] = static_cast<int>(w / (m * m)) * h_b;
          amplitude = perturb_b;
        }
        for (int c = 0; c < 3; ++c) xyz(v, c) = base[c] + perturbation(seed, v, c, amplitude);
      });
}

// Each element's box over its 8 nodes, inflated; block B lifted to b_z.
inline void make_boxes(const MeshShape& s, const Coords& xyz, int b_z, const Boxes& boxes) {
  const int n = s.n;
  const Index elements_a = s.elements_a, nodes_a = s.nodes_a;
  Kokkos::parallel_for(
      "contact::boxes", Range(0, s.elements), KOKKOS_LAMBDA(const Index e) {
        Index corner, sx, sy;
        int lift;
        if (e < elements_a) {
          const Index x = e % n, y = (e / n) % n, z = e / (Index(n) * n);
          sx = n + 1;
          sy = sx * sx;
          corner = x + sx * y + sy * z;
          lift = 0;
        } else {
          const Index f = e - elements_a, m = 2 * n;
          const Index x = f % m, y = (f / m) % m, z = f / (m * m);
          sx = m + 1;
          sy = sx * sx;
          corner = nodes_a + x + sx * y + sy * z;
          lift = b_z;
        }
        int lo[3] = {INT_MAX, INT_MAX, INT_MAX};
        int hi[3] = {INT_MIN, INT_MIN, INT_MIN};
        for (int k = 0; k < 8; ++k) {
          const Index v = corner + (k & 1) + ((k >> 1) & 1) * sx + ((k >> 2) & 1) * sy;
          for (int c = 0; c < 3; ++c) {
            const int x = xyz(v, c) + (c == 2 ? lift : 0);
            lo[c] = x < lo[c] ? x : lo[c];
            hi[c] = x > hi[c] ? x : hi[c];
          }
        }
        for (int c = 0; c < 3; ++c) {
          boxes(e, c) = lo[c] - inflate;
          boxes(e, 3 + c) = hi[c] + inflate;
        }
      });
}

KOKKOS_INLINE_FUNCTION bool overlap(const int a[6], const int b[6]) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
         b[2] <= a[5];
}

// --- the cell list --------------------------------------------------------------

// A uniform grid over the whole scene. Each element is listed in every cell
// its box touches; a pair is reported only in the cell holding the lower
// corner of the two boxes' intersection, so exactly once, with no set.
struct Grid {
  int lo[3] = {0, 0, 0};
  int cell = unit;
  int dims[3] = {1, 1, 1};
  Index cells = 1;

  KOKKOS_INLINE_FUNCTION int cell_of(int d, int x) const {
    const int c = (x - lo[d]) / cell;  // truncation is harmless: clamped below
    return c < 0 ? 0 : (c >= dims[d] ? dims[d] - 1 : c);
  }
  KOKKOS_INLINE_FUNCTION Index index(int cx, int cy, int cz) const {
    return cx + Index(dims[0]) * (cy + Index(dims[1]) * cz);
  }
};

// The grid for a step, from the scene's known extent (boxes reach at most
// 0.25 h beyond their nominal element); a box outside would still be found,
// in a clamped border cell.
inline Grid make_grid(int n, std::int64_t b_z, int cell) {
  Grid g;
  g.cell = cell;
  const std::int64_t margin = unit / 2;
  const std::int64_t top =
      std::max<std::int64_t>(std::int64_t(n) * h_a, b_z + std::int64_t(n) * h_b);
  const std::int64_t bottom = std::min<std::int64_t>(0, b_z);
  const std::int64_t lo[3] = {-margin, -margin, bottom - margin};
  const std::int64_t hi[3] = {std::int64_t(n) * h_a + margin, std::int64_t(n) * h_a + margin,
                              top + margin};
  g.cells = 1;
  for (int d = 0; d < 3; ++d) {
    g.lo[d] = static_cast<int>(lo[d]);
    g.dims[d] = static_cast<int>((hi[d] - lo[d]) / cell + 1);
    g.cells *= g.dims[d];
  }
  return g;
}

// Elements sorted by cell (a counting sort): cell c holds
// items(offsets(c) .. offsets(c + 1) - 1), in increasing element order.
struct CellLists {
  Grid grid;
  Kokkos::View<int*, Memory> counts;            // per cell; reused as the fill cursor
  Kokkos::View<std::int64_t*, Memory> offsets;  // cells + 1
  Kokkos::View<int*, Memory> items;             // a buffer: may be longer than the entries
  std::int64_t entries = 0;
};

inline std::int64_t bytes_of(const CellLists& c) {
  return static_cast<std::int64_t>(c.counts.span() * sizeof(int) +
                                   c.offsets.span() * sizeof(std::int64_t) +
                                   c.items.span() * sizeof(int));
}

// Bins every element into the cells its box touches. `trace`, when given,
// is called after each part (main.cpp's KARMA_CONTACT_TRACE).
inline void bin(const Boxes& boxes, const Grid& g, CellLists& cl,
                const std::function<void(const char*)>& trace = {}) {
  const Index elements = static_cast<Index>(boxes.extent(0));
  cl.grid = g;
  if (static_cast<Index>(cl.counts.extent(0)) < g.cells) {
    cl.counts = Kokkos::View<int*, Memory>();
    cl.offsets = Kokkos::View<std::int64_t*, Memory>();
    cl.counts = Kokkos::View<int*, Memory>("contact::cell_counts", g.cells);
    cl.offsets = Kokkos::View<std::int64_t*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::cell_offsets"), g.cells + 1);
  }
  const auto counts = Kokkos::subview(cl.counts, std::make_pair(Index(0), g.cells));
  const auto offsets = Kokkos::subview(cl.offsets, std::make_pair(Index(0), g.cells + 1));
  Kokkos::deep_copy(counts, 0);
  Kokkos::parallel_for(
      "contact::bin_count", Range(0, elements), KOKKOS_LAMBDA(const Index e) {
        const int x0 = g.cell_of(0, boxes(e, 0)), x1 = g.cell_of(0, boxes(e, 3));
        const int y0 = g.cell_of(1, boxes(e, 1)), y1 = g.cell_of(1, boxes(e, 4));
        const int z0 = g.cell_of(2, boxes(e, 2)), z1 = g.cell_of(2, boxes(e, 5));
        for (int z = z0; z <= z1; ++z)
          for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) Kokkos::atomic_add(&counts(g.index(x, y, z)), 1);
      });
  if (trace) trace("bin: count");
  cl.entries = sizes_to_offsets("contact::bin_scan", counts, offsets);
  if (trace) trace("bin: scan");
  if (static_cast<std::int64_t>(cl.items.extent(0)) < cl.entries) {
    cl.items = Kokkos::View<int*, Memory>();
    cl.items = Kokkos::View<int*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::cell_items"), cl.entries);
  }
  const auto items = cl.items;
  Kokkos::deep_copy(counts, 0);
  Kokkos::parallel_for(
      "contact::bin_fill", Range(0, elements), KOKKOS_LAMBDA(const Index e) {
        const int x0 = g.cell_of(0, boxes(e, 0)), x1 = g.cell_of(0, boxes(e, 3));
        const int y0 = g.cell_of(1, boxes(e, 1)), y1 = g.cell_of(1, boxes(e, 4));
        const int z0 = g.cell_of(2, boxes(e, 2)), z1 = g.cell_of(2, boxes(e, 5));
        for (int z = z0; z <= z1; ++z)
          for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x) {
              const Index c = g.index(x, y, z);
              const int k = Kokkos::atomic_fetch_add(&counts(c), 1);
              items(offsets(c) + k) = static_cast<int>(e);
            }
      });
  if (trace) trace("bin: fill");
  // The atomics above fill a cell in any order; sorting each (short) cell
  // makes the candidate order, and so the row order, the same on every run.
  Kokkos::parallel_for(
      "contact::bin_sort", Range(0, g.cells), KOKKOS_LAMBDA(const Index c) {
        const std::int64_t begin = offsets(c), end = offsets(c + 1);
        for (std::int64_t a = begin + 1; a < end; ++a) {
          const int v = items(a);
          std::int64_t b = a;
          for (; b > begin && items(b - 1) > v; --b) items(b) = items(b - 1);
          items(b) = v;
        }
      });
}

// The search every storage shares: for element i, calls sink.add(j) once
// for every other element j whose box overlaps i's (rows: every j, each row
// filled by its own thread), or only for j > i (pairs: each pair tested
// once and written into both rows, by atomics, as a pair search does).
struct Search {
  Boxes boxes;
  Grid grid;
  Kokkos::View<std::int64_t*, Memory> offsets;
  Kokkos::View<int*, Memory> items;
  bool pairs;

  Search(const Boxes& b, const CellLists& cl, bool pair_search)
      : boxes(b), grid(cl.grid), offsets(cl.offsets), items(cl.items), pairs(pair_search) {}

  template <class Sink>
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, Sink& sink) const {
    int a[6];
    for (int d = 0; d < 6; ++d) a[d] = boxes(i, d);
    const int x0 = grid.cell_of(0, a[0]), x1 = grid.cell_of(0, a[3]);
    const int y0 = grid.cell_of(1, a[1]), y1 = grid.cell_of(1, a[4]);
    const int z0 = grid.cell_of(2, a[2]), z1 = grid.cell_of(2, a[5]);
    for (int z = z0; z <= z1; ++z) {
      // In a cell past i's first one along an axis, the pair belongs here
      // only if j's box also starts in this cell along that axis.
      const int zlo = z > z0 ? grid.lo[2] + z * grid.cell : INT_MIN;
      for (int y = y0; y <= y1; ++y) {
        const int ylo = y > y0 ? grid.lo[1] + y * grid.cell : INT_MIN;
        for (int x = x0; x <= x1; ++x) {
          const int xlo = x > x0 ? grid.lo[0] + x * grid.cell : INT_MIN;
          const Index c = grid.index(x, y, z);
          const std::int64_t end = offsets(c + 1);
          for (std::int64_t k = offsets(c); k < end; ++k) {
            const int j = items(k);
            int b[6];
            for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
            if ((pairs ? j > i : j != i) && overlap(a, b) && b[0] >= xlo && b[1] >= ylo &&
                b[2] >= zlo)
              sink.add(j);
          }
        }
      }
    }
  }
};

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
  KOKKOS_INLINE_FUNCTION void add(int j) {
    const unsigned long long k = stripe.take(1);
    if (k < stripe.size) {
      const unsigned node = static_cast<unsigned>(stripe.base + k);
      stripe.pool(node) = ListNode{j, head};
      head = node;
    }
  }
};

// Pairs: both rows take a node; heads are swapped in atomically because
// other threads push into the same rows.
struct ListPairSink {
  ListStripe stripe;
  Kokkos::View<unsigned*, Memory> heads;
  int i;
  KOKKOS_INLINE_FUNCTION void push(int row, int value, unsigned long long k) const {
    if (k >= stripe.size) return;
    const unsigned node = static_cast<unsigned>(stripe.base + k);
    const unsigned next = Kokkos::atomic_exchange(&heads(row), node);
    stripe.pool(node) = ListNode{value, next};
  }
  KOKKOS_INLINE_FUNCTION void add(int j) const {
    const unsigned long long k = stripe.take(2);
    push(i, j, k);
    push(j, i, k + 1);
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
          ListPairSink sink{ListStripe(l, i), heads, static_cast<int>(i)};
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

// --- storage 2: compressed rows, two passes (count, scan, fill) ------------------

struct CountSink {
  int n = 0;
  KOKKOS_INLINE_FUNCTION void add(int) { ++n; }
};

struct RowSink {
  int* out;
  KOKKOS_INLINE_FUNCTION void add(int j) { *out++ = j; }
};

// Pairs: row i's own count is kept locally, row j's counted atomically.
struct CountPairSink {
  Kokkos::View<int*, Memory> sizes;
  int n;
  KOKKOS_INLINE_FUNCTION void add(int j) {
    ++n;
    Kokkos::atomic_add(&sizes(j), 1);
  }
};

// Pairs: a cursor per row (the sizes, counted up again from zero).
struct FillPairSink {
  Kokkos::View<std::int64_t*, Memory> offsets;
  Kokkos::View<int*, Memory> cursor;
  Kokkos::View<int*, Memory> values;
  int i;
  KOKKOS_INLINE_FUNCTION void add(int j) const {
    values(offsets(i) + Kokkos::atomic_fetch_add(&cursor(i), 1)) = j;
    values(offsets(j) + Kokkos::atomic_fetch_add(&cursor(j), 1)) = i;
  }
};

struct CompressedRows {
  Kokkos::View<int*, Memory> sizes;
  Kokkos::View<std::int64_t*, Memory> offsets;
  Kokkos::View<int*, Memory> buffer;  // values; may be longer than the entries
  RaggedRight<int, Memory> rows;      // offsets and the used part of buffer
};

inline std::int64_t bytes_of(const CompressedRows& c) {
  return static_cast<std::int64_t>(c.sizes.span() * sizeof(int) +
                                   c.offsets.span() * sizeof(std::int64_t) +
                                   c.buffer.span() * sizeof(int));
}

// Pass 1: the size of every row.
inline void count_rows(const Search& search, const CompressedRows& c) {
  const auto sizes = c.sizes;
  const Index n = static_cast<Index>(sizes.extent(0));
  if (search.pairs) {
    Kokkos::deep_copy(sizes, 0);
    Kokkos::parallel_for(
        "contact::csr::count_pairs", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          CountPairSink sink{sizes, 0};
          search(i, sink);
          Kokkos::atomic_add(&sizes(i), sink.n);
        });
  } else {
    Kokkos::parallel_for(
        "contact::csr::count", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          CountSink sink;
          search(i, sink);
          sizes(i) = sink.n;
        });
  }
}

// Scan, grow the buffer if the lists outgrew it, pass 2: search again and write.
inline void fill_rows(const Search& search, CompressedRows& c) {
  const std::int64_t total = sizes_to_offsets("contact::csr::scan", c.sizes, c.offsets);
  if (static_cast<std::int64_t>(c.buffer.extent(0)) < total) {
    c.rows = RaggedRight<int, Memory>();
    c.buffer = Kokkos::View<int*, Memory>();
    c.buffer = Kokkos::View<int*, Memory>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::csr::values"), total);
  }
  c.rows = RaggedRight<int, Memory>(
      c.offsets, Kokkos::subview(c.buffer, std::make_pair(std::int64_t(0), total)));
  const auto offsets = c.offsets;
  const auto values = c.buffer;
  const auto sizes = c.sizes;
  const Index n = static_cast<Index>(sizes.extent(0));
  if (search.pairs) {
    Kokkos::deep_copy(sizes, 0);
    Kokkos::parallel_for(
        "contact::csr::fill_pairs", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          FillPairSink sink{offsets, sizes, values, static_cast<int>(i)};
          search(i, sink);
        });
  } else {
    Kokkos::parallel_for(
        "contact::csr::fill", Range(0, n), KOKKOS_LAMBDA(const Index i) {
          RowSink sink{values.data() + offsets(i)};
          search(i, sink);
        });
  }
}

// --- storage 3: dynamic ragged rows (capacity, count, grow and refill) ----------

template <class Dynamic>
struct DynamicRowSink {
  Dynamic lists;
  Index row;
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION void add(int j) { lists.store(row, n++, j); }
};

// Pairs: the core's push_back, safe with other threads pushing into a row.
template <class Dynamic>
struct DynamicPairSink {
  Dynamic lists;
  int i;
  KOKKOS_INLINE_FUNCTION void add(int j) const {
    lists.push_back(i, j);
    lists.push_back(j, i);
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
          DynamicPairSink<Dynamic> sink{lists, static_cast<int>(i)};
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
