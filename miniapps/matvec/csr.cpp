// karma-matvec's sparse product: y = A x for A in compressed rows
// (csr_kernels.hpp), with the deck's pattern; main.cpp reads the deck and
// calls run_csr_product.
#include "csr_kernels.hpp"
#include "matvec_app.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/harness.hpp"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace karma;
using namespace karma::matvec;
using matvec::Variant;

std::string join(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

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
                      join(cfg.grid));
  }
  std::ostringstream text;
  text << "random, density " << cfg.density;
  return run(matvec::RandomPattern::make(cfg.seed, cfg.n, cfg.density), text.str());
}

}  // namespace

namespace karma::matvec {

Report run_csr_product(const Context& ctx, const Config& cfg) {
  return dispatch_precision(cfg.precision,
                            [&](auto t) { return run_csr_typed<decltype(t)>(ctx, cfg); });
}

}  // namespace karma::matvec
