// karma-matvec: the deck (matvec_deck.hpp) -> the product of its format ->
// its variants: the dense product's (A, x and y -> matvec_kernels.hpp's
// variants beside the vendor's GEMV, matvec_blas.hpp) or the sparse
// product's (matvec_csr.hpp) -> measure -> verify every entry of y
// (matvec_verify.hpp) -> report.
#include "matvec_blas.hpp"
#include "matvec_csr.hpp"
#include "matvec_deck.hpp"
#include "matvec_kernels.hpp"
#include "matvec_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/device_comm.hpp"
#include "karma/harness.hpp"
#include "karma/partition.hpp"
#include "karma/text.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------
// What the two products share: timing the variants and the exchange of x
// (ReplicatedX), the plan they record; they check y the same way.

namespace karma::matvec {

// The launch shape of a variant's code version (karma/code_version.hpp):
// the deck's launch keys that it reads, where the deck fixes them (0 leaves
// them to heuristics of the run's sizes, threads and device, whose choices
// are in the kernel's results beside it, not in its code version).
inline nlohmann::json deck_launch(const Config& cfg, Variant variant) {
  auto launch = nlohmann::json::object();
  const auto fixed = [&launch](const char* key, std::int64_t value) {
    if (value > 0) launch[key] = value;
  };
  if (variant == Variant::team_per_row) {
    fixed("team_size", cfg.team_size);
    fixed("vector_length", cfg.vector_length);
    if (!cfg.csr) fixed("rows_per_thread", cfg.rows_per_thread);
  } else if (variant == Variant::mdrange) {
    fixed("column_blocks", cfg.column_blocks);
    fixed("block_rows", cfg.block_rows);
  }
  return launch;
}

// The timings of the products and the check of each one's y.
struct Measured {
  std::vector<KernelResult> kernels;
  std::vector<Check> checks;
};

// Times the products: each variant's repetitions in `rounds` turns (blocked
// turns, so a library's idle threads never overlap another's kernels; more
// rounds put each variant's best time in the same stretch of a shared
// machine as the others'), warm-ups in its first turn. Each turn first
// poisons y (`reset`), so a variant that writes nothing fails; after it,
// `finish` completes y (the transposed product's Allreduce) and `error`
// compares y with the reference (the worst over rounds counts).
template <class Reset, class Finish, class ErrorFn>
Measured measure_products(const Context& ctx, const Config& cfg,
                          std::vector<karma::Variant>& variants, double bytes, double flops,
                          double tolerance, Reset&& reset, Finish&& finish, ErrorFn&& error) {
  std::vector<double> errors(variants.size(), 0.0);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    karma::Variant& v = variants[i];
    v.bytes = bytes;
    v.flops = flops;
    v.before_turn = reset;
    v.after_turn = [&, i] {
      finish();
      const double e = comm::max(error());
      errors[i] = (e == e && errors[i] == errors[i]) ? std::max(errors[i], e) : e;
    };
  }
  Plan plan;
  plan.rounds = cfg.rounds;
  Measured out;
  out.kernels = karma::measure(ctx, variants, plan);
  for (std::size_t i = 0; i < variants.size(); ++i)
    out.checks.push_back({"y " + variants[i].name, "max error / sum |a||x|", errors[i], tolerance});
  return out;
}

// Times an exchange on its own (not inside the products' times, so those
// compare with BLAS on one device); bytes: what every rank receives.
inline KernelResult time_exchange(const Context& ctx, const std::string& name, double bytes,
                                  const std::function<void()>& exchange) {
  std::vector<karma::Variant> variants(1);
  karma::Variant& v = variants[0];
  v.name = v.variant = name;
  v.implementation = comm::path().path == comm::Path::nccl ? "nccl" : "mpi";
  v.run = exchange;
  v.code = {name == "allreduce-y" ? "karma::sum_over_ranks" : "(anonymous)::ReplicatedX"};
  v.bytes = bytes;
  v.extra["staged_through_host"] = comm::path().path == comm::Path::host_staging;
  return karma::measure(ctx, variants, Plan{}).at(0);
}

// What both products' problem records share: the run's plan and its size
// (the core records the repetitions and warm-ups).
inline nlohmann::json plan_json(const Config& cfg, const RunSettings& run,
                                std::uint64_t footprint) {
  return {{"scaling", cfg.strong ? "strong" : "weak"},
          {"seed", cfg.seed},
          {"footprint_bytes_per_rank", footprint},
          {"rounds", std::min(cfg.rounds, run.repetitions)}};
}

