// Storage 2: compressed rows, two passes (count, scan, fill).
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

// --- storage 2: compressed rows, two passes (count, scan, fill) ------------------

struct CountSink {
  int n = 0;
  KOKKOS_INLINE_FUNCTION void add(int, int, bool) { ++n; }
};

struct RowSink {
  int* out;
  KOKKOS_INLINE_FUNCTION void add(int, int id, bool) { *out++ = id; }
};

// Pairs: row i's own count is kept locally, row j's counted atomically.
struct CountPairSink {
  Kokkos::View<int*, Memory> sizes;
  int n;
  KOKKOS_INLINE_FUNCTION void add(int j, int, bool j_row) {
    ++n;
    if (j_row) Kokkos::atomic_add(&sizes(j), 1);
  }
};

// Pairs: a cursor per row (the sizes, counted up again from zero).
struct FillPairSink {
  Kokkos::View<std::int64_t*, Memory> offsets;
  Kokkos::View<int*, Memory> cursor;
  Kokkos::View<int*, Memory> values;
  int i, id_i;
  KOKKOS_INLINE_FUNCTION void add(int j, int id_j, bool j_row) const {
    values(offsets(i) + Kokkos::atomic_fetch_add(&cursor(i), 1)) = id_j;
    if (j_row) values(offsets(j) + Kokkos::atomic_fetch_add(&cursor(j), 1)) = id_i;
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
          FillPairSink sink{offsets, sizes, values, static_cast<int>(i), search.id(i)};
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

}  // namespace karma::contact
