// The checks of karma-contact. Every storage is first copied into canonical
// form (compressed rows, each row sorted); the checks then compare those
// copies with each other, every row with a search over the mesh's structure
// on the device, with a host brute-force search (small meshes), with an O(N)
// scan on the device for sampled rows, and the row statistics with the
// lists.
#pragma once

#include "storages/contact_row_stats.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace karma::contact {

using Rows = RaggedRight<int, Memory>;

// Row i's global element id: i itself (replicated runs, ids empty), or
// ids(i) (a partitioned run's owned rows), so that hashes of rows and
// statistics summed over ranks are the replicated run's.
struct GlobalIds {
  Kokkos::View<int*, Memory> ids;
  KOKKOS_INLINE_FUNCTION Index operator()(const Index i) const {
    return ids.extent(0) > 0 ? Index(ids(i)) : i;
  }
};

// Insertion sort of every row: rows are short (tens of entries).
inline void sort_rows(const Rows& r) {
  Kokkos::parallel_for(
      "contact::verify::sort_rows", Range(0, r.num_rows()), KOKKOS_LAMBDA(const Index i) {
        const std::int64_t begin = r.begin(i), end = r.end(i);
        const auto& v = r.values();
        for (std::int64_t a = begin + 1; a < end; ++a) {
          const int x = v(a);
          std::int64_t b = a;
          for (; b > begin && v(b - 1) > x; --b) v(b) = v(b - 1);
          v(b) = x;
        }
      });
}

inline Rows canonical(const Rows& rows) {
  Kokkos::View<std::int64_t*, Memory> offsets(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::canonical::offsets"),
      rows.offsets().extent(0));
  Kokkos::View<int*, Memory> values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::canonical::values"),
      rows.values().extent(0));
  Kokkos::deep_copy(offsets, rows.offsets());
  Kokkos::deep_copy(values, rows.values());
  const Rows copy(offsets, values);
  sort_rows(copy);
  return copy;
}

inline Rows canonical(const LinkedLists& l) {
  const auto heads = l.heads;
  const auto pool = l.pool;
  const Index n = static_cast<Index>(heads.extent(0));
  Kokkos::View<std::int64_t*, Memory> sizes("contact::canonical::sizes", n);
  Kokkos::parallel_for(
      "contact::verify::list_sizes", Range(0, n), KOKKOS_LAMBDA(const Index i) {
        std::int64_t c = 0;
        for (unsigned k = heads(i); k != list_end; k = pool(k).next) ++c;
        sizes(i) = c;
      });
  const auto rows = Rows::from_sizes("contact::canonical", sizes, /*zero_fill=*/false);
  Kokkos::parallel_for(
      "contact::verify::list_copy", Range(0, n), KOKKOS_LAMBDA(const Index i) {
        std::int64_t c = 0;
        for (unsigned k = heads(i); k != list_end; k = pool(k).next) rows(i, c++) = pool(k).j;
      });
  sort_rows(rows);
  return rows;
}

template <class Dynamic>
Rows canonical_dynamic(const Dynamic& d) {
  const Rows rows = to_compressed(d, "contact::canonical");
  sort_rows(rows);
  return rows;
}

// --- row signatures: each row's size and the wrapping sum of its pair hashes ----------
//
// Order-independent, so taken straight from any storage without sorting:
// two storages hold the same rows when every signature agrees, and the sum
// of all hashes is the pair checksum.
struct Signatures {
  Kokkos::View<std::int64_t*, Memory> count;
  Kokkos::View<std::uint64_t*, Memory> hash;
  GlobalIds id;  // each row's global id, hashed with its entries
};

