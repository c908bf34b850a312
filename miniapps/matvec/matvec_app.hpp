// What karma-matvec's two products share: main.cpp (the dense product) and
// csr.cpp (the sparse one) both time their variants, time the exchange of x apart (ReplicatedX) and
// record the same plan; they check every entry of y the same way (matvec_verify.hpp).
#pragma once

#include "matvec_deck.hpp"
#include "matvec_kernels.hpp"
#include "matvec_verify.hpp"

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

// The sparse product (csr.cpp): runs the product y = A x of format csr that
// `cfg` describes (pattern, precision, variants) and reports it: kernels,
// checks, problem, summary.
Report run_csr_product(const Context& ctx, const Config& cfg);

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
