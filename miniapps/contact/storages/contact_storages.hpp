// The three neighbour-list storages behind one interface, so that the
// mini-app's step loop is written once: build from a search (its timed
// phases), row statistics, bytes, the checks' views of the rows (signatures,
// sorted rows), overflow handling and the injected faults. Each storage is
// made by one function, which owns its arrays.
#pragma once

#include "storages/contact_row_stats.hpp"
#include "verification/contact_verify.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace karma::contact {

// arborx: the peer library's query, in builds with ArborX (contact_arborx.hpp).
enum class Storage { linked_list, csr, dynamic, arborx };

// The deck's names, in the order of Storage.
inline const std::vector<std::string> storage_names = {"linked-list", "csr-two-pass",
                                                       "dynamic-ragged", "arborx"};
// karma's own storages, all before the peer: the deck's default.
inline const std::vector<std::string> karma_storage_names(storage_names.begin(),
                                                          storage_names.begin() +
                                                              static_cast<int>(Storage::arborx));

#ifdef KARMA_HAVE_ARBORX
inline constexpr bool have_arborx = true;
#else
inline constexpr bool have_arborx = false;
#endif
inline const char* name_of(Storage s) { return storage_names[static_cast<int>(s)].c_str(); }

// One reallocation of a storage's rows: at which step (timed or warm-up),
// the capacity before and after, the storage's bytes after, its time.
struct Grow {
  std::int64_t step = 0;
  bool timed = false;
  std::int64_t from = 0, to = 0, bytes = 0;
  double seconds = 0;
};

// Everything one storage accumulates over the run.
struct StorageRecord {
  std::int64_t overflows = 0, refills = 0, rows_refilled = 0;
  std::int64_t peak_bytes = 0;
  std::int64_t final_capacity = 0;
  std::int64_t first_capacity = 0, largest_row = 0;  // dynamic rows
  std::int64_t rank_peak_bytes = 0, rank_rows = 0;   // the largest rank's
  std::vector<Grow> grows;
  std::int64_t step = 0;  // of the rebuild under way (rebuild() sets them)
  bool timed = false;
  double stats_bytes = 0;  // over all timed sweeps
  std::vector<std::uint64_t> pair_checksums, stats_checksums;
};

// Runs one named phase of a build: timed in the steps, not in the warm-up.
using Phase = std::function<void(const std::string& phase, const std::function<void()>& fn)>;

struct NeighbourStorage {
  Storage kind = Storage::linked_list;
  std::string name;
  std::string implementation = "kokkos";  // the results' implementation field
  bool uses_cells = true;                 // its rebuild includes the shared cell binning
  // The lists of this step from `search`: phase "search" (the pass that
  // fills what fits) and phase "fill" (what overflow handling needs:
  // growing and refilling, or the second pass).
  std::function<void(const Search& search, const Phase& phase, StorageRecord& record)> build;
  std::function<void(const RowStats& out)> row_stats;
  // What build and row_stats run, for the kernels' code versions
  // (karma/code_version.hpp); binning adds itself where uses_cells.
  std::vector<std::string> build_code, stats_code;
  std::function<std::int64_t()> bytes;
  // Rows still past capacity after the build (dynamic rows only can have any).
  std::function<std::int64_t()> overflowed_rows;
  std::function<void(const Signatures& out)> signatures;
  std::function<Rows()> sorted_rows;  // the rows, canonical, for the full checks
  // Bytes one row-statistics sweep reads of the storage's own structure.
  std::function<double(double rows, double entries)> structure_bytes;
  // Corrupts `row`: a self pair or a foreign element (tests of the checks).
  std::function<void(Index row, bool self, Index elements)> inject;
};

// A pool of `entries` list nodes in `stripes` stripes (HOSS).
inline NeighbourStorage linked_list_storage(Index elements, std::int64_t entries, int stripes) {
  auto ll = std::make_shared<LinkedLists>(
      make_lists(elements, static_cast<std::uint64_t>(entries), stripes));
  NeighbourStorage s;
  s.kind = Storage::linked_list;
  s.name = name_of(s.kind);
  s.build_code = {"karma::contact::fill_lists", "karma::contact::grow_pool"};
  s.stats_code = {"karma::contact::list_row_stats"};
  s.build = [ll](const Search& search, const Phase& phase, StorageRecord& rec) {
    PoolUse use;
    phase("search", [&] { use = fill_lists(search, *ll); });
    phase("fill", [&] {
      if (use.largest_stripe <= ll->stripe_size) return;
      if (use.largest_stripe * static_cast<std::uint64_t>(ll->stripes) >= max_pool)
        throw Error(exit_runtime_error, "the linked-list pool needs " +
                                            std::to_string(use.largest_stripe) +
                                            " nodes in each of " + std::to_string(ll->stripes) +
                                            " stripes: more than 32-bit indices reach");
      ++rec.overflows;
      grow_pool(*ll, use.largest_stripe);
      fill_lists(search, *ll);
      ++rec.refills;
    });
    rec.final_capacity = static_cast<std::int64_t>(ll->pool.extent(0));
  };
  s.row_stats = [ll](const RowStats& out) { list_row_stats(*ll, out); };
  s.bytes = [ll] { return bytes_of(*ll); };
  s.overflowed_rows = [] { return std::int64_t{0}; };
  s.signatures = [ll](const Signatures& out) { list_signatures(*ll, out); };
  s.sorted_rows = [ll] { return canonical(*ll); };
  s.structure_bytes = [](double rows, double entries) { return 4 * rows + 8 * entries; };
  s.inject = [ll](Index row, bool self, Index elements) {
    inject_fault(ListAccessForFault{ll->heads, ll->pool}, row, self, elements);
  };
  return s;
}

