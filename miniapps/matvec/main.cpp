// karma-matvec: deck -> run -> report. Dense kernels in matvec_kernels.hpp,
// sparse (CSR) ones in csr_kernels.hpp, the vendor references in matvec_blas.hpp.
#include "csr_kernels.hpp"
#include "matvec_blas.hpp"
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
            "1, 2 or 4 (0: chosen for the device)",
            0, 4);
  s.integer("matvec.column_blocks", 0,
            "mdrange: column blocks, whose partial sums a second pass adds (0: chosen for the "
            "device)",
            0);
  s.integer("matvec.block_rows", 0,
            "mdrange on a CPU: rows of B per work item (0: chosen for the CPU); a GPU thread "
            "takes one row, so a nonzero value in a GPU build is a deck error",
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
  bool corrupt = false;
  bool laplacian = false;
  double density = 0;
  std::vector<std::int64_t> grid;  // global
  std::int64_t repetitions = 0, warmup = 0, rounds = 1;
};

// a * b, or a deck error naming `key` when the product overflows 64 bits.
std::int64_t multiply_checked(const Deck& deck, const std::string& key, std::int64_t a,
                              std::int64_t b, const std::string& what,
                              const std::string& overflows = "overflows 64-bit indices") {
  const auto out = checked_product(a, b);
  if (!out)
    deck.fail(key, what + " = " + std::to_string(a) + " x " + std::to_string(b) + " " + overflows);
  return *out;
}

Config read_config(const Deck& deck) {
  Config c;
  const std::int64_t ranks = comm::size(), rank = comm::rank();
  c.csr = deck.string("matvec.format") == "csr";
  c.transpose = deck.boolean("matvec.transpose");
  c.strong = deck.string("matvec.scaling") == "strong";
  c.layout = layout_from_string(deck.string("matvec.layout"));
  c.precision = precision_from_string(deck.string("matvec.precision"));
  c.seed = static_cast<std::uint64_t>(deck.integer("matvec.seed"));
  c.team_size = static_cast<int>(deck.integer("matvec.team_size"));
  c.vector_length = static_cast<int>(deck.integer("matvec.vector_length"));
  c.rows_per_thread = static_cast<int>(deck.integer("matvec.rows_per_thread"));
  if (c.rows_per_thread == 3)
    deck.fail("matvec.rows_per_thread", "must be 0 (automatic), 1, 2 or 4, got 3");
  c.column_blocks = deck.integer("matvec.column_blocks");
  c.block_rows = deck.integer("matvec.block_rows");
  if (device_is_gpu && c.block_rows != 0)
    deck.fail("matvec.block_rows", "sets a CPU's work items; a GPU thread takes one row");
  c.corrupt = deck.string("run.inject_fault") == "y-entry";
  c.laplacian = deck.string("matvec.pattern") == "laplacian";
  c.density = deck.number("matvec.density");
  c.repetitions = deck.integer("run.repetitions");
  c.warmup = deck.integer("run.warmup");
  c.rounds = deck.integer("matvec.rounds");
  const std::int64_t element_bytes = c.precision == Precision::single ? 4 : 8;

  if (c.csr && c.transpose)
    deck.fail("matvec.transpose",
              "y = A^T x is not implemented for format: csr (it would need a compressed-column "
              "copy or atomics); use format: dense");

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

  // Implementations: the Kokkos variants and at most one BLAS.
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
// What every format shares: timing the variants, checking each y.

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
  plan.warmup = cfg.warmup;
  plan.repetitions = cfg.repetitions;
  plan.rounds = cfg.rounds;
  Measured out;
  out.kernels = karma::measure(ctx, variants, plan);
  for (std::size_t i = 0; i < variants.size(); ++i)
    out.checks.push_back({"y " + variants[i].name, "max error / sum |a||x|", errors[i], tolerance});
  return out;
}

