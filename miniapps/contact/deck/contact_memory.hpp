// Memory bounds from the geometry, before anything is allocated: the run is
// refused up front rather than failing half way through.
#pragma once

#include "deck/contact_config.hpp"

#include "karma/error.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace karma::contact {

struct Estimate {
  std::int64_t entries_bound = 0;  // neighbour entries (2 per pair) at any step
  std::int64_t max_row_bound = 0;
  std::int64_t cells = 0;
  std::int64_t cell_items_bound = 0;
  std::uint64_t shared = 0, verification = 0, total = 0;
  std::uint64_t storage[4] = {0, 0, 0, 0};
};

inline Estimate estimate(const Config& c) {
  const MeshShape& s = c.shape;
  const std::int64_t n = c.n, N = s.elements;
  Estimate e;
  // Box extents: an element plus its nodes' perturbation and the inflation.
  const std::int64_t box_a = h_a + 2 * (perturb_a + inflate),
                     box_b = h_b + 2 * (perturb_b + inflate);
  // Within a block a box reaches only its 26 neighbours (the perturbation
  // and inflation, 0.25 h, are less than half an element). Across blocks:
  const std::int64_t a_sees_b = (box_a + box_b) / h_b + 1, b_sees_a = (box_a + box_b) / h_a + 1;
  // Layers that can touch the other block at the deepest position.
  const std::int64_t deepest = std::min(b_bottom(c.n, first_step(c)), b_bottom(c.n, last_step(c)));
  const std::int64_t b_low = deepest - perturb_b - inflate;
  const std::int64_t a_top = n * h_a + perturb_a + inflate;
  const std::int64_t layers_a =
      std::clamp<std::int64_t>(n - floor_divide(b_low - perturb_a - inflate, h_a) + 1, 0, n);
  const std::int64_t layers_b =
      a_top < b_low ? 0 : std::clamp<std::int64_t>(floor_divide(a_top - b_low, h_b) + 2, 0, n);
  e.entries_bound = 26 * N + layers_a * n * n * a_sees_b * a_sees_b * a_sees_b +
                    layers_b * 4 * n * n * b_sees_a * b_sees_a * b_sees_a;
  e.max_row_bound = 26 + (layers_a > 0 ? a_sees_b * a_sees_b * a_sees_b : 0);
  // Cells: the grid is largest at the first or the last position.
  const Grid g0 = make_grid(c.n, b_bottom(c.n, first_step(c)), c.cell);
  const Grid g1 = make_grid(c.n, b_bottom(c.n, last_step(c)), c.cell);
  e.cells = std::max(g0.cells, g1.cells);
  auto per_dim = [&](std::int64_t extent) { return extent / c.cell + 2; };
  const std::int64_t ca = per_dim(box_a), cb = per_dim(box_b);
  e.cell_items_bound = s.elements_a * ca * ca * ca + s.elements_b * cb * cb * cb;

  const std::uint64_t N8 = static_cast<std::uint64_t>(N);
  const std::uint64_t E = static_cast<std::uint64_t>(e.entries_bound);
  const std::uint64_t first = N8 * static_cast<std::uint64_t>(c.capacity);
  e.shared = static_cast<std::uint64_t>(s.nodes) * 12 + N8 * 24 +
             static_cast<std::uint64_t>(e.cells) * 12 + 8 +
             static_cast<std::uint64_t>(e.cell_items_bound) * 8 +  // sorted and as filled
             N8 * 32;                                              // + row statistics
  const std::uint64_t dynamic_rows =
      N8 * 8 + N8 * 4 * static_cast<std::uint64_t>(std::max(c.capacity, e.max_row_bound));
  for (Storage st : c.storages) {
    const int k = static_cast<int>(st);
    // Growth makes every stripe as large as the fullest one: room for 25%
    // imbalance and a few rows per stripe.
    if (st == Storage::linked_list)
      e.storage[k] = N8 * 4 + 8 * std::max(first, E + (c.list_stripes > 1 ? E / 4 : 0)) +
                     8 * static_cast<std::uint64_t>(c.list_stripes) *
                         (stripe_pad + 4 * static_cast<std::uint64_t>(e.max_row_bound));
    if (st == Storage::csr) e.storage[k] = N8 * 12 + 8 + 4 * std::max(first, E);
    if (st == Storage::dynamic) e.storage[k] = dynamic_rows;
    // ArborX: its tree (a leaf and an internal node per box, at most 64 B
    // with double coordinates), the construction's and the query's sort keys
    // and permutations (16 B each a box), counts, offsets and a copy of them
    // (24 B), the compressed rows (4 B an entry).
    if (st == Storage::arborx) e.storage[k] = N8 * (64 + 32 + 24) + 8 + 4 * E;
  }
  // The first storage's rows sorted (and the row sizes on the way), two
  // sets of row signatures, and the capacity-8 rows of the overflow check.
  e.verification =
      (N8 * 8 + 8 + E * 4) + N8 * 8 + 2 * N8 * 16 +
      (c.overflow_check ? N8 * 8 + N8 * 4 * static_cast<std::uint64_t>(e.max_row_bound) : 0);
  e.total = e.shared + e.verification;
  for (std::uint64_t b : e.storage) e.total += b;
  return e;
}

// Refuses, on every rank, a problem whose counts the kernels cannot hold.
inline void refuse_uncountable(const Config& cfg, const Estimate& est) {
  if (est.max_row_bound >= max_row_for_int_sum)
    throw Error(exit_runtime_error,
                "rows of up to " + std::to_string(est.max_row_bound) +
                    " entries: the statistics' 32-bit sums could overflow",
                /*collective=*/true);
  const bool want_ll = has_storage(cfg, Storage::linked_list);
  const std::uint64_t first_pool =
      static_cast<std::uint64_t>(cfg.shape.elements) * static_cast<std::uint64_t>(cfg.capacity);
  const std::uint64_t most = std::max(static_cast<std::uint64_t>(est.entries_bound), first_pool);
  // ArborX counts its results in an int.
  if (has_storage(cfg, Storage::arborx) && est.entries_bound > std::numeric_limits<int>::max())
    throw Error(exit_runtime_error,
                "arborx: the rows could hold " + std::to_string(est.entries_bound) +
                    " entries; ArborX counts its results in a 32-bit int: run a smaller n",
                /*collective=*/true);
  if (want_ll && most >= max_pool)
    throw Error(exit_runtime_error,
                "the linked-list pool could need " + std::to_string(most) +
                    " nodes; its node indices are 32-bit (at most " + std::to_string(max_pool - 1) +
                    "): run a smaller n or capacity, or without linked-list",
                /*collective=*/true);
}

}  // namespace karma::contact