// Compressed rows in two passes: count, scan, fill; `entries` values first.
inline NeighbourStorage csr_storage(Index elements, std::int64_t entries, int lanes) {
  auto csr = std::make_shared<CompressedRows>();
  csr->sizes = Kokkos::View<int*, Memory>("contact::csr::sizes", elements);
  csr->offsets = Kokkos::View<std::int64_t*, Memory>("contact::csr::offsets", elements + 1);
  csr->buffer = Kokkos::View<int*, Memory>("contact::csr::values", entries);
  NeighbourStorage s;
  s.kind = Storage::csr;
  s.name = name_of(s.kind);
  s.build_code = {"karma::contact::count_rows", "karma::contact::fill_rows"};
  s.stats_code = {"karma::contact::array_row_stats", "karma::contact::CompressedAccess"};
  s.build = [csr](const Search& search, const Phase& phase, StorageRecord& rec) {
    phase("search", [&] { count_rows(search, *csr); });
    phase("fill", [&] {
      const std::size_t before = csr->buffer.extent(0);
      fill_rows(search, *csr);
      if (csr->buffer.extent(0) != before) ++rec.overflows;  // the values buffer grew
    });
    rec.final_capacity = static_cast<std::int64_t>(csr->buffer.extent(0));
  };
  s.row_stats = [csr, lanes](const RowStats& out) {
    array_row_stats(CompressedAccess{csr->rows}, out, lanes);
  };
  s.bytes = [csr] { return bytes_of(*csr); };
  s.overflowed_rows = [] { return std::int64_t{0}; };
  s.signatures = [csr](const Signatures& out) {
    array_signatures(CompressedAccess{csr->rows}, out);
  };
  s.sorted_rows = [csr] { return canonical(csr->rows); };
  s.structure_bytes = [](double rows, double entries) { return 8 * (rows + 1) + 4 * entries; };
  s.inject = [csr](Index row, bool self, Index elements) {
    inject_fault(CompressedAccessForFault{csr->rows}, row, self, elements);
  };
  return s;
}

// Dynamic ragged rows of `capacity` entries each, grown (by `growth` at
// least: grown_capacity) and refilled on overflow; the allocation is kept
// from step to step. Rows of a LayoutLeft array are read one lane each.
template <class Dynamic>
NeighbourStorage dynamic_storage(Index elements, std::int64_t capacity, int lanes, double growth) {
  auto dyn = std::make_shared<Dynamic>("contact::dynamic", elements, capacity);
  Kokkos::deep_copy(dyn->data(), 0);
  auto overflowed = std::make_shared<OverflowedRows>(elements);
  constexpr bool left = std::is_same<typename Dynamic::array_layout, Kokkos::LayoutLeft>::value;
  NeighbourStorage s;
  s.kind = Storage::dynamic;
  s.name = name_of(s.kind);
  s.build_code = {"karma::contact::fill_dynamic", "karma::contact::recover_dynamic"};
  s.stats_code = {"karma::contact::array_row_stats", "karma::contact::DynamicAccess"};
  s.build = [dyn, overflowed, growth, capacity](const Search& search, const Phase& phase,
                                                StorageRecord& rec) {
    phase("search", [&] { fill_dynamic(search, *dyn); });
    phase("fill", [&] {
      const Recovery r = recover_dynamic(search, *dyn, *overflowed, /*over_ranks=*/true, growth);
      rec.largest_row = std::max(rec.largest_row, r.largest);
      if (r.to != r.from) {  // here or on another rank
        ++rec.overflows;
        rec.grows.push_back({rec.step, rec.timed, r.from, r.to,
                             static_cast<std::int64_t>(dyn->footprint_bytes()), r.grow_seconds});
      }
      if (r.refilled == 0) return;
      ++rec.refills;
      rec.rows_refilled += r.refilled;
    });
    rec.first_capacity = capacity;
    rec.final_capacity = dyn->capacity();
  };
  s.row_stats = [dyn, lanes](const RowStats& out) {
    array_row_stats(DynamicAccess<Dynamic>{*dyn}, out, left ? 1 : lanes);
  };
  s.bytes = [dyn, overflowed] {
    return static_cast<std::int64_t>(dyn->footprint_bytes()) + overflowed->bytes();
  };
  s.overflowed_rows = [dyn] { return static_cast<std::int64_t>(dyn->overflowed_rows()); };
  s.signatures = [dyn](const Signatures& out) {
    array_signatures(DynamicAccess<Dynamic>{*dyn}, out);
  };
  s.sorted_rows = [dyn] { return canonical_dynamic(*dyn); };
  s.structure_bytes = [](double rows, double entries) { return 8 * rows + 4 * entries; };
  s.inject = [dyn](Index row, bool self, Index elements) {
    inject_fault(DynamicAccessForFault<Dynamic>{*dyn}, row, self, elements);
  };
  return s;
}

}  // namespace karma::contact