// Times an exchange on its own (not inside the products' times, so those
// compare with BLAS on one device); bytes: what every rank receives.
KernelResult time_exchange(const Context& ctx, const Config& cfg, const std::string& name,
                           double bytes, const std::function<void()>& exchange) {
  std::vector<karma::Variant> variants(1);
  karma::Variant& v = variants[0];
  v.name = v.variant = name;
  v.implementation = "mpi";
  v.run = exchange;
  v.code = {name == "allreduce-y" ? "karma::comm::sum_in_place" : "(anonymous)::ReplicatedX"};
  v.bytes = bytes;
  v.extra["staged_through_host"] = !std::is_same<DefaultMemory, HostMemory>::value;
  Plan plan;
  plan.warmup = cfg.warmup;
  plan.repetitions = cfg.repetitions;
  return karma::measure(ctx, variants, plan).at(0);
}

// x, replicated: each rank fills the block of x it owns, then MPI_Allgatherv
// (through host memory) gives every rank all of it.
template <class Vector>
struct ReplicatedX {
  Vector x;
  typename Vector::HostMirror host;
  std::vector<std::int64_t> counts;
  std::int64_t first = 0, count = 0;

  ReplicatedX(std::int64_t n, std::uint64_t seed) {
    x = Vector(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::x"), n);
    host = Kokkos::create_mirror_view(x);
    for (int r = 0; r < comm::size(); ++r) counts.push_back(block_of(n, comm::size(), r).count);
    const Block mine = block_of(n, comm::size(), comm::rank());
    first = mine.first;
    count = mine.count;
    matvec::fill_vector(Kokkos::subview(x, std::make_pair(first, first + count)), seed, first);
    gather();
  }
  void gather() const {
    if (comm::size() == 1) return;
    const auto own = std::make_pair(first, first + count);
    Kokkos::deep_copy(Kokkos::subview(host, own), Kokkos::subview(x, own));
    comm::allgatherv_in_place(host.data(), counts);
    Kokkos::deep_copy(x, host);
  }
};

std::string join(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

// The check of every entry of y (matvec_kernels.hpp): the exact entries this
// rank checks, computed once on the device from the closed form of A and x
// before the timed runs and compared on the host with each implementation's
// y, and the fault that matvec.corrupt injects. Cost: one hash and a TwoSum
// an entry of A: at 16384^2 doubles on the 2-core VM 0.55 s, 7-9x one timed
// product (16-29x in float; README), recorded as `seconds`; the comparison
// is one pass over y per implementation.
template <class T>
struct FullCheck {
  matvec::ExactEntries<Kokkos::HostSpace> exact;
  double seconds = 0;               // computing the reference, slowest rank
  std::int64_t corrupt_index = -1;  // the entry of y this rank corrupts; -1: none
  T corrupt_by = 0;
  std::int64_t corrupt_rank = -1;  // where, for the JSON: the rank and its row
  std::int64_t corrupt_row = -1;   // (y = A x) or the entry of y (y = A^T x)
};

template <class T, class Compute>
FullCheck<T> prepare_check(const Config& cfg, double tolerance, std::int64_t global_offset,
                           Compute&& compute) {
  FullCheck<T> c;
  Kokkos::fence();
  Kokkos::Timer timer;
  const auto exact = compute();
  Kokkos::fence();
  c.seconds = comm::max(timer.seconds());
  c.exact = matvec::to_host(exact);
  if (cfg.corrupt) {
    // The last rank that checks any entry (not rank 0 when there are
    // several), the middle of its entries: where a sample of evenly spread
    // rows would most likely not look. 4 tolerances: just past what the
    // check must accept.
    const std::int64_t mine = c.exact.count() > 0 ? comm::rank() : -1;
    c.corrupt_rank = comm::max(mine);
    if (c.corrupt_rank == comm::rank()) {
      const std::int64_t i = c.exact.count() / 2;
      c.corrupt_index = c.exact.first + i;
      const double scale = c.exact.scale(i) > 0 ? c.exact.scale(i) : 1.0;
      c.corrupt_by = static_cast<T>(4 * tolerance * scale);
    }
    c.corrupt_row =
        comm::max(c.corrupt_index < 0 ? std::int64_t{-1} : global_offset + c.corrupt_index);
  }
  return c;
}

// Adds the fault to y in device memory, after the runs (before the
// Allreduce of y = A^T x, so every rank's copy carries it).
template <class Vector, class T>
void corrupt(const Vector& y, std::int64_t index, T by) {
  if (index < 0) return;
  Kokkos::parallel_for(
      "matvec::corrupt", Kokkos::RangePolicy<DefaultSpace, Kokkos::IndexType<std::int64_t>>(0, 1),
      KOKKOS_LAMBDA(const std::int64_t) { y(index) += by; });
  Kokkos::fence();
}

template <class T>
nlohmann::json verification_json(const FullCheck<T>& check, const Config& cfg) {
  return {{"entries_checked", "all: every entry of y, on every rank, for every implementation"},
          {"entries_checked_per_rank", allgather_json(check.exact.count())},
          {"reference",
           "compensated double sums of the closed form of A and x (nothing stored is read), on "
           "the device: dense a team an entry, its threads over the terms; CSR a thread a row"},
          {"reference_seconds", check.seconds},
          {"corrupt", cfg.corrupt},
          {"corrupted", cfg.corrupt ? nlohmann::json{{"rank", check.corrupt_rank},
                                                     {"entry_of_y", check.corrupt_row}}
                                    : nlohmann::json(nullptr)}};
}

// ---------------------------------------------------------------------------
// Dense.

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

  if (settings.team.team_size > 1 || settings.team.vector_length > 1) {
    const int most =
        matvec::TeamRowsPolicy<Matrix>(1, 1, settings.team.vector_length)
            .team_size_max(matvec::TeamPerRow<Matrix, Vector, Vector>{}, Kokkos::ParallelForTag());
    if (settings.team.team_size > most)
      ctx.deck.fail("matvec.team_size", "at most " + std::to_string(most) + " with vector_length " +
                                            std::to_string(settings.team.vector_length) +
                                            " on this device, got " +
                                            std::to_string(settings.team.team_size));
  }

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

  std::vector<karma::Variant> variants;
  for (const auto* v : cfg.variants) {
    karma::Variant c;
    c.name = c.variant = v->name;
    c.implementation = "kokkos";
    c.run = [=] { matvec::multiply(v->variant, b, x, y, settings, partials); };
    c.code = {v->variant == Variant::row_per_thread ? "karma::matvec::RowPerThread"
              : v->variant == Variant::team_per_row ? "karma::matvec::TeamPerRow"
                                                    : "karma::matvec::MDRangeBlocks"};
    if (v->variant == Variant::team_per_row)
      c.extra = {{"team_size", settings.team.team_size},
                 {"vector_length", settings.team.vector_length},
                 {"rows_per_thread", settings.team.rows_per_thread}};
    if (v->variant == Variant::mdrange) {
      c.code.push_back("karma::matvec::SumColumnBlocks");
      c.extra = {{"rows_per_item", settings.tiling.rows_per_item},
                 {"column_blocks", settings.tiling.column_blocks},
                 {"columns", settings.tiling.interleaved ? "interleaved" : "contiguous"},
                 {"tile", {settings.tiling.tile0, settings.tiling.tile1}}};
    }
    c.launch = c.extra;
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

  // The reference: every entry of y this rank checks, exact from the
  // seeded A and x. With the transpose on several ranks y is replicated, so
  // the ranks split its entries.
  const bool reduce_y = cfg.transpose && ranks > 1;
  const double tolerance = matvec::tolerance_for<T>(terms);
  const FullCheck<T> check = prepare_check<T>(cfg, tolerance, cfg.transpose ? 0 : cfg.row0, [&] {
    return matvec::dense_exact(cfg.seed, cfg.transpose, cfg.row0, check_first, check_count, terms);
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

  if (ranks > 1) {
    if (reduce_y) {
      const Vector scratch("matvec::allreduce_scratch", rows);
      const auto scratch_host = Kokkos::create_mirror_view(scratch);
      measured.kernels.push_back(time_exchange(ctx, cfg, "allreduce-y",
                                               static_cast<double>(rows) * sizeof(T) * ranks, [&] {
                                                 Kokkos::deep_copy(scratch_host, scratch);
                                                 comm::sum_in_place(scratch_host.data(), rows);
                                                 Kokkos::deep_copy(scratch, scratch_host);
                                               }));
    } else {
      measured.kernels.push_back(time_exchange(ctx, cfg, "allgatherv-x",
                                               static_cast<double>(cols) * sizeof(T) * ranks,
                                               [&] { replicated->gather(); }));
    }
  }

  Report report;
  report.kernels = measured.kernels;
  report.checks = measured.checks;
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
      {"scaling", cfg.strong ? "strong" : "weak"},
      {"seed", cfg.seed},
      {"footprint_bytes_per_rank", footprint},
      {"repetitions", cfg.repetitions},
      {"rounds", std::min(cfg.rounds, cfg.repetitions)},
      {"warmup", cfg.warmup},
      {"bytes_counted", "A once, x once and y once per product, all ranks"},
      {"flops_counted", "2 m n per product"},
      {"distribution",
       cfg.transpose ? "rows of A per rank; each rank's y = A_r^T x_r is a partial sum of all of "
                       "y, added by MPI_Allreduce (timed apart as allreduce-y)"
                     : "rows of A per rank; x replicated by MPI_Allgatherv of each rank's block "
                       "(timed apart as allgatherv-x)"},
      {"verification", [&] {
         auto v = verification_json(check, cfg);
         v["terms"] = terms;
         return v;
       }()}};
  std::ostringstream summary;
  summary << "matvec: y = A" << (cfg.transpose ? "^T" : "") << " x, A dense " << cfg.m_global
          << " x " << cfg.n << " (" << to_string(cfg.layout) << ", " << to_string(cfg.precision)
          << "), kernels see a " << rows << " x " << cols << " " << to_string(layout_of<OpLayout>())
          << " array per rank; " << (cfg.strong ? "strong" : "weak") << " scaling, "
          << format_bytes(static_cast<double>(footprint)) << " per rank; " << cfg.repetitions
          << " repetitions after " << cfg.warmup << " warm-up(s)";
  report.summary = summary.str();
  return report;
}

// ---------------------------------------------------------------------------
// Sparse (CSR).

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

  std::vector<karma::Variant> variants;
  for (const auto* v : cfg.variants) {
    karma::Variant c;
    c.name = std::string("csr-") + v->name;
    c.implementation = "kokkos";
    c.variant = v->name;
    c.run = [=] { matvec::multiply_csr(v->variant, a, x, y, team); };
    c.code = {v->variant == Variant::team_per_row ? "karma::matvec::CsrTeamPerRow"
                                                  : "karma::matvec::CsrRowPerThread"};
    if (v->variant == Variant::team_per_row)
      c.extra = {{"team_size", team.team_size}, {"vector_length", team.vector_length}};
    c.launch = c.extra;
    variants.push_back(std::move(c));
  }

  // The reference: every row of this rank, from the pattern's generator.
  const std::int64_t global_longest = comm::max(longest);
  const double tolerance = matvec::tolerance_for<T>(global_longest);
  const FullCheck<T> check = prepare_check<T>(cfg, tolerance, cfg.row0, [&] {
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
    measured.kernels.push_back(time_exchange(ctx, cfg, "allgatherv-x",
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
      {"scaling", cfg.strong ? "strong" : "weak"},
      {"seed", cfg.seed},
      {"footprint_bytes_per_rank", footprint},
      {"repetitions", cfg.repetitions},
      {"rounds", std::min(cfg.rounds, cfg.repetitions)},
      {"warmup", cfg.warmup},
      {"bytes_counted", "values, column indices and offsets once, x once and y once, all ranks"},
      {"flops_counted", "2 per entry"},
      {"distribution", "rows of A per rank; x replicated by MPI_Allgatherv (timed apart)"},
      {"verification", verification_json(check, cfg)}};
  std::ostringstream summary;
  summary << "matvec: y = A x, A sparse " << cfg.m_global << " x " << cfg.n << " (" << pattern_text
          << ", " << static_cast<std::int64_t>(entries) << " entries, " << to_string(cfg.precision)
          << ") in compressed rows; " << (cfg.strong ? "strong" : "weak") << " scaling, "
          << format_bytes(static_cast<double>(footprint)) << " per rank; " << cfg.repetitions
          << " repetitions after " << cfg.warmup << " warm-up(s)";
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

Report run_matvec(const Context& ctx) {
  const Config cfg = read_config(ctx.deck);
  return dispatch_precision(cfg.precision, [&](auto t) {
    using T = decltype(t);
    if (cfg.csr) return run_csr_typed<T>(ctx, cfg);
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
