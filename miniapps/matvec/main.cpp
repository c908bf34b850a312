// karma-matvec: the deck (matvec_deck.hpp) -> the product of its format:
// here the dense one (A, x and y -> matvec_kernels.hpp's variants beside the
// vendor's GEMV, matvec_blas.hpp -> measure -> verify -> report), in csr.cpp
// the sparse one (csr_kernels.hpp); what both share is matvec_app.hpp, their
// check of y matvec_verify.hpp.
#include "matvec_app.hpp"
#include "matvec_blas.hpp"
#include "matvec_deck.hpp"
#include "matvec_kernels.hpp"
#include "matvec_verify.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"
#include "karma/partition.hpp"
#include "karma_code_table.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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
