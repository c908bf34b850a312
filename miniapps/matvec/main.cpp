// karma-matvec: deck -> run -> report. Dense kernels in matvec_kernels.hpp,
// sparse (CSR) ones in csr_kernels.hpp, the vendor references in matvec_blas.hpp;
// the dense product here, the sparse one in csr.cpp, what both share in
// matvec_app.hpp.
#include "matvec_app.hpp"
#include "matvec_blas.hpp"
#include "matvec_csr.hpp"
#include "matvec_kernels.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

namespace {

using namespace karma;
using namespace karma::matvec;  // Config, the timing and the check (matvec_app.hpp)
using matvec::Variant;
namespace blas = matvec::blas;

constexpr bool device_is_gpu = karma::is_gpu_space<DefaultSpace>();

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const auto& v : matvec::variant_table) names.push_back(v.name);
  return names;
}

Schema matvec_schema() {
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
  s.rule(karma::Rule::axis, {"matvec.layout", "matvec.transpose", "matvec.precision"});
  s.rule(karma::Rule::tuning,
         {"matvec.variant", "matvec.implementation", "matvec.team_size", "matvec.vector_length",
          "matvec.rows_per_thread", "matvec.column_blocks", "matvec.block_rows", "matvec.rounds"});
  s.faults({{"y-entry",
             "after each implementation's runs, before its y is checked, 4 tolerances added to "
             "the middle entry of y that the last rank checks"}});
  s.retired("matvec.corrupt", "use run.inject_fault: y-entry", false);
  return s;
}

// a * b, or a deck error naming `key` when the product overflows 64 bits.
std::int64_t multiply_checked(const Deck& deck, const std::string& key, std::int64_t a,
                              std::int64_t b, const std::string& what,
                              const std::string& overflows = "overflows 64-bit indices") {
  const auto out = checked_product(a, b);
  if (!out)
    deck.fail(key, what + " = " + std::to_string(a) + " x " + std::to_string(b) + " " + overflows);
  return *out;
}

