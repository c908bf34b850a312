// karma-microbench's deck: the benchmarks it selects and how long each
// repetition lasts at least; the run section's repetitions and warm-ups.
// Google Benchmark's own flags (--benchmark_min_time, --benchmark_repetitions)
// override the deck's values for one run (microbench_gbench.hpp).
#pragma once

#include "benchmarks.hpp"

#include "karma/app.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"
#include "karma/text.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace karma::microbench {

inline const std::vector<std::string> families = {"Sum3D", "Stencil3D", "TinyMatrixSum",
                                                  "Subspan3D", "MatVec"};
inline const std::vector<std::string> implementations = {"karma", "raw", "karma-byref", "raw-twin"};

inline Schema microbench_schema() {
  Schema s;
  s.choice_list("microbench.benchmarks", families, families,
                "benchmark families to run (Hollman et al. 2019): Sum3D, Stencil3D, "
                "TinyMatrixSum and Subspan3D on int arrays, MatVec in double");
  s.choice_list("microbench.where", {"serial", "parallel"}, {"serial", "parallel"},
                "serial: plain loops on the host over host arrays, as in the paper; parallel: "
                "Kokkos kernels on the default execution space (the GPU in a GPU build)");
  s.choice_list("microbench.layouts", {"right", "left"}, {"right", "left"},
                "array layouts: right (C order), left (Fortran order); loops run in memory order");
  s.choice_list("microbench.extents", {"static", "mixed", "dynamic"},
                {"static", "mixed", "dynamic"},
                "static: every extent in the type; mixed: the first at run time, the others in "
                "the type; dynamic: all at run time. MatVec has dynamic extents only");
  s.choice_list("microbench.implementations", {"karma", "raw"}, implementations,
                "karma: karma's arrays; raw: a pointer and hand-written index arithmetic; "
                "karma-byref: karma's serial loops on the caller's arrays, without the local "
                "unmanaged copy (serial Stencil3D, TinyMatrixSum and Subspan3D at their first "
                "size only); raw-twin: raw's code again, so that raw-twin against raw is the "
                "machine's own spread");
  s.choice("microbench.sizes", "standard", {"standard", "tiny"},
           "standard: the measured shapes (README.md); tiny: every benchmark at a few "
           "elements, for tests");
  s.number("microbench.min_time", 0.05,
           "seconds a repetition lasts at least: Google Benchmark's --benchmark_min_time, "
           "which overrides it for one run (0: one call a repetition)",
           0.0, 60.0);
  s.run_section(10, 1);
  s.faults({{"karma-input", "one input element of every karma and karma-byref arm off by one"},
            {"raw-input", "the same in every raw and raw-twin arm"}});
  return s;
}

struct Config {
  std::vector<std::string> benchmarks, where, layouts, extents, implementations;
  Sizes sizes = Sizes::standard;
  double min_time = 0;
  std::int64_t repetitions = 0, warmup = 0;  // run.repetitions, run.warmup
  std::string fault;                         // run.inject_fault
};

inline bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

inline Config read_config(const Deck& deck, const RunSettings& run) {
  Config c;
  c.benchmarks = deck.string_list("microbench.benchmarks");
  c.where = deck.string_list("microbench.where");
  c.layouts = deck.string_list("microbench.layouts");
  c.extents = deck.string_list("microbench.extents");
  c.implementations = deck.string_list("microbench.implementations");
  c.sizes = deck.string("microbench.sizes") == "tiny" ? Sizes::tiny : Sizes::standard;
  c.min_time = deck.number("microbench.min_time");
  c.repetitions = run.repetitions;
  c.warmup = run.warmup;
  c.fault = run.inject_fault;
  return c;
}

// The kernel an arm runs (raw-twin runs raw's), and whether a benchmark has
// the arm.
inline Impl impl_of(const std::string& implementation) {
  return implementation == "karma"         ? Impl::karma
         : implementation == "karma-byref" ? Impl::karma_byref
                                           : Impl::raw;
}
inline bool has_arm(const Benchmark& b, const std::string& implementation) {
  return implementation != "karma-byref" || b.has_byref;
}

// Every kernel karma-microbench measures (karma/kernel_table.hpp): each arm
// of each benchmark at both sizes, its own work; GB/s. Not scored: its
// figures weigh karma's arrays against raw pointers, not a machine.
inline KernelTable microbench_kernels() {
  KernelTable t;
  for (const Sizes sizes : {Sizes::standard, Sizes::tiny})
    for (const auto& b : all_benchmarks(sizes))
      for (const auto& arm : implementations)
        if (has_arm(b, arm)) {
          const std::string name = b.name() + "/" + arm;
          t.kernels.emplace_back(name, std::vector<std::string>{arm}, b.name(), name, "GB/s",
                                 "bytes");
          t.kernels.back().scored = false;
        }
  return t;
}

// The benchmarks the deck selects that have one of its implementations, in
// the suite's order; a selection of none is the deck's error.
inline std::vector<Benchmark> select(const Deck& deck, const Config& c) {
  std::vector<Benchmark> chosen;
  bool any_shape = false;
  for (auto& b : all_benchmarks(c.sizes)) {
    if (!has(c.benchmarks, b.family) || !has(c.where, name_of(b.where)) ||
        !has(c.layouts, b.layout) || !has(c.extents, name_of(b.extents)))
      continue;
    any_shape = true;
    const bool any_arm = std::any_of(c.implementations.begin(), c.implementations.end(),
                                     [&](const auto& i) { return has_arm(b, i); });
    if (any_arm) chosen.push_back(std::move(b));
  }
  if (!any_shape)
    deck.fail("microbench.extents", "no benchmark of " + text::join(c.benchmarks) + " has " +
                                        text::join(c.where) + ", " + text::join(c.layouts) +
                                        " and " + text::join(c.extents) +
                                        " extents (MatVec has dynamic extents only)");
  if (chosen.empty())
    deck.fail("microbench.implementations",
              text::join(c.implementations) +
                  " has no arm in the benchmarks chosen (karma-byref: "
                  "serial Stencil3D, TinyMatrixSum and Subspan3D only)");
  return chosen;
}

}  // namespace karma::microbench
