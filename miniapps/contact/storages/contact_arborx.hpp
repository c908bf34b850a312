// The peer: ArborX's spatial query over the same element boxes, as a fourth
// storage (`arborx`) beside karma's three, so that its rows go through the
// same checks and row statistics. Its rebuild is ArborX's own: a bounding
// volume hierarchy built over the boxes (the storage's "search" phase,
// `tree` in the results), then one intersection query per row into
// compressed rows ("fill", `query`); karma's cell binning is not part of
// it. Built only with ArborX (-DKARMA_ENABLE_ARBORX=ON): main.cpp includes
// this header under KARMA_HAVE_ARBORX.
#pragma once

#include "storages/contact_storages.hpp"

#include <ArborX.hpp>
#include <ArborX_Version.hpp>
#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace karma::contact {

// The first `count` boxes as ArborX boxes. The fixed-point integers convert
// exactly: float holds every integer up to 2^24, double up to 2^53.
template <class Coordinate>
struct ArborBoxes {
  Boxes boxes;
  Index count = 0;
};

// One intersection query per row: the boxes of elements [0, rows).
template <class Coordinate>
struct ArborQueries {
  Boxes boxes;
  Index rows = 0;
};

template <class Coordinate>
KOKKOS_INLINE_FUNCTION ArborX::Box<3, Coordinate> arbor_box(const Boxes& b, Index i) {
  using P = ArborX::Point<3, Coordinate>;
  return {P{static_cast<Coordinate>(b(i, 0)), static_cast<Coordinate>(b(i, 1)),
            static_cast<Coordinate>(b(i, 2))},
          P{static_cast<Coordinate>(b(i, 3)), static_cast<Coordinate>(b(i, 4)),
            static_cast<Coordinate>(b(i, 5))}};
}

// Every match but the query's own element, as its global element id: the
// row karma's storages hold.
struct OtherElements {
  Kokkos::View<int*, Memory> ids;  // empty: the index is the id
  template <class Predicate, class Value, class Out>
  KOKKOS_INLINE_FUNCTION void operator()(const Predicate& query, const Value& match,
                                         const Out& out) const {
    const int j = match.index;
    if (j != ArborX::getData(query)) out(ids.extent(0) > 0 ? ids(j) : j);
  }
};

}  // namespace karma::contact

template <class Coordinate>
struct ArborX::AccessTraits<karma::contact::ArborBoxes<Coordinate>> {
  using memory_space = karma::contact::Memory;
  static KOKKOS_FUNCTION std::size_t size(const karma::contact::ArborBoxes<Coordinate>& b) {
    return static_cast<std::size_t>(b.count);
  }
  static KOKKOS_FUNCTION auto get(const karma::contact::ArborBoxes<Coordinate>& b, std::size_t i) {
    return karma::contact::arbor_box<Coordinate>(b.boxes, static_cast<karma::contact::Index>(i));
  }
};

template <class Coordinate>
struct ArborX::AccessTraits<karma::contact::ArborQueries<Coordinate>> {
  using memory_space = karma::contact::Memory;
  static KOKKOS_FUNCTION std::size_t size(const karma::contact::ArborQueries<Coordinate>& q) {
    return static_cast<std::size_t>(q.rows);
  }
  static KOKKOS_FUNCTION auto get(const karma::contact::ArborQueries<Coordinate>& q,
                                  std::size_t i) {
    return ArborX::intersects(
        karma::contact::arbor_box<Coordinate>(q.boxes, static_cast<karma::contact::Index>(i)));
  }
};

namespace karma::contact {

template <class Coordinate>
struct ArborRows {
  using Tree =
      ArborX::BoundingVolumeHierarchy<Memory,
                                      ArborX::PairValueIndex<ArborX::Box<3, Coordinate>, int>>;
  Tree tree;
  Kokkos::View<std::int64_t*, Memory> offsets{"contact::arborx::offsets", 0};
  Kokkos::View<int*, Memory> values{"contact::arborx::values", 0};
  RaggedRight<int, Memory> rows;
};

// What the tree holds: a leaf per box (the box and its index) and an
// internal node per pair of children (a box and two links); ArborX does not
// report its own footprint, so this is counted from its node types.
template <class Coordinate>
std::int64_t tree_bytes(Index boxes) {
  const std::int64_t leaf = sizeof(ArborX::PairValueIndex<ArborX::Box<3, Coordinate>, int>);
  const std::int64_t internal = sizeof(ArborX::Box<3, Coordinate>) + 2 * sizeof(int);
  return boxes * leaf + (boxes > 0 ? boxes - 1 : 0) * internal;
}

template <class Coordinate>
NeighbourStorage arborx_storage_of(int lanes) {
  auto a = std::make_shared<ArborRows<Coordinate>>();
  NeighbourStorage s;
  s.kind = Storage::arborx;
  s.name = name_of(s.kind);
  s.implementation = "arborx";
  s.uses_cells = false;
  s.build_code = {"karma::contact::ArborRows", "karma::contact::ArborBoxes",
                  "karma::contact::ArborQueries", "karma::contact::OtherElements"};
  s.stats_code = {"karma::contact::array_row_stats", "karma::contact::CompressedAccess"};
  s.build = [a](const Search& search, const Phase& phase, StorageRecord& rec) {
    const Exec space;
    phase("search", [&] {
      a->tree = typename ArborRows<Coordinate>::Tree(
          space, ArborX::Experimental::attach_indices<int>(
                     ArborBoxes<Coordinate>{search.boxes, search.elements}));
    });
    phase("fill", [&] {
      a->tree.query(space,
                    ArborX::Experimental::attach_indices<int>(
                        ArborQueries<Coordinate>{search.boxes, search.rows}),
                    OtherElements{search.ids}, a->values, a->offsets);
      a->rows = RaggedRight<int, Memory>(a->offsets, a->values);
    });
    rec.final_capacity = static_cast<std::int64_t>(a->values.extent(0));
  };
  s.row_stats = [a, lanes](const RowStats& out) {
    array_row_stats(CompressedAccess{a->rows}, out, lanes);
  };
  s.bytes = [a] {
    return static_cast<std::int64_t>(a->offsets.span() * sizeof(std::int64_t) +
                                     a->values.span() * sizeof(int)) +
           tree_bytes<Coordinate>(static_cast<Index>(a->tree.size()));
  };
  s.overflowed_rows = [] { return std::int64_t{0}; };
  s.signatures = [a](const Signatures& out) { array_signatures(CompressedAccess{a->rows}, out); };
  s.sorted_rows = [a] { return canonical(a->rows); };
  s.structure_bytes = [](double rows, double entries) { return 8 * (rows + 1) + 4 * entries; };
  s.inject = [a](Index row, bool self, Index elements) {
    inject_fault(CompressedAccessForFault{a->rows}, row, self, elements);
  };
  return s;
}

inline NeighbourStorage arborx_storage(bool float_exact, int lanes) {
  return float_exact ? arborx_storage_of<float>(lanes) : arborx_storage_of<double>(lanes);
}

// What the results record of the peer.
inline nlohmann::json arborx_json(bool float_exact) {
  return {{"version", ArborX::version()},
          {"git", ArborX::gitCommitHash()},
          {"coordinates", float_exact ? "float" : "double"},
          {"coordinates_why",
           "the fixed-point integers, exact in float while every coordinate is below 2^24"},
          {"tree", "ArborX::BoundingVolumeHierarchy over the boxes in use, built every step"},
          {"query",
           "one ArborX::intersects query per row, ArborX's default traversal, into compressed "
           "rows through a callback that leaves out the query's own element"}};
}

}  // namespace karma::contact
