// What karma-matvec's two products share: main.cpp (the deck, the dense
// product) and csr.cpp (the sparse one) both time their variants, time the
// exchange of x apart and check every entry of y the same way.
#pragma once

#include "matvec_kernels.hpp"

#include "karma/app.hpp"
#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/device_comm.hpp"
#include "karma/harness.hpp"
#include "karma/partition.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
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

// The check of every entry of y (matvec_kernels.hpp): the exact entries this
// rank checks, computed once on the device from the closed form of A and x
// before the timed runs and compared on the host with each implementation's
// y, and the fault that run.inject_fault y-entry injects. Cost: one hash and a TwoSum
// an entry of A: at 16384^2 doubles on the 2-core VM 0.55 s, 7-9x one timed
// product (16-29x in float; README), recorded as `seconds`; the comparison
// is one pass over y per implementation.
template <class T>
struct FullCheck {
  matvec::ExactEntries<Kokkos::HostSpace> exact;
  double seconds = 0;               // computing the reference, slowest rank
  bool corrupt = false;             // run.inject_fault: y-entry
  std::int64_t corrupt_index = -1;  // the entry of y this rank corrupts; -1: none
  T corrupt_by = 0;
  std::int64_t corrupt_rank = -1;  // where, for the JSON: the rank and its row
  std::int64_t corrupt_row = -1;   // (y = A x) or the entry of y (y = A^T x)
};

template <class T, class Compute>
FullCheck<T> prepare_check(const RunSettings& run, double tolerance, std::int64_t global_offset,
                           Compute&& compute) {
  FullCheck<T> c;
  c.corrupt = run.inject_fault == "y-entry";
  Kokkos::fence();
  Kokkos::Timer timer;
  const auto exact = compute();
  Kokkos::fence();
  c.seconds = comm::max(timer.seconds());
  c.exact = matvec::to_host(exact);
  if (c.corrupt) {
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

template <class T>
nlohmann::json verification_json(const FullCheck<T>& check) {
  return {{"entries_checked", "all: every entry of y, on every rank, for every implementation"},
          {"entries_checked_per_rank", allgather_json(check.exact.count())},
          {"reference",
           "compensated double sums of the closed form of A and x (nothing stored is read), on "
           "the device: dense a team an entry, its threads over the terms; CSR a thread a row"},
          {"reference_seconds", check.seconds},
          {"corrupt", check.corrupt},
          {"corrupted", check.corrupt ? nlohmann::json{{"rank", check.corrupt_rank},
                                                       {"entry_of_y", check.corrupt_row}}
                                      : nlohmann::json(nullptr)}};
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