// ... and the end of their one-line summaries, before the core's.
inline std::string plan_summary(const Config& cfg, std::uint64_t footprint) {
  return std::string(cfg.strong ? "strong" : "weak") + " scaling, " +
         format_bytes(static_cast<double>(footprint)) + " per rank";
}

}  // namespace karma::matvec

// In the anonymous namespace: the results name its code
// (anonymous)::ReplicatedX (time_exchange).
namespace {

using namespace karma;

// x, replicated: each rank fills the block of x it owns, then a gather over
// the ranks (run.comm's path) gives every rank all of it.
template <class Vector>
struct ReplicatedX {
  Vector x;
  std::vector<std::int64_t> counts;
  std::int64_t first = 0, count = 0;

  ReplicatedX(std::int64_t n, std::uint64_t seed) {
    x = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::x"), n);
    for (int r = 0; r < comm::size(); ++r) counts.push_back(block_of(n, comm::size(), r).count);
    const Block mine = block_of(n, comm::size(), comm::rank());
    first = mine.first;
    count = mine.count;
    matvec::fill_vector(Kokkos::subview(x, std::make_pair(first, first + count)), seed, first);
    gather();
  }
  void gather() const { gather_over_ranks(x.data(), counts); }
};

}  // namespace

namespace {

using namespace karma;
using namespace karma::matvec;
using matvec::Variant;
namespace blas = matvec::blas;

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
// ---------------------------------------------------------------------------
// Sparse.

// The entries of `rows` rows of these sizes, and the longest row.
template <class Sizes>
std::pair<std::int64_t, std::int64_t> count_entries(const Sizes& sizes, std::int64_t rows) {
  std::int64_t local_entries = 0, longest = 0;
  Kokkos::parallel_reduce(
      "matvec::csr::entries",
      Kokkos::RangePolicy<DefaultSpace, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) { v += sizes(i); }, local_entries);
  Kokkos::parallel_reduce(
      "matvec::csr::longest",
      Kokkos::RangePolicy<DefaultSpace, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) {
        if (sizes(i) > v) v = sizes(i);
      },
      Kokkos::Max<std::int64_t>(longest));
  return {local_entries, longest};
}

// The harness's variants: each of the deck's CSR kernels on a, x and y.
template <class Matrix, class Vector, class Team>
std::vector<karma::Variant> csr_variants(const Config& cfg, const Matrix& a, const Vector& x,
                                         const Vector& y, const Team& team) {
  std::vector<karma::Variant> variants;
  for (const auto* v : cfg.variants) {
    karma::Variant c;
    c.name = std::string("csr-") + v->name;
    c.implementation = "kokkos";
    c.variant = v->name;
    c.run = [=] { matvec::multiply_csr(v->variant, a, x, y, team); };
    c.code = {v->variant == Variant::team_per_row ? "karma::matvec::CsrTeamPerRow"
                                                  : "karma::matvec::CsrRowPerThread"};
    c.launch = matvec::deck_launch(cfg, v->variant);
    if (v->variant == Variant::team_per_row)
      c.extra = {{"team_size", team.team_size}, {"vector_length", team.vector_length}};
    variants.push_back(std::move(c));
  }
  return variants;
}