inline Signatures make_signatures(Index n, const GlobalIds& ids = {}) {
  return {Kokkos::View<std::int64_t*, Memory>(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::signature_counts"), n),
          Kokkos::View<std::uint64_t*, Memory>(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::signature_hashes"), n),
          ids};
}

template <class Access>
void array_signatures(const Access& rows, const Signatures& sig) {
  Kokkos::parallel_for(
      "contact::verify::signatures", Range(0, rows.num_rows()), KOKKOS_LAMBDA(const Index i) {
        const std::int64_t size = rows.size(i), begin = rows.begin(i);
        std::uint64_t h = 0;
        const Index gi = sig.id(i);
        for (std::int64_t k = 0; k < size; ++k) h += pair_hash(gi, rows.at(begin, i, k));
        sig.count(i) = size;
        sig.hash(i) = h;
      });
}

inline void list_signatures(const LinkedLists& l, const Signatures& sig) {
  const auto heads = l.heads;
  const auto pool = l.pool;
  Kokkos::parallel_for(
      "contact::verify::list_signatures", Range(0, static_cast<Index>(heads.extent(0))),
      KOKKOS_LAMBDA(const Index i) {
        std::int64_t c = 0;
        std::uint64_t h = 0;
        const Index gi = sig.id(i);
        for (unsigned k = heads(i); k != list_end; k = pool(k).next) {
          h += pair_hash(gi, pool(k).j);
          ++c;
        }
        sig.count(i) = c;
        sig.hash(i) = h;
      });
}

inline std::int64_t signatures_differing(const Signatures& a, const Signatures& b) {
  if (a.count.extent(0) != b.count.extent(0))
    return static_cast<std::int64_t>(std::max(a.count.extent(0), b.count.extent(0)));
  std::int64_t wrong = 0;
  Kokkos::parallel_reduce(
      "contact::verify::signatures_differing", Range(0, static_cast<Index>(a.count.extent(0))),
      KOKKOS_LAMBDA(const Index i, std::int64_t& w) {
        w += (a.count(i) != b.count(i) || a.hash(i) != b.hash(i)) ? 1 : 0;
      },
      wrong);
  return wrong;
}

struct SignatureSummary {
  std::uint64_t checksum = 0;  // the pair checksum
  std::int64_t entries = 0, longest = 0, empty = 0;
};

inline SignatureSummary summarize_signatures(const Signatures& sig) {
  SignatureSummary s;
  const Index n = static_cast<Index>(sig.count.extent(0));
  Kokkos::parallel_reduce(
      "contact::verify::pair_checksum", Range(0, n),
      KOKKOS_LAMBDA(const Index i, std::uint64_t& h) { h += sig.hash(i); }, s.checksum);
  Kokkos::parallel_reduce(
      "contact::verify::entries", Range(0, n),
      KOKKOS_LAMBDA(const Index i, std::int64_t& e) { e += sig.count(i); }, s.entries);
  Kokkos::parallel_reduce(
      "contact::verify::empty_rows", Range(0, n),
      KOKKOS_LAMBDA(const Index i, std::int64_t& z) { z += sig.count(i) == 0 ? 1 : 0; }, s.empty);
  Kokkos::parallel_reduce(
      "contact::verify::longest_row", Range(0, n),
      KOKKOS_LAMBDA(const Index i, std::int64_t& m) { m = sig.count(i) > m ? sig.count(i) : m; },
      Kokkos::Max<std::int64_t>(s.longest));
  if (n == 0) s.longest = 0;
  return s;
}

// Where x is among the sorted entries [lo, hi) of v, or -1 (binary search).
template <class View>
KOKKOS_INLINE_FUNCTION std::int64_t find_sorted(const View& v, std::int64_t lo, std::int64_t hi,
                                                const std::int64_t x) {
  const std::int64_t end = hi;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (v(mid) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < end && v(lo) == x ? lo : -1;
}

// Errors of sorted rows over elements 0 .. N-1.
struct StructureErrors {
  std::int64_t out_of_range = 0, self = 0, duplicates = 0, asymmetric = 0;
  std::int64_t total() const { return out_of_range + self + duplicates + asymmetric; }
};

inline StructureErrors structure_errors(const Rows& r) {
  const Index n = r.num_rows();
  Kokkos::View<std::int64_t[4], Memory> errors("contact::verify::structure_errors");
  Kokkos::parallel_for(
      "contact::verify::structure", Range(0, n), KOKKOS_LAMBDA(const Index i) {
        const std::int64_t begin = r.begin(i), end = r.end(i);
        for (std::int64_t k = begin; k < end; ++k) {
          const int j = r.values()(k);
          if (j < 0 || j >= n) {
            Kokkos::atomic_add(&errors(0), std::int64_t{1});
            continue;
          }
          if (j == i) Kokkos::atomic_add(&errors(1), std::int64_t{1});
          if (k > begin && r.values()(k - 1) == j) Kokkos::atomic_add(&errors(2), std::int64_t{1});
          // i must be in row j, which is sorted.
          if (find_sorted(r.values(), r.begin(j), r.end(j), i) < 0)
            Kokkos::atomic_add(&errors(3), std::int64_t{1});
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, errors);
  StructureErrors e;
  e.out_of_range = h(0);
  e.self = h(1);
  e.duplicates = h(2);
  e.asymmetric = h(3);
  return e;
}

// Rows whose sorted contents differ (every row when the row counts differ).
inline std::int64_t rows_differing(const Rows& a, const Rows& b) {
  if (a.num_rows() != b.num_rows())
    return a.num_rows() > b.num_rows() ? a.num_rows() : b.num_rows();
  std::int64_t wrong = 0;
  Kokkos::parallel_reduce(
      "contact::verify::rows_differing", Range(0, a.num_rows()),
      KOKKOS_LAMBDA(const Index i, std::int64_t& count) {
        const std::int64_t size = a.row_size(i);
        bool same = size == b.row_size(i);
        for (std::int64_t k = 0; same && k < size; ++k) same = a(i, k) == b(i, k);
        count += same ? 0 : 1;
      },
      wrong);
  return wrong;
}

// Wrapping sum of pair_hash over every (i, j): the order does not matter.
inline std::uint64_t pair_checksum(const Rows& r) {
  std::uint64_t sum = 0;
  Kokkos::parallel_reduce(
      "contact::verify::pair_checksum", Range(0, r.num_rows()),
      KOKKOS_LAMBDA(const Index i, std::uint64_t& s) {
        for (std::int64_t k = r.begin(i); k < r.end(i); ++k) s += pair_hash(i, r.values()(k));
      },
      sum);
  return sum;
}

KOKKOS_INLINE_FUNCTION std::uint64_t stats_hash(Index i, double mn, double mx, double sum,
                                                double avg) {
  // min, max and sum are whole numbers; the average's bits count as they are.
  std::uint64_t avg_bits;
  static_assert(sizeof(avg_bits) == sizeof(avg), "double is 64-bit");
  memcpy(&avg_bits, &avg, sizeof(avg));
  std::uint64_t h = mix64(static_cast<std::uint64_t>(i) ^ 0x5851f42d4c957f2dULL);
  h = mix64(h ^ static_cast<std::uint64_t>(mn));
  h = mix64(h ^ (static_cast<std::uint64_t>(mx) << 16));
  h = mix64(h ^ static_cast<std::uint64_t>(sum));
  return mix64(h ^ avg_bits);
}

// Wrapping sum of every row's stats_hash (rows by their global ids).
inline std::uint64_t stats_checksum(const RowStats& s, const GlobalIds& id = {}) {
  std::uint64_t sum = 0;
  Kokkos::parallel_reduce(
      "contact::verify::stats_checksum", Range(0, static_cast<Index>(s.extent(0))),
      KOKKOS_LAMBDA(const Index i, std::uint64_t& h) {
        h += stats_hash(id(i), s(i, 0), s(i, 1), s(i, 2), s(i, 3));
      },
      sum);
  return sum;
}

// Rows whose statistics differ from a plain recomputation over the lists.
inline std::int64_t stats_rows_wrong(const RowStats& s, const Rows& r) {
  if (static_cast<Index>(s.extent(0)) != r.num_rows()) return r.num_rows() + 1;
  std::int64_t wrong = 0;
  Kokkos::parallel_reduce(
      "contact::verify::stats", Range(0, r.num_rows()),
      KOKKOS_LAMBDA(const Index i, std::int64_t& count) {
        const std::int64_t size = r.row_size(i);
        double mn = 0, mx = 0, sum = 0;
        for (std::int64_t k = 0; k < size; ++k) {
          const double v = row_value(r(i, k));
          mn = (k == 0 || v < mn) ? v : mn;
          mx = (k == 0 || v > mx) ? v : mx;
          sum += v;
        }
        const double avg = size > 0 ? sum / static_cast<double>(size) : 0.0;
        const bool same = s(i, 0) == mn && s(i, 1) == mx && s(i, 2) == sum && s(i, 3) == avg;
        count += same ? 0 : 1;
      },
      wrong);
  return wrong;
}

// Sampled rows against an O(N) scan of all boxes on the device: a row is
// wrong if its size or its pair-hash sum differs from the scan's.
inline std::int64_t sample_rows_wrong(const Boxes& boxes,
                                      const Kokkos::View<Index*, Memory>& samples,
                                      const Signatures& sig) {
  using Team = Kokkos::TeamPolicy<Exec>;
  const Index n = static_cast<Index>(boxes.extent(0));
  Kokkos::View<std::int64_t, Memory> wrong("contact::verify::sample_wrong");
  Kokkos::parallel_for(
      "contact::verify::sample_rows", Team(static_cast<int>(samples.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Team::member_type& t) {
        const Index i = samples(t.league_rank());
        int a[6];
        for (int d = 0; d < 6; ++d) a[d] = boxes(i, d);
        std::int64_t count = 0;
        std::uint64_t hash = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(t, n),
            [&](const Index j, std::int64_t& c) {
              int b[6];
              for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
              c += (j != i && overlap(a, b)) ? 1 : 0;
            },
            count);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(t, n),
            [&](const Index j, std::uint64_t& h) {
              int b[6];
              for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
              if (j != i && overlap(a, b)) h += pair_hash(i, j);
            },
            hash);
        Kokkos::single(Kokkos::PerTeam(t), [&]() {
          if (count != sig.count(i) || hash != sig.hash(i))
            Kokkos::atomic_add(&wrong(), std::int64_t{1});
        });
      });
  std::int64_t h = 0;
  Kokkos::deep_copy(h, wrong);
  return h;
}

// Every row against a host O(N^2) search: the overlapping j, in increasing
// order, must be exactly the sorted row.
template <class HostBoxes, class HostRows>
std::int64_t brute_force_rows_wrong(const HostBoxes& boxes, const HostRows& r) {
  const Index n = static_cast<Index>(boxes.extent(0));
  if (r.num_rows() != n) return n + 1;
  std::int64_t wrong = 0;
  Kokkos::parallel_reduce(
      "contact::verify::brute_force",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<Index>>(0, n),
      [=](const Index i, std::int64_t& count) {
        int a[6];
        for (int d = 0; d < 6; ++d) a[d] = boxes(i, d);
        std::int64_t k = r.begin(i);
        const std::int64_t end = r.end(i);
        bool same = true;
        for (Index j = 0; j < n && same; ++j) {
          int b[6];
          for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
          if (j == i || !overlap(a, b)) continue;
          same = k < end && r.values()(k) == j;
          ++k;
        }
        count += (same && k == end) ? 0 : 1;
      },
      wrong);
  return wrong;
}

// --- every row against a search over the mesh's structure ------------------------------
//
// A box lies within its element's nominal cube (side h, its block's element
// size) widened by the perturbation and the inflation: 0.25 h on every side.
// So the only elements whose boxes can meet box i are those whose widened
// cubes meet it: one range of indices per block and axis, computed from i's
// box alone. Testing each of those candidates, in increasing id order (block
// A's ids, then B's; z, y, x), gives row i exactly and sorted, without the
// cell grid and without any code of the search that built the lists; it is
// compared with the sorted reference row entry by entry, as the brute force
// does. 27 to about 100 candidates a row: O(N) in all, on the device. That
// every box lies within its widened cube is what makes the candidates
// complete, so it is checked too (a box outside counts as a failure).

KOKKOS_INLINE_FUNCTION std::int64_t floor_divide(std::int64_t a, std::int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Indices a in [0, extent) whose widened cube [offset + a h - m, offset +
// (a + 1) h + m] meets [lo, hi]: [first, last] (empty when first > last).
KOKKOS_INLINE_FUNCTION void candidate_range(std::int64_t lo, std::int64_t hi, std::int64_t offset,
                                            std::int64_t h, std::int64_t m, std::int64_t extent,
                                            std::int64_t& first, std::int64_t& last) {
  last = floor_divide(hi - offset + m, h);
  first = -floor_divide(-(lo - offset - m - h), h);  // ceiling
  first = first < 0 ? 0 : first;
  last = last > extent - 1 ? extent - 1 : last;
}

// Element e's block geometry: its nominal lower corner, h and the widening m.
struct MeshGeometry {
  int n = 0;
  Index elements_a = 0, elements = 0;
  std::int64_t b_z = 0;  // block B's nominal bottom at this step

  KOKKOS_INLINE_FUNCTION void cube(const Index e, std::int64_t lo[3], std::int64_t& h,
                                   std::int64_t& m) const {
    const bool in_a = e < elements_a;
    const Index f = in_a ? e : e - elements_a;
    const Index w = in_a ? n : 2 * n;
    // (Prvalues: a conditional of the two constants themselves would odr-use
    // them, which device code cannot.)
    h = in_a ? std::int64_t{h_a} : std::int64_t{h_b};
    m = in_a ? perturb_a + inflate : perturb_b + inflate;
    lo[0] = (f % w) * h;
    lo[1] = ((f / w) % w) * h;
    lo[2] = (f / (w * w)) * h + (in_a ? 0 : b_z);
  }
};

struct MeshCheck {
  std::int64_t rows_wrong = 0, boxes_outside = 0;
};

// Whether box `a` of element i lies within i's widened cube.
KOKKOS_INLINE_FUNCTION bool box_inside(const MeshGeometry& g, const Index i, const int a[6]) {
  std::int64_t lo[3], h, m;
  g.cube(i, lo, h, m);
  bool inside = true;
  for (int d = 0; d < 3; ++d) inside = inside && a[d] >= lo[d] - m && a[3 + d] <= lo[d] + h + m;
  return inside;
}

// Whether sorted row `row` (of element i, box a) holds exactly the elements
// the mesh's structure finds; box_of(j, b) gives any element's box.
template <class BoxOf>
KOKKOS_INLINE_FUNCTION bool mesh_row_right(const MeshGeometry& g, const Index i, const int a[6],
                                           const BoxOf& box_of, const Rows& r, const Index row) {
  std::int64_t k = r.begin(row);
  const std::int64_t end = r.end(row);
  bool same = true;
  for (int block = 0; block < 2 && same; ++block) {
    const std::int64_t h = block == 0 ? std::int64_t{h_a} : std::int64_t{h_b};
    const std::int64_t m = block == 0 ? perturb_a + inflate : perturb_b + inflate;
    const std::int64_t w = block == 0 ? g.n : 2 * g.n;
    const Index base = block == 0 ? 0 : g.elements_a;
    std::int64_t x0, x1, y0, y1, z0, z1;
    candidate_range(a[0], a[3], 0, h, m, w, x0, x1);
    candidate_range(a[1], a[4], 0, h, m, w, y0, y1);
    candidate_range(a[2], a[5], block == 0 ? 0 : g.b_z, h, m, g.n, z0, z1);
    for (std::int64_t z = z0; z <= z1 && same; ++z)
      for (std::int64_t y = y0; y <= y1 && same; ++y)
        for (std::int64_t x = x0; x <= x1 && same; ++x) {
          const Index j = base + x + w * (y + w * z);
          if (j == i) continue;
          int b[6];
          box_of(j, b);
          if (!overlap(a, b)) continue;
          same = k < end && r.values()(k) == j;
          ++k;
        }
  }
  return same && k == end;
}

struct BoxesAt {
  Boxes boxes;
  KOKKOS_INLINE_FUNCTION void operator()(const Index j, int b[6]) const {
    for (int d = 0; d < 6; ++d) b[d] = boxes(j, d);
  }
};

inline MeshCheck mesh_rows_wrong(const MeshShape& shape, std::int64_t b_z, const Boxes& boxes,
                                 const Rows& r) {
  const MeshGeometry g{shape.n, shape.elements_a, shape.elements, b_z};
  MeshCheck out;
  if (r.num_rows() != g.elements || static_cast<Index>(boxes.extent(0)) != g.elements) {
    out.rows_wrong = g.elements + 1;
    return out;
  }
  const BoxesAt box_of{boxes};
  Kokkos::parallel_reduce(
      "contact::verify::box_bounds", Range(0, g.elements),
      KOKKOS_LAMBDA(const Index e, std::int64_t& outside) {
        int a[6];
        box_of(e, a);
        outside += box_inside(g, e, a) ? 0 : 1;
      },
      out.boxes_outside);
  Kokkos::parallel_reduce(
      "contact::verify::mesh_rows", Range(0, g.elements),
      KOKKOS_LAMBDA(const Index i, std::int64_t& wrong) {
        int a[6];
        box_of(i, a);
        wrong += mesh_row_right(g, i, a, box_of, r, i) ? 0 : 1;
      },
      out.rows_wrong);
  return out;
}

// --- fault injection, for the tests that show the checks fail ---------------------------

// The first entry of `row` becomes the row itself (self) or an element half
// the mesh away (foreign); nothing happens to an empty row.
KOKKOS_INLINE_FUNCTION int corrupted(int j, Index row, bool self, Index elements) {
  return self ? static_cast<int>(row) : static_cast<int>((j + elements / 2) % elements);
}

struct ListAccessForFault {
  Kokkos::View<unsigned*, Memory> heads;
  Kokkos::View<ListNode*, Memory> pool;
  KOKKOS_INLINE_FUNCTION bool has_first(Index i) const { return heads(i) != list_end; }
  KOKKOS_INLINE_FUNCTION int& first(Index i) const { return pool(heads(i)).j; }
};
struct CompressedAccessForFault {
  Rows rows;
  KOKKOS_INLINE_FUNCTION bool has_first(Index i) const { return rows.row_size(i) > 0; }
  KOKKOS_INLINE_FUNCTION int& first(Index i) const { return rows(i, 0); }
};
template <class Dynamic>
struct DynamicAccessForFault {
  Dynamic lists;
  KOKKOS_INLINE_FUNCTION bool has_first(Index i) const { return lists.row_size(i) > 0; }
  KOKKOS_INLINE_FUNCTION int& first(Index i) const { return lists(i, 0); }
};

template <class Access>
void inject_fault(const Access& a, Index row, bool self, Index elements) {
  Kokkos::parallel_for(
      "contact::inject_fault", Range(0, 1), KOKKOS_LAMBDA(const Index) {
        if (a.has_first(row)) a.first(row) = corrupted(a.first(row), row, self, elements);
      });
}

// A pair the search misses, in every storage alike (inject_fault: search):
// element j leaves the cell lists, element 0 taking its place, which a pair
// search never reports (a pair is reported from its lower id). Every pair
// (k, j) with k < j is then lost from both rows, symmetrically: the
// storages agree, the structure holds, the forced-overflow rows (built by
// the same search) agree; only a check of those rows against an
// independent search sees it.
inline void drop_from_cells(const CellLists& cl, int j) {
  const auto items = cl.items;
  Kokkos::parallel_for(
      "contact::inject_fault::search", Range(0, cl.entries), KOKKOS_LAMBDA(const Index k) {
        if (items(k) == j) items(k) = 0;
      });
}

// The element for that fault: of B's bottom layer, from its middle on, the
// first one with partners of lower id whose row and whose partners' rows
// (the rows the fault changes) are none of `avoid` (the sampled rows).
// Returns it and the number of rows changed.
template <class HostBoxes>
std::pair<Index, std::int64_t> choose_search_fault(const MeshShape& s, const HostBoxes& boxes,
                                                   const std::vector<Index>& avoid) {
  const Index layer = 4 * Index(s.n) * s.n;
  const Index middle = s.n + 2 * Index(s.n) * s.n;
  std::pair<Index, std::int64_t> fallback{-1, 0};
  for (Index t = 0; t < layer && t < 256; ++t) {
    const Index j = s.elements_a + (middle + t) % layer;
    int a[6];
    for (int d = 0; d < 6; ++d) a[d] = boxes(j, d);
    std::vector<Index> changed{j};
    for (Index k = 0; k < j; ++k) {
      int b[6];
      for (int d = 0; d < 6; ++d) b[d] = boxes(k, d);
      if (overlap(a, b)) changed.push_back(k);
    }
    if (changed.size() < 2) continue;
    const auto count = static_cast<std::int64_t>(changed.size());
    if (fallback.first < 0) fallback = {j, count};
    const bool seen = std::any_of(changed.begin(), changed.end(), [&](Index c) {
      return std::find(avoid.begin(), avoid.end(), c) != avoid.end();
    });
    if (!seen) return {j, count};
  }
  return fallback;
}

}  // namespace karma::contact
