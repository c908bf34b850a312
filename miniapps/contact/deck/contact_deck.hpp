// karma-contact's deck: its keys (the schema --help prints and the run rules
// read) and the run's Config read from them, with the checks that need
// more than one key (the run section's too) or the number of ranks.
#pragma once

#include "deck/contact_config.hpp"
#include "partition/contact_decomposition.hpp"

#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace karma::contact {

// Every kernel karma-contact measures (karma/kernel_table.hpp): per storage
// its rebuild, its sweeps of row statistics and its whole step, each phase
// its own work, the storages its alternatives; all the work over all the
// time, the scene moving from step to step. arborx's rebuild is ArborX's,
// its sweeps karma's. The expressions give what a result records of its
// work, repetitions and figures (main.cpp, contact_report.hpp): a
// replicated run's ranks each solve a copy, a partitioned run's one mesh;
// no steps is the one rebuild at the start.
inline KernelTable contact_kernels() {
  KernelTable t;
  t.fields["storage"] = karma_storage_names;
  t.fields["any"] = storage_names;
  const std::string steps = "max(deck.resolved.contact.steps, 1)";
  const std::string sweeps = "deck.resolved.contact.sweeps";
  const std::string copies = "(1 if problem.decomposition.mode == 'partitioned' else mpi.ranks)";
  const std::string pairs = "problem.pairs_all_steps_per_rank * " + copies + " / " + steps;
  const std::string of_kernels = "kernels[kernel.variant + '.build'].time_s.mean + " + sweeps +
                                 " * kernels[kernel.variant + '.stats'].time_s.mean";
  const std::string step = "kernels[kernel.variant + '.step'].time_s.mean";
  auto phase = [&](const std::string& storage, const char* implementation, const std::string& kind,
                   const char* units, const char* per) {
    KernelEntry e{storage + "." + kind, {implementation}, storage, kind, units, per, "", "mean"};
    e.count = e.per == "pairs" ? pairs : "";
    e.repetitions = kind == "stats" ? steps + " * " + sweeps : steps;
    e.figures["speedup_vs_linked_list"] =
        "kernels['linked-list." + kind + "'].time_s.mean / kernel.time_s.mean";
    if (kind == "build") {
      e.figures["rebuild_s_mean"] = "kernel.time_s.mean";
      e.figures["step_s_mean"] = step + " if " + step + " else " + of_kernels;
    } else if (kind == "stats") {
      e.figures["time_per_sweep_s"] = "kernel.time_s.mean";
      e.figures["rows_per_s"] = "problem.elements * " + copies + " / kernel.time_s.mean";
    } else {
      e.figures["step_s_mean"] = "kernel.time_s.mean";
    }
    if (kind != "stats") e.figures["step_s_mean_of_kernels"] = of_kernels;
    return e;
  };
  t.kernels = {phase("{storage}", "kokkos", "build", "pairs/s", "pairs"),
               phase("arborx", "arborx", "build", "pairs/s", "pairs"),
               phase("{any}", "kokkos", "stats", "GB/s", "bytes"),
               phase("{storage}", "kokkos", "step", "pairs/s", "pairs"),
               phase("arborx", "arborx", "step", "pairs/s", "pairs")};
  return t;
}

