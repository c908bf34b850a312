// karma-matvec's deck: its keys (the schema --help prints and the run rules
// read) and the run's Config read from them, with the checks that need
// more than one key, the number of ranks or the build's BLAS.
#pragma once

#include "matvec_blas.hpp"
#include "matvec_kernels.hpp"

#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::matvec {

enum class Blas { none, cblas, cublas };

struct Config {
  bool csr = false;
  bool transpose = false;
  bool strong = false;
  Layout layout = Layout::right;
  Precision precision = Precision::double_;
  std::int64_t m_global = 0, m_local = 0, row0 = 0, n = 0;
  std::vector<const matvec::VariantSpec*> variants;  // in table order
  Blas blas = Blas::none;
  std::uint64_t seed = 0;
  int team_size = 0, vector_length = 0, rows_per_thread = 0;
  std::int64_t column_blocks = 0, block_rows = 0;
  bool laplacian = false;
  double density = 0;
  std::vector<std::int64_t> grid;  // global
  std::int64_t rounds = 1;         // matvec.rounds
};

inline constexpr bool device_is_gpu = is_gpu_space<DefaultSpace>();

inline std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& v : variant_table) names.push_back(v.name);
  return names;
}

// Every kernel karma-matvec measures (karma/kernel_table.hpp): the Kokkos
// variants on a dense array or CSR, the BLAS libraries and the exchanges
// of x and y, all one work, the product, each in GB/s.
inline KernelTable matvec_kernels() {
  KernelTable t;
  t.fields["scheme"] = variant_names();
  t.fields["csr_scheme"] = {"row-per-thread", "team-per-row"};  // mdrange needs a dense array
  t.fields["t"] = {"s", "d"};
  t.fields["exchange"] = {"allgatherv-x", "allreduce-y"};
  t.kernels = {{"{scheme}", {"kokkos"}, "{scheme}", "product", "GB/s", "bytes"},
               {"csr-{csr_scheme}", {"kokkos"}, "{csr_scheme}", "product", "GB/s", "bytes"},
               {"cblas-{t}gemv", {"cblas"}, "{t}gemv", "product", "GB/s", "bytes"},
               {"cublas-{t}gemv", {"cublas"}, "{t}gemv", "product", "GB/s", "bytes"},
               {"{exchange}", {"mpi", "nccl"}, "{exchange}", "product", "GB/s", "bytes"}};
  return t;
}