template <class T, class Index, class Pattern>
Report run_csr(const Context& ctx, const Config& cfg, const Pattern& pattern,
               const std::string& pattern_text) {
  using Vector = Kokkos::View<T*, DefaultMemory>;
  using Matrix = matvec::Csr<T, Index, DefaultMemory>;
  const int ranks = comm::size();
  const std::int64_t rows = cfg.m_local, cols = cfg.n;
  // The row sizes come first (small), so the check below knows the exact
  // number of entries before the entries are allocated.
  ctx.require_memory(static_cast<std::uint64_t>(rows + 1) * 16, "the row sizes and offsets");
  const auto sizes = matvec::csr_row_sizes(pattern, cfg.row0, rows);
  const std::pair<std::int64_t, std::int64_t> counted = count_entries(sizes, rows);
  const std::int64_t local_entries = counted.first, longest = counted.second;
  const std::uint64_t entry_bytes = sizeof(T) + sizeof(Index);
  const std::uint64_t footprint = static_cast<std::uint64_t>(local_entries) * entry_bytes +
                                  static_cast<std::uint64_t>(rows + 1) * 16 +
                                  static_cast<std::uint64_t>(rows + cols) * sizeof(T) +
                                  (ranks > 1 ? static_cast<std::uint64_t>(cols) * sizeof(T) : 0) +
                                  static_cast<std::uint64_t>(rows) * 2 * sizeof(double);
  ctx.require_memory(footprint, std::to_string(local_entries) + " entries (" +
                                    std::to_string(entry_bytes) +
                                    " bytes each), x, y and the exact y per rank");
  const Matrix a = matvec::build_csr<T, Index>(pattern, cfg.row0, cols, sizes);
  ReplicatedX<Vector> replicated(cols, cfg.seed);
  const Vector x = replicated.x;
  const Vector y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::y"), rows);
  const auto y_host = Kokkos::create_mirror_view(y);
  const double mean_row = rows > 0 ? static_cast<double>(local_entries) / rows : 0;
  const auto team =
      matvec::choose_csr_team_shape<DefaultSpace>(mean_row, cfg.team_size, cfg.vector_length);
  Kokkos::fence();

  std::vector<karma::Variant> variants = csr_variants(cfg, a, x, y, team);

  // The reference: every row of this rank, from the pattern's generator.
  const std::int64_t global_longest = comm::max(longest);
  const double tolerance = matvec::tolerance_for<T>(global_longest);
  const FullCheck<T> check = prepare_check<T>(ctx.run, tolerance, cfg.row0, [&] {
    return matvec::csr_exact(pattern, cfg.seed, cfg.row0, rows);
  });
  const double entries = static_cast<double>(comm::sum(local_entries));
  const double bytes = comm::sum(static_cast<double>(local_entries) * entry_bytes +
                                 static_cast<double>(rows + 1) * sizeof(std::int64_t) +
                                 static_cast<double>(rows + cols) * sizeof(T));
  Measured measured = measure_products(
      ctx, cfg, variants, bytes, 2 * entries, tolerance,
      [&] { Kokkos::deep_copy(y, std::numeric_limits<T>::quiet_NaN()); },
      [&] {
        corrupt(y, check.corrupt_index, check.corrupt_by);
        Kokkos::deep_copy(y_host, y);
      },
      [&] { return matvec::worst_scaled_error(check.exact, y_host); });
  if (ranks > 1)
    measured.kernels.push_back(time_exchange(ctx, "allgatherv-x",
                                             static_cast<double>(cols) * sizeof(T) * ranks,
                                             [&] { replicated.gather(); }));

  Report report;
  report.kernels = measured.kernels;
  report.checks = measured.checks;
  report.problem = {
      {"format", "csr"},
      {"pattern", pattern_text},
      {"m", cfg.m_global},
      {"n", cfg.n},
      {"rows_per_rank", allgather_json(cfg.m_local)},
      {"entries", entries},
      {"longest_row", global_longest},
      {"precision", to_string(cfg.precision)},
      {"element_bytes", sizeof(T)},
      {"column_index_bytes", sizeof(Index)},
      {"storage", "karma::RaggedRight: column indices and values sharing one offsets view"},
      {"bytes_counted", "values, column indices and offsets once, x once and y once, all ranks"},
      {"flops_counted", "2 per entry"},
      {"distribution", "rows of A per rank; x replicated by MPI_Allgatherv (timed apart)"},
      {"verification", verification_json(check)}};
  report.problem.update(plan_json(cfg, ctx.run, footprint));
  std::ostringstream summary;
  summary << "matvec: y = A x, A sparse " << cfg.m_global << " x " << cfg.n << " (" << pattern_text
          << ", " << static_cast<std::int64_t>(entries) << " entries, " << to_string(cfg.precision)
          << ") in compressed rows; " << plan_summary(cfg, footprint);
  report.summary = summary.str();
  return report;
}

template <class T>
Report run_csr_typed(const Context& ctx, const Config& cfg) {
  const bool small_index = cfg.n <= std::numeric_limits<std::int32_t>::max();
  auto run = [&](const auto& pattern, const std::string& text) {
    return small_index ? run_csr<T, std::int32_t>(ctx, cfg, pattern, text)
                       : run_csr<T, std::int64_t>(ctx, cfg, pattern, text);
  };
  if (cfg.laplacian) {
    matvec::LaplacianPattern p;
    p.dimensions = static_cast<int>(cfg.grid.size());
    p.nx = cfg.grid[0];
    p.ny = cfg.grid[1];
    p.nz = cfg.grid.size() == 3 ? cfg.grid[2] : 1;
    return run(p, std::string(p.dimensions == 3 ? "7-point" : "5-point") + " Laplacian on " +
                      text::join(cfg.grid, " x "));
  }
  std::ostringstream text;
  text << "random, density " << cfg.density;
  return run(matvec::RandomPattern::make(cfg.seed, cfg.n, cfg.density), text.str());
}

Report run_matvec(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  if (cfg.csr)
    return dispatch_precision(cfg.precision,
                              [&](auto t) { return run_csr_typed<decltype(t)>(ctx, cfg); });
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
                matvec_schema(),
                run_matvec,
                &generated::code_table,
                matvec_kernels()};
  return run_main(argc, argv, app);
}