// The extents of A, all ranks' (the Laplacian's grid points, or m x n) and
// this rank's block of rows; a deck error where a count overflows 64 bits.
void read_extents(const Deck& deck, Config& c) {
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
void read_implementations(const Deck& deck, Config& c) {
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
    for (const auto& v : matvec::variant_table) {
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

Config read_config(const Deck& deck) {
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

// ---------------------------------------------------------------------------
// Dense.

// A team shape the device launches: TeamPerRow's team at most as large as
// this vector_length allows here (a deck error otherwise).
template <class Matrix, class Vector>
void check_team_size(const Context& ctx, const matvec::TeamShape& team) {
  if (team.team_size > 1 || team.vector_length > 1) {
    const int most =
        matvec::TeamRowsPolicy<Matrix>(1, 1, team.vector_length)
            .team_size_max(matvec::TeamPerRow<Matrix, Vector, Vector>{}, Kokkos::ParallelForTag());
    if (team.team_size > most)
      ctx.deck.fail("matvec.team_size", "at most " + std::to_string(most) + " with vector_length " +
                                            std::to_string(team.vector_length) +
                                            " on this device, got " +
                                            std::to_string(team.team_size));
  }
}

// The dense implementations to time: the deck's Kokkos variants on B, x and
// y, then the BLAS GEMV on the same arrays.
template <class T, class OpLayout, class Matrix, class Vector, class Partials>
std::vector<karma::Variant> dense_variants(const Config& cfg, const matvec::Settings& settings,
                                           const Matrix& b, const Vector& x, const Vector& y,
                                           const Partials& partials) {
  const auto rows = static_cast<std::int64_t>(b.extent(0));
  const auto cols = static_cast<std::int64_t>(b.extent(1));
  std::vector<karma::Variant> variants;
  for (const auto* v : cfg.variants) {
    karma::Variant c;
    c.name = c.variant = v->name;
    c.implementation = "kokkos";
    c.run = [=] { matvec::multiply(v->variant, b, x, y, settings, partials); };
    c.code = matvec::multiply_code<Matrix>(v->variant);
    c.launch = matvec::deck_launch(cfg, v->variant);
    if (v->variant == Variant::team_per_row) {
      const bool packed = matvec::rows_load_packed(b, x);
      c.extra = {{"team_size", settings.team.team_size},
                 {"vector_length", settings.team.vector_length},
                 {"rows_per_thread", settings.team.rows_per_thread},
                 {"row_loads", packed ? "16-byte" : "element"}};
      if (packed) c.extra["units_in_flight"] = settings.team.units;
    }
    if (v->variant == Variant::mdrange) {
      const bool packed = matvec::columns_load_packed(b, settings.tiling);
      const bool teams = packed && settings.tiling.team_warps > 0;
      c.extra = {{"column_loads", packed ? "16-byte" : "element"},
                 {"rows_per_item", settings.tiling.rows_per_item},
                 {"column_blocks", settings.tiling.column_blocks},
                 {"columns", settings.tiling.interleaved ? "interleaved" : "contiguous"}};
      if (teams)  // a team of warps, not an MDRange tile
        c.extra["team_warps"] = settings.tiling.team_warps;
      else
        c.extra["tile"] = {settings.tiling.tile0, settings.tiling.tile1};
    }
    variants.push_back(std::move(c));
  }
  constexpr bool row_major = std::is_same<OpLayout, Right>::value;
  const std::int64_t ld = static_cast<std::int64_t>(row_major ? b.stride(0) : b.stride(1));
  if (cfg.blas == Blas::cublas)
    variants.push_back(
        blas::cublas_variant<T>(row_major, rows, cols, b.data(), ld, x.data(), y.data()));
  if (cfg.blas == Blas::cblas)
    variants.push_back(
        blas::cblas_variant<T>(row_major, rows, cols, b.data(), ld, x.data(), y.data()));
  return variants;
}

// The exchange that the dense product needs on several ranks, timed apart:
// the Allreduce of y = A^T x (on a scratch y of B's rows), or the
// Allgatherv of x (`replicated`) for y = A x.
template <class T, class Vector>
KernelResult time_dense_exchange(const Context& ctx, const Config& cfg, std::int64_t rows,
                                 std::int64_t cols, const ReplicatedX<Vector>* replicated) {
  const int ranks = comm::size();
  if (cfg.transpose) {
    const Vector scratch("matvec::allreduce_scratch", rows);
    return time_exchange(ctx, "allreduce-y", static_cast<double>(rows) * sizeof(T) * ranks,
                         [&] { sum_over_ranks(scratch.data(), rows); });
  }
  return time_exchange(ctx, "allgatherv-x", static_cast<double>(cols) * sizeof(T) * ranks,
                       [&] { replicated->gather(); });
}

// The dense product's report: the timings and checks, the problem as the
// results record it, and the one-line summary.
template <class T, class OpLayout>
Report dense_report(const Config& cfg, const RunSettings& run, Measured measured, std::int64_t rows,
                    std::int64_t cols, std::uint64_t footprint, const FullCheck<T>& check,
                    std::int64_t terms) {
  Report report;
  report.kernels = std::move(measured.kernels);
  report.checks = std::move(measured.checks);
  report.problem = {
      {"format", "dense"},
      {"m", cfg.m_global},
      {"n", cfg.n},
      {"rows_per_rank", allgather_json(cfg.m_local)},
      {"layout", to_string(cfg.layout)},
      {"transpose", cfg.transpose},
      {"operator",
       {{"rows", rows},
        {"columns", cols},
        {"layout", to_string(layout_of<OpLayout>())},
        {"note",
         "the array the kernels multiply by: A, or A^T as the same storage "
         "read in the other layout"}}},
      {"precision", to_string(cfg.precision)},
      {"element_bytes", sizeof(T)},
      {"bytes_counted", "A once, x once and y once per product, all ranks"},
      {"flops_counted", "2 m n per product"},
      {"distribution",
       cfg.transpose ? "rows of A per rank; each rank's y = A_r^T x_r is a partial sum of all of "
                       "y, added by MPI_Allreduce (timed apart as allreduce-y)"
                     : "rows of A per rank; x replicated by MPI_Allgatherv of each rank's block "
                       "(timed apart as allgatherv-x)"},
      {"verification", [&] {
         auto v = verification_json(check);
         v["terms"] = terms;
         return v;
       }()}};
  report.problem.update(plan_json(cfg, run, footprint));
  std::ostringstream summary;
  summary << "matvec: y = A" << (cfg.transpose ? "^T" : "") << " x, A dense " << cfg.m_global
          << " x " << cfg.n << " (" << to_string(cfg.layout) << ", " << to_string(cfg.precision)
          << "), kernels see a " << rows << " x " << cols << " " << to_string(layout_of<OpLayout>())
          << " array per rank; " << plan_summary(cfg, footprint);
  report.summary = summary.str();
  return report;
}

template <class T, class OpLayout>
Report run_dense(const Context& ctx, const Config& cfg) {
  using Matrix = UnmanagedArray<T**, OpLayout, DefaultMemory>;
  using Vector = Kokkos::View<T*, DefaultMemory>;
  const int ranks = comm::size();
  // B is the operator the kernels multiply by (see matvec_kernels.hpp).
  const std::int64_t rows = cfg.transpose ? cfg.n : cfg.m_local;
  const std::int64_t cols = cfg.transpose ? cfg.m_local : cfg.n;
  const Matrix shape(nullptr, rows, cols);  // extents only, for the heuristics
  matvec::Settings settings;
  settings.team =
      matvec::choose_team_shape(shape, cfg.team_size, cfg.vector_length, cfg.rows_per_thread);
  settings.tiling = matvec::choose_tiling(shape, cfg.column_blocks, cfg.block_rows);
  const bool uses_mdrange = std::any_of(cfg.variants.begin(), cfg.variants.end(),
                                        [](auto* v) { return v->variant == Variant::mdrange; });
  const std::uint64_t partial_bytes =
      uses_mdrange && settings.tiling.column_blocks > 1
          ? static_cast<std::uint64_t>(rows) * settings.tiling.column_blocks * sizeof(T)
          : 0;
  const std::uint64_t vector_bytes = static_cast<std::uint64_t>(rows + cols) * sizeof(T);
  // Entries of y this rank checks: its rows, or its share of the replicated
  // y = A^T x (not a structured binding: C++17 lambdas cannot capture one).
  // The check holds two doubles an entry, and x and A's row keys (16 bytes
  // a term) while it computes them.
  const Block checked = cfg.transpose ? block_of(rows, ranks, comm::rank()) : Block{0, rows};
  const std::int64_t check_first = checked.first, check_count = checked.count;
  const std::int64_t terms = cfg.transpose ? cfg.m_global : cfg.n;
  const std::uint64_t footprint =
      static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * sizeof(T) +
      vector_bytes + partial_bytes + (ranks > 1 ? vector_bytes : 0) +
      static_cast<std::uint64_t>(check_count + terms) * 2 * sizeof(double);
  ctx.require_memory(footprint, "A (" + std::to_string(cfg.m_local) + " x " +
                                    std::to_string(cfg.n) + " " + to_string(cfg.precision) +
                                    " per rank), x, y, scratch and the exact y");
  check_team_size<Matrix, Vector>(ctx, settings.team);

  // 256-byte aligned, as karma-stream's arrays.
  const auto storage = allocate_aligned<T**, OpLayout>("matvec::A", 256, rows, cols);
  const Matrix b = storage.view;
  const matvec::Placement where{cfg.seed, cfg.transpose, cfg.row0};
  matvec::fill_matrix(b, where);
  std::unique_ptr<ReplicatedX<Vector>> replicated;
  Vector x;
  if (cfg.transpose) {
    // x is as long as A has rows: each rank holds the part its rows need.
    x = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::x"), cols);
    matvec::fill_vector(x, cfg.seed, cfg.row0);
  } else {
    replicated = std::make_unique<ReplicatedX<Vector>>(cols, cfg.seed);
    x = replicated->x;
  }
  const Vector y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::y"), rows);
  const auto y_host = Kokkos::create_mirror_view(y);
  const auto partials =
      matvec::allocate_partials(b, uses_mdrange ? settings.tiling : matvec::Tiling{});
  Kokkos::fence();

  std::vector<karma::Variant> variants =
      dense_variants<T, OpLayout>(cfg, settings, b, x, y, partials);

  // The reference: every entry of y this rank checks, exact from the
  // seeded A and x. With the transpose on several ranks y is replicated, so
  // the ranks split its entries.
  const bool reduce_y = cfg.transpose && ranks > 1;
  const double tolerance = matvec::tolerance_for<T>(terms);
  const FullCheck<T> check =
      prepare_check<T>(ctx.run, tolerance, cfg.transpose ? 0 : cfg.row0, [&] {
        return matvec::dense_exact(cfg.seed, cfg.transpose, cfg.row0, check_first, check_count,
                                   terms);
      });

  const double local_bytes = (static_cast<double>(rows) * cols + rows + cols) * sizeof(T);
  const double bytes = comm::sum(local_bytes);
  const double flops = comm::sum(2.0 * static_cast<double>(rows) * cols);
  Measured measured = measure_products(
      ctx, cfg, variants, bytes, flops, tolerance,
      [&] { Kokkos::deep_copy(y, std::numeric_limits<T>::quiet_NaN()); },
      [&] {
        corrupt(y, check.corrupt_index, check.corrupt_by);
        Kokkos::deep_copy(y_host, y);
        if (reduce_y) comm::sum_in_place(y_host.data(), rows);
      },
      [&] { return matvec::worst_scaled_error(check.exact, y_host); });
  variants.clear();  // a vendor's handle goes with its variant

  if (ranks > 1)
    measured.kernels.push_back(time_dense_exchange<T>(ctx, cfg, rows, cols, replicated.get()));
  return dense_report<T, OpLayout>(cfg, ctx.run, std::move(measured), rows, cols, footprint, check,
                                   terms);
}

Report run_matvec(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  if (cfg.csr) return run_csr_product(ctx, cfg);
  return dispatch_precision(cfg.precision, [&](auto t) {
    using T = decltype(t);
    // The kernels see A, or A^T as the other layout (matvec_kernels.hpp).
    const Layout op =
        cfg.transpose ? (cfg.layout == Layout::left ? Layout::right : Layout::left) : cfg.layout;
    return dispatch_layout(op, [&](auto l) { return run_dense<T, decltype(l)>(ctx, cfg); });
  });
}

}  // namespace

int main(int argc, char* argv[]) {
  const App app{"matvec",
                "y = A x for a dense A in either layout (Kokkos variants beside BLAS GEMV) or a "
                "sparse A in compressed rows",
                matvec_schema(), run_matvec, &generated::code_table};
  return run_main(argc, argv, app);
}
