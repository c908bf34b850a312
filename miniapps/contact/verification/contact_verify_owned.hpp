// The checks of a partitioned run's rows, which are a rank's own elements'
// (rows hold global ids; a partner may be another rank's element): every
// row against the mesh's structure with boxes computed from the nodes (not
// the exchanged ones), the structure rules within the rank, and the halves
// of the pairs that cross ranks, which the ranks add up and compare.
#pragma once

#include "verification/contact_verify.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma::contact {

// Any element's box straight from the nodes: what the check of every row
// compares with, independent of the ghost exchange.
struct BoxesFromNodes {
  int n;
  Index elements_a, nodes_a;
  Coords xyz;
  int b_z;
  KOKKOS_INLINE_FUNCTION void operator()(const Index j, int b[6]) const {
    element_box(n, elements_a, nodes_a, xyz, b_z, j, b);
  }
};

// The owned rows (sorted; row k is element ids(k)) against the search over
// the mesh's structure, and the own boxes (`boxes`, as exchanged and
// searched) against the nodes and their elements' widened cubes.
inline MeshCheck owned_mesh_rows_wrong(const MeshShape& shape, std::int64_t b_z, const Coords& xyz,
                                       const Boxes& boxes, const Kokkos::View<int*, Memory>& ids,
                                       const Rows& r) {
  const MeshGeometry g{shape.n, shape.elements_a, shape.elements, b_z};
  const BoxesFromNodes box_of{shape.n, shape.elements_a, shape.nodes_a, xyz, static_cast<int>(b_z)};
  MeshCheck out;
  const Index rows = r.num_rows();
  Kokkos::parallel_reduce(
      "contact::verify::owned_box_bounds", Range(0, rows),
      KOKKOS_LAMBDA(const Index k, std::int64_t& outside) {
        int a[6];
        box_of(ids(k), a);
        bool same = true;
        for (int d = 0; d < 6; ++d) same = same && a[d] == boxes(k, d);
        outside += same && box_inside(g, ids(k), a) ? 0 : 1;
      },
      out.boxes_outside);
  Kokkos::parallel_reduce(
      "contact::verify::owned_mesh_rows", Range(0, rows),
      KOKKOS_LAMBDA(const Index k, std::int64_t& wrong) {
        int a[6];
        box_of(ids(k), a);
        wrong += mesh_row_right(g, ids(k), a, box_of, r, k) ? 0 : 1;
      },
      out.rows_wrong);
  return out;
}

// What the owned rows say about the pairs that cross ranks, and the pairs
// this rank counts: each pair is counted once, by the owner of its lower
// global id. Summed over ranks, the halves `up` (own i < other j) and
// `down` (own i > other j) must be equal, count and hash: every crossing
// pair is held by both its elements' owners, once each.
struct CrossRanks {
  std::int64_t up = 0, down = 0, owner_pairs = 0;
  std::uint64_t up_hash = 0, down_hash = 0;
};

// Structure errors of the sorted owned rows (ids: their global ids, in
// increasing order): out of range, self, duplicate, and a partner owned
// here whose row lacks the element; and the crossing halves.
inline StructureErrors owned_structure_errors(const Rows& r, const Kokkos::View<int*, Memory>& ids,
                                              Index elements, CrossRanks& cross) {
  const Index n = r.num_rows();
  Kokkos::View<std::int64_t[7], Memory> counts("contact::verify::owned_structure");
  Kokkos::View<std::uint64_t[2], Memory> hashes("contact::verify::cross_hashes");
  const auto values = r.values();
  Kokkos::parallel_for(
      "contact::verify::owned_structure", Range(0, n), KOKKOS_LAMBDA(const Index k) {
        const Index i = ids(k);
        const std::int64_t begin = r.begin(k), end = r.end(k);
        for (std::int64_t e = begin; e < end; ++e) {
          const Index j = values(e);
          if (j < 0 || j >= elements) {
            Kokkos::atomic_add(&counts(0), std::int64_t{1});
            continue;
          }
          if (j == i) Kokkos::atomic_add(&counts(1), std::int64_t{1});
          if (e > begin && values(e - 1) == j) Kokkos::atomic_add(&counts(2), std::int64_t{1});
          const Index m = find_sorted(ids, 0, n, j);
          if (m >= 0) {
            // Own partner: row m holds i; the pair is counted from its lower id.
            if (find_sorted(values, r.begin(m), r.end(m), i) < 0)
              Kokkos::atomic_add(&counts(3), std::int64_t{1});
            if (i < j) Kokkos::atomic_add(&counts(6), std::int64_t{1});
          } else if (i < j) {
            Kokkos::atomic_add(&counts(4), std::int64_t{1});
            Kokkos::atomic_add(&hashes(0), pair_hash(i, j));
            Kokkos::atomic_add(&counts(6), std::int64_t{1});
          } else {
            Kokkos::atomic_add(&counts(5), std::int64_t{1});
            Kokkos::atomic_add(&hashes(1), pair_hash(j, i));
          }
        }
      });
  const auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, hashes);
  StructureErrors errors;
  errors.out_of_range = c(0);
  errors.self = c(1);
  errors.duplicates = c(2);
  errors.asymmetric = c(3);
  cross.up = c(4);
  cross.down = c(5);
  cross.owner_pairs = c(6);
  cross.up_hash = h(0);
  cross.down_hash = h(1);
  return errors;
}

}  // namespace karma::contact