inline Schema matvec_schema() {
  Schema s;
  s.integer("matvec.m", 16384,
            "rows of A: per rank with weak scaling, in all with strong (2^k is accepted)", 1);
  s.integer("matvec.n", 16384, "columns of A", 1);
  s.choice("matvec.layout", "right", {"left", "right"},
           "layout of the dense A: left (column-major, Fortran) or right (row-major, C)");
  s.boolean("matvec.transpose", false, "compute y = A^T x instead of y = A x (dense only)");
  s.choice("matvec.format", "dense", {"dense", "csr"},
           "dense: an m x n array; csr: compressed rows in the core's RaggedRight");
  s.choice_list("matvec.variant", variant_names(), variant_names(),
                "Kokkos kernels to run: row-per-thread (RangePolicy over rows), team-per-row "
                "(TeamPolicy, vector lanes over a row), mdrange (2D blocks of rows x columns; "
                "dense only)");
  s.choice_list("matvec.implementation", {"kokkos", "blas"}, {"kokkos", "blas", "cblas", "cublas"},
                "what to run: kokkos (the variants), blas (the vendor GEMV for the device: cuBLAS "
                "on a GPU, CBLAS on a CPU), or cblas / cublas by name; dense only for BLAS");
  s.choice("matvec.precision", "double", {"float", "double"}, "element type");
  s.choice("matvec.scaling", "weak", {"weak", "strong"},
           "weak: m rows per rank; strong: m rows in all, split over the ranks");
  s.integer("matvec.seed", 2019, "seed of the random entries of A and x", 0);
  s.integer("matvec.team_size", 0, "team-per-row: rows per team (0: chosen for the device)", 0,
            1024);
  s.integer("matvec.vector_length", 0,
            "team-per-row: vector lanes per row, a power of two (0: chosen for the device)", 0,
            1024);
  s.integer("matvec.rows_per_thread", 0,
            "team-per-row (dense): rows each team thread reduces at once, sharing loads of x: "
            "1, 2, 4 or 8 (0: chosen for the device)",
            0, 8);
  s.integer("matvec.column_blocks", 0,
            "mdrange: column blocks, whose partial sums a second pass adds (0: chosen for the "
            "device)",
            0);
  s.integer("matvec.block_rows", 0,
            "mdrange on a CPU: rows of B per work item (0: chosen for the CPU); a GPU thread "
            "takes one row (on CUDA often a 16-byte unit of rows), so a nonzero value in a GPU "
            "build is a deck error",
            0);
  s.choice("matvec.pattern", "random", {"random", "laplacian"},
           "csr: random (each entry present with probability `density`) or laplacian (the "
           "5-point 2D or 7-point 3D finite-difference Laplacian on `grid`)");
  s.number("matvec.density", 0.001, "csr with pattern random: fraction of entries present", 0, 1);
  s.integer_list("matvec.grid", {128, 128, 128},
                 "csr with pattern laplacian: grid points [nx, ny] or [nx, ny, nz]; per rank "
                 "with weak scaling (the ranks' grids are stacked along the last extent)",
                 {2, 3}, 1);
  s.integer("matvec.rounds", 1,
            "split the repetitions into this many turns of every implementation (warm-ups in "
            "the first), so that on a shared machine all see the same conditions",
            1);
  s.run_section(20, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(Rule::axis, {"matvec.layout", "matvec.transpose", "matvec.precision"});
  s.rule(Rule::tuning,
         {"matvec.variant", "matvec.implementation", "matvec.team_size", "matvec.vector_length",
          "matvec.rows_per_thread", "matvec.column_blocks", "matvec.block_rows", "matvec.rounds"});
  s.faults({{"y-entry",
             "after each implementation's runs, before its y is checked, 4 tolerances added to "
             "the middle entry of y that the last rank checks"}});
  s.retired("matvec.corrupt", "use run.inject_fault: y-entry", false);
  return s;
}

// a * b, or a deck error naming `key` when the product overflows 64 bits.
inline std::int64_t multiply_checked(const Deck& deck, const std::string& key, std::int64_t a,
                                     std::int64_t b, const std::string& what,
                                     const std::string& overflows = "overflows 64-bit indices") {
  const auto out = checked_product(a, b);
  if (!out)
    deck.fail(key, what + " = " + std::to_string(a) + " x " + std::to_string(b) + " " + overflows);
  return *out;
}

// The extents of A, all ranks' (the Laplacian's grid points, or m x n) and
// this rank's block of rows; a deck error where a count overflows 64 bits.
inline void read_extents(const Deck& deck, Config& c) {
  const std::int64_t ranks = comm::size(), rank = comm::rank();
  const std::int64_t element_bytes = c.precision == Precision::single ? 4 : 8;
  if (c.csr && c.laplacian) {
    c.grid = deck.integer_list("matvec.grid");
    if (!c.strong)
      c.grid.back() =
          multiply_checked(deck, "matvec.grid", c.grid.back(), ranks,
                           "the last grid extent over " + std::to_string(ranks) + " ranks");
    std::int64_t points = 1;
    for (auto g : c.grid) points = multiply_checked(deck, "matvec.grid", points, g, "grid points");
    multiply_checked(deck, "matvec.grid", points, 7 * (element_bytes + 8),
                     "bytes of the Laplacian's entries", "overflows 64 bits");
    c.m_global = c.n = points;
    if (c.m_global < ranks)
      deck.fail("matvec.grid", "the grid has " + std::to_string(points) +
                                   " points, fewer than the " + std::to_string(ranks) + " ranks");
  } else {
    const std::int64_t m = deck.integer("matvec.m");
    c.n = deck.integer("matvec.n");
    if (c.strong) {
      if (m < ranks)
        deck.fail("matvec.m", "strong scaling splits the " + std::to_string(m) + " rows over " +
                                  std::to_string(ranks) + " ranks: need at least one each");
      c.m_global = m;
    } else {
      c.m_global = multiply_checked(deck, "matvec.m", m, ranks,
                                    "rows over " + std::to_string(ranks) + " ranks");
    }
    // Every entry of A must have a 64-bit position, and the dense array a
    // countable number of bytes.
    const std::int64_t entries = multiply_checked(deck, "matvec.n", c.m_global, c.n, "m x n");
    if (!c.csr)
      multiply_checked(deck, "matvec.n", entries, element_bytes, "bytes of A", "overflows 64 bits");
  }
  const auto [first, count] = block_of(c.m_global, ranks, rank);
  c.row0 = first;
  c.m_local = count;
}

// Implementations: the Kokkos variants (in table order) and at most one
// BLAS. Format csr has neither BLAS nor mdrange: it leaves them out of the
// defaults, and a deck that names them is in error.
inline void read_implementations(const Deck& deck, Config& c) {
  const auto implementations = deck.string_list("matvec.implementation");
  const bool run_kokkos =
      std::find(implementations.begin(), implementations.end(), "kokkos") != implementations.end();
  for (const auto& name : implementations) {
    if (name == "kokkos") continue;
    if (c.csr) {
      if (deck.is_default("matvec.implementation")) continue;
      deck.fail("matvec.implementation",
                "'" + name +
                    "' has no sparse reference: format csr runs only 'kokkos' (checked "
                    "against the host reference)");
    }
    Blas b = Blas::none;
    if (name == "cblas" || (name == "blas" && !device_is_gpu)) {
      if (device_is_gpu)
        deck.fail("matvec.implementation",
                  "'cblas' multiplies host memory, but this build runs on a GPU: use 'cublas' or "
                  "'blas'");
      if (!blas::have_cblas())
        deck.fail("matvec.implementation", "'" + name +
                                               "' needs CBLAS, which this build did not find "
                                               "(install libopenblas-dev and reconfigure)");
      b = Blas::cblas;
    } else {
      if (!blas::have_cublas())
        deck.fail("matvec.implementation",
                  "'" + name + "' needs cuBLAS, which only a CUDA build has");
      b = Blas::cublas;
    }
    if (c.blas != Blas::none && c.blas != b)
      deck.fail("matvec.implementation", "name one BLAS at most");
    if (c.blas == b) deck.fail("matvec.implementation", "'" + name + "' names the same BLAS twice");
    c.blas = b;
  }
  if (run_kokkos) {
    const auto chosen = deck.string_list("matvec.variant");
    for (const auto& v : variant_table) {
      if (std::find(chosen.begin(), chosen.end(), v.name) == chosen.end()) continue;
      if (c.csr && v.variant == Variant::mdrange) {
        if (deck.is_default("matvec.variant")) continue;
        deck.fail("matvec.variant",
                  "'mdrange' blocks a dense array's columns; format csr has row-per-thread and "
                  "team-per-row");
      }
      c.variants.push_back(&v);
    }
  }
  if (c.variants.empty() && c.blas == Blas::none)
    deck.fail("matvec.implementation", "nothing to run");
}

inline Config read_config(const Deck& deck) {
  Config c;
  c.csr = deck.string("matvec.format") == "csr";
  c.transpose = deck.boolean("matvec.transpose");
  c.strong = deck.string("matvec.scaling") == "strong";
  c.layout = layout_from_string(deck.string("matvec.layout"));
  c.precision = precision_from_string(deck.string("matvec.precision"));
  c.seed = static_cast<std::uint64_t>(deck.integer("matvec.seed"));
  c.team_size = static_cast<int>(deck.integer("matvec.team_size"));
  c.vector_length = static_cast<int>(deck.integer("matvec.vector_length"));
  c.rows_per_thread = static_cast<int>(deck.integer("matvec.rows_per_thread"));
  if (c.rows_per_thread == 3 || (c.rows_per_thread > 4 && c.rows_per_thread < 8))
    deck.fail("matvec.rows_per_thread",
              "must be 0 (automatic), 1, 2, 4 or 8, got " + std::to_string(c.rows_per_thread));
  c.column_blocks = deck.integer("matvec.column_blocks");
  c.block_rows = deck.integer("matvec.block_rows");
  if (device_is_gpu && c.block_rows != 0)
    deck.fail("matvec.block_rows",
              "sets a CPU's work items; a GPU thread takes one row or a 16-byte unit");
  c.laplacian = deck.string("matvec.pattern") == "laplacian";
  c.density = deck.number("matvec.density");
  c.rounds = deck.integer("matvec.rounds");

  if (c.csr && c.transpose)
    deck.fail("matvec.transpose",
              "y = A^T x is not implemented for format: csr (it would need a compressed-column "
              "copy or atomics); use format: dense");
  read_extents(deck, c);
  read_implementations(deck, c);

  using TeamPolicy = Kokkos::TeamPolicy<DefaultSpace>;
  if (c.vector_length > 0) {
    const int max = TeamPolicy::vector_length_max();
    if ((c.vector_length & (c.vector_length - 1)) != 0 || c.vector_length > max)
      deck.fail("matvec.vector_length", "must be a power of two no larger than " +
                                            std::to_string(max) + " on this device, got " +
                                            std::to_string(c.vector_length));
  }
  return c;
}

}  // namespace karma::matvec