inline Schema contact_schema() {
  Schema s;
  s.integer("contact.n", 16,
            "block A is n x n x n elements of size 1, block B 2n x 2n x n of size 0.5: "
            "N = 5 n^3 elements (16: 20k, 64: 1.3M, 126: 10M, the MATAR paper's size)",
            1);
  s.integer("contact.steps", standard_steps,
            "steps; each moves block B down 0.05, rebuilds the lists and computes the row "
            "statistics (30: from 0.5 above A to 1.0 inside it; 0: one rebuild at the start)",
            0);
  s.integer("contact.sweeps", 100,
            "timed row-statistics sweeps per step (10000 reproduces the MATAR paper)", 1);
  s.choice_list("contact.storage", karma_storage_names, storage_names,
                "neighbour-list storages, run side by side on the same search: linked-list "
                "(HOSS: a head per element, a node pool with an atomic counter), csr-two-pass "
                "(count, scan, fill), dynamic-ragged (rows of fixed capacity, grown on overflow); "
                "arborx: the ArborX library's bounding volume hierarchy and intersection query "
                "over the same boxes into compressed rows (builds with ArborX only)");
  s.choice("contact.search", "pairs", {"pairs", "rows"},
           "pairs: each overlapping pair is found once and written into both rows, with atomics "
           "(push_back, a swapped-in list head, an atomic cursor); rows: each row is searched and "
           "written by its own thread, without atomics on the rows");
  s.integer("contact.capacity", 32,
            "dynamic-ragged: first capacity of a row; the linked-list pool and the compressed "
            "values start with N x capacity entries too",
            1);
  s.number("contact.growth_factor", 1.5,
           "dynamic-ragged: when a row outgrows the capacity, every row's capacity grows to the "
           "larger of the longest row and this factor times the capacity, as a vector grows, so "
           "that a run reallocates a few times at most (1: to the longest row alone, as karma "
           "1.0 did)",
           1.0, 4.0);
  s.choice("contact.step_timing", "whole", {"whole", "kernels"},
           "whole: each storage's step, its rebuild and sweeps, is also run as an application "
           "runs it and timed as one, between two fences (the <storage>.step kernels: the step "
           "figures); kernels: a step's figure is the sum of its rebuild's and sweeps' own fenced "
           "means, as karma 1.0 timed it. Either way each kernel keeps its own fenced samples");
  s.integer("contact.seed", 2021, "seed of the node perturbations", 0);
  s.number("contact.cell_size", 1.0, "edge of a search cell, in units of block A's element size",
           0.25, 16.0);
  s.choice("contact.dynamic_layout", "auto", {"auto", "right", "left"},
           "dynamic-ragged storage: right (a row contiguous), left (slot k of neighbouring rows "
           "contiguous: coalesced on GPUs), auto (left on GPUs, right on CPUs)");
  s.integer("contact.lanes", 0,
            "vector lanes sharing a row in the statistics of compressed (and right-layout "
            "dynamic) rows on a GPU: 1, 2, 4, 8, 16 or 32 (0: 8 on GPUs; CPUs use 1)",
            0, 32);
  s.integer("contact.list_stripes", 0,
            "linked-list: counters the node pool is split into, element i taking nodes from "
            "stripe i mod stripes (0: 1 on CPUs, one counter as in HOSS; 4096 on GPUs, where "
            "one counter serialises the whole device)",
            0, 1 << 20);
  s.integer("contact.brute_force_max_elements", 25000,
            "check every row against a host O(N^2) search at every step when N is at most this", 0);
  s.integer("contact.sample_rows", 64,
            "rows checked at every step against an O(N) scan of all boxes on the device", 0);
  s.boolean("contact.overflow_check", true,
            "every step, also build dynamic rows of capacity 8 (less for tiny decks): they must "
            "overflow, grow, refill and agree with the other storages");
  s.choice("contact.decomposition", "replicated", {"replicated", "partitioned"},
           "replicated: every rank builds and checks its own copy of the whole problem (weak "
           "scaling); partitioned: one mesh split over the ranks by recursive bisection of the "
           "x-y plane, each rank owning its elements' rows and receiving its neighbours' "
           "elements within reach as ghosts every step (strong scaling; the brute force and the "
           "sampled rows are off: they need every box)");
  s.faults({{"self", "at the last step, a self-pair in one entry of the last storage"},
            {"foreign", "at the last step, a far element in one entry of the last storage"},
            {"search",
             "the search misses one element's pairs with lower ids in every storage alike (an "
             "element of B's bottom layer whose rows are not sampled)"},
            {"ghost",
             "partitioned: the first ghost each rank sends each neighbour is left out of the "
             "exchange"},
            {"whole-step",
             "at the last step, a self-pair in one entry of the first storage's whole step "
             "(contact.step_timing: whole), which its rebuild then builds anew"}});
  s.retired("contact.inject_fault", "use run.inject_fault (the same choices)", "none");
  s.stepped_run_section(1,
                        "untimed rebuilds and sweeps at the start position before the timed steps");
  // What a reportable run may change (docs/run-rules.md).
  s.rule(karma::Rule::tuning, {"contact.storage", "contact.search", "contact.capacity",
                               "contact.cell_size", "contact.dynamic_layout", "contact.lanes",
                               "contact.list_stripes", "contact.growth_factor"});
  return s;
}

inline Config read_config(const Deck& deck, const RunSettings& run) {
  Config c;
  const std::int64_t n = deck.integer("contact.n");
  // Element ids are 32-bit (as node indices of the lists): 5 n^3 < 2^31. The
  // count itself is computed with overflow checks, so that the message
  // about a huge n does not print a wrapped one.
  std::int64_t n3 = 0, elements = 0;
  if (__builtin_mul_overflow(n, n, &n3) || __builtin_mul_overflow(n3, n, &n3) ||
      __builtin_mul_overflow(n3, std::int64_t{5}, &elements)) {
    char count[32];
    std::snprintf(count, sizeof(count), "%.2g", 5.0 * static_cast<double>(n) * n * n);
    deck.fail("contact.n", "n = " + std::to_string(n) + " gives 5 n^3 = " + count +
                               " elements, more than 2^63 - 1 (a 64-bit count); element ids "
                               "are 32-bit, so n is at most 754");
  }
  if (n > 754)
    deck.fail("contact.n", "n = " + std::to_string(n) +
                               " gives 5 n^3 = " + std::to_string(elements) +
                               " elements; element ids are 32-bit, so n is at most 754");
  c.n = static_cast<int>(n);
  c.shape = mesh_shape(c.n);
  c.steps = deck.integer("contact.steps");
  // Block B must stay inside 32-bit fixed-point coordinates.
  if (c.steps > 100000) deck.fail("contact.steps", "at most 100000 steps");
  c.sweeps = deck.integer("contact.sweeps");
  c.capacity = deck.integer("contact.capacity");
  if (c.capacity > (std::int64_t{1} << 30)) deck.fail("contact.capacity", "at most 2^30");
  c.seed = static_cast<std::uint64_t>(deck.integer("contact.seed"));
  c.cell = static_cast<int>(std::lround(deck.number("contact.cell_size") * unit));
  for (const auto& name : deck.string_list("contact.storage"))
    for (std::size_t k = 0; k < storage_names.size(); ++k)
      if (storage_names[k] == name) c.storages.push_back(static_cast<Storage>(k));
  if (!have_arborx && has_storage(c, Storage::arborx))
    deck.fail("contact.storage",
              "arborx needs a karma built with ArborX (cmake -DKARMA_ENABLE_ARBORX=ON "
              "-DArborX_ROOT=...); this build has none");
  const std::string layout = deck.string("contact.dynamic_layout");
  c.dynamic_left = layout == "left" || (layout == "auto" && on_gpu);
  const std::int64_t lanes = deck.integer("contact.lanes");
  if (lanes != 0 && (lanes & (lanes - 1)) != 0)
    deck.fail("contact.lanes",
              "must be a power of two (1, 2, 4, 8, 16 or 32), or 0, got " + std::to_string(lanes));
  c.lanes = !on_gpu ? 1 : (lanes == 0 ? 8 : static_cast<int>(lanes));
  c.brute_force_max = deck.integer("contact.brute_force_max_elements");
  c.sample_rows = deck.integer("contact.sample_rows");
  c.overflow_check = deck.boolean("contact.overflow_check");
  c.pairs = deck.string("contact.search") == "pairs";
  const std::int64_t stripes = deck.integer("contact.list_stripes");
  c.list_stripes = stripes > 0 ? static_cast<int>(stripes) : (on_gpu ? 4096 : 1);
  c.partitioned = deck.string("contact.decomposition") == "partitioned";
  c.growth_factor = deck.number("contact.growth_factor");
  c.whole_steps = deck.string("contact.step_timing") == "whole";
  const std::string& fault = run.inject_fault;
  if (fault == "ghost" && !c.partitioned)
    deck.fail("run.inject_fault", "ghost needs contact.decomposition: partitioned");
  if (fault == "whole-step" && !c.whole_steps)
    deck.fail("run.inject_fault", "whole-step needs contact.step_timing: whole");
  if (c.partitioned && fault != "none" && fault != "ghost")
    deck.fail("run.inject_fault", "a partitioned run injects none or ghost, not " + fault);
  if (c.partitioned) {
    for (const Region& r : bisect_plane(c.n, comm::size()))
      if (r.empty())
        deck.fail("contact.decomposition",
                  "n = " + std::to_string(n) + " has too few columns of block A to give each of " +
                      std::to_string(comm::size()) + " ranks a part of the plane");
    // Both need every element's box on every rank.
    c.brute_force_max = -1;
    c.sample_rows = 0;
  }
  return c;
}

}  // namespace karma::contact
