// karma-hexgrad's deck: its keys (the schema --help prints and the run
// rules read) and the run's Config read from them, with the checks that
// need more than one key or the number of ranks.
#pragma once

#include "hexgrad_cuda.hpp"
#include "hexgrad_kernels.hpp"

#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::hexgrad {

enum class Implementation { kokkos, native_cuda, reference };

inline const std::vector<std::string> implementation_names = {"kokkos", "native-cuda", "reference"};

// The one kernel karma-hexgrad measures (karma/kernel_table.hpp), in every
// implementation, layout and extents: elements per second, and the launch
// time (main.cpp).
inline KernelTable hexgrad_kernels() {
  KernelTable t;
  t.fields["layout"] = {"left", "right"};
  t.fields["extents"] = {"static", "dynamic"};
  KernelEntry gradients("gradients", implementation_names, "{layout}-{extents}", "gradients",
                        "Melements/s", "elements", "problem.elements_global");
  // main.cpp's figures beside the harness's.
  gradients.figures = {
      {"elements_per_second.best", "problem.elements_global / kernel.time_s.min"},
      {"elements_per_second.median", "problem.elements_global / kernel.time_s.median"},
      {"time_per_launch_us.min", "kernel.time_s.min * 1e6"},
      {"time_per_launch_us.median", "kernel.time_s.median * 1e6"}};
  t.kernels.push_back(gradients);
  return t;
}

inline Schema hexgrad_schema() {
  Schema s;
  s.integer("hexgrad.n", std::int64_t{1} << 22,
            "elements: per rank with weak scaling, in all with strong (2^k is accepted)", 1);
  s.integer_list("hexgrad.box", {0, 0, 0},
                 "[nx, ny, nz]: the box of cells the n elements are the first of (x fastest); "
                 "[0, 0, 0] picks a near-cubic box for n",
                 {3}, 0);
  s.choice("hexgrad.layout", "left", {"left", "right"},
           "layout of the (N, 3, 8) arrays: left (element index fastest, coalesced on GPUs) "
           "or right (each element's 24 values together)");
  s.choice("hexgrad.extents", "static", {"static", "dynamic"},
           "static: View<T*[3][8]> (3 and 8 known to the compiler); dynamic: View<T***>");
  s.choice("hexgrad.precision", "double", {"float", "double"}, "element type");
  s.choice("hexgrad.implementation", "kokkos", implementation_names,
           "kokkos: the Kokkos kernel; native-cuda: the hand-written CUDA kernel (CUDA builds, "
           "layout left); reference: the host loop the checks use, timed");
  s.number("hexgrad.point.xi", 0.0, "reference coordinate xi of the evaluation point", -1.0, 1.0);
  s.number("hexgrad.point.eta", 0.0, "reference coordinate eta of the evaluation point", -1.0, 1.0);
  s.number("hexgrad.point.zeta", 0.0, "reference coordinate zeta of the evaluation point", -1.0,
           1.0);
  s.number("hexgrad.perturbation", 0.1,
           "random move of every vertex, per coordinate, as a fraction of the cell size (<= 0.1 "
           "keeps every element valid at every point)",
           0.0, 0.1);
  s.integer("hexgrad.affine_every", 64,
            "every k-th element (index % k == 0) is a random parallelepiped, whose gradients "
            "are known exactly",
            1);
  s.integer("hexgrad.seed", 2011, "seed of the mesh's random perturbation", 0);
  s.choice("hexgrad.scaling", "weak", {"weak", "strong"},
           "weak: n elements per rank (each rank its own mesh); strong: n elements in all, "
           "split over the ranks");
  s.run_section(100, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(Rule::axis, {"hexgrad.layout", "hexgrad.precision"});
  s.rule(Rule::tuning, {"hexgrad.implementation", "hexgrad.extents"});
  s.faults(
      {{"kernel-sign", "the sign of one reference-element gradient flipped in the timed kernel"},
       {"reference-sign", "the same in the host reference"}});
  s.retired("hexgrad.inject_fault", "use run.inject_fault (the same choices)", "none");
  return s;
}

struct Config {
  std::int64_t n_local = 0;   // elements on this rank
  std::int64_t n_global = 0;  // elements on all ranks
  std::int64_t offset = 0;    // strong scaling: global index of this rank's first element
  std::array<std::int64_t, 3> box{};
  Layout layout = Layout::left;
  bool static_extents = true;
  Precision precision = Precision::double_;
  Implementation implementation = Implementation::kokkos;
  std::string implementation_name;
  Point point;
  double perturbation = 0.1;
  std::int64_t affine_every = 64;
  std::int64_t seed = 0;
  bool strong = false;
};

inline Config read_config(const Deck& deck) {
  Config c;
  const std::int64_t n = deck.integer("hexgrad.n");
  const std::int64_t ranks = comm::size();
  const std::int64_t rank = comm::rank();
  c.strong = deck.string("hexgrad.scaling") == "strong";
  if (c.strong) {
    if (n < ranks)
      deck.fail("hexgrad.n", "strong scaling splits " + std::to_string(n) + " elements over " +
                                 std::to_string(ranks) + " ranks: it must be at least that many");
    c.n_global = n;
    const Block mine = block_of(n, ranks, rank);
    c.n_local = mine.count;
    c.offset = mine.first;
  } else {
    const auto global = checked_product(n, ranks);
    if (!global)
      deck.fail("hexgrad.n",
                "the global size over " + std::to_string(ranks) + " ranks overflows 64 bits");
    c.n_global = *global;
    c.n_local = n;
  }
  c.precision = precision_from_string(deck.string("hexgrad.precision"));
  // Two arrays of 24 values per element, all ranks together, must be
  // countable in bytes.
  if (!checked_product(c.n_global, std::int64_t{2 * values_per_element} *
                                       (c.precision == Precision::single ? 4 : 8)))
    deck.fail("hexgrad.n", "two arrays of " + std::to_string(c.n_global) +
                               " elements need more than 2^63 bytes: the byte count overflows");

  const auto box = deck.integer_list("hexgrad.box");
  const bool any_set = std::any_of(box.begin(), box.end(), [](auto v) { return v != 0; });
  const std::int64_t box_n = c.strong ? n : c.n_local;  // the elements one mesh holds
  if (any_set) {
    if (std::any_of(box.begin(), box.end(), [](auto v) { return v == 0; }))
      deck.fail("hexgrad.box", "either all three extents are 0 (a box chosen for n) or none is");
    const auto cells = checked_product(box);
    if (!cells) deck.fail("hexgrad.box", "the number of cells overflows 64 bits");
    if (*cells < box_n)
      deck.fail("hexgrad.box", "holds " + std::to_string(*cells) + " cells, fewer than the " +
                                   std::to_string(box_n) + " elements of hexgrad.n");
    c.box = {box[0], box[1], box[2]};
  } else {
    auto side = static_cast<std::int64_t>(std::ceil(std::cbrt(static_cast<double>(box_n))));
    while (side > 1 && (side - 1) * (side - 1) * (side - 1) >= box_n) --side;
    while (side * side * side < box_n) ++side;
    c.box = {side, side, (box_n + side * side - 1) / (side * side)};
  }
  // Vertex counters (3 per vertex) must stay below the affine elements' 2^62.
  const double vertex_ids = static_cast<double>(c.box[0] + 1) * static_cast<double>(c.box[1] + 1) *
                            static_cast<double>(c.box[2] + 1);
  if (3 * vertex_ids >= std::ldexp(1.0, 62))
    deck.fail(any_set ? "hexgrad.box" : "hexgrad.n", "the box has too many vertices to number");

  c.layout = layout_from_string(deck.string("hexgrad.layout"));
  c.static_extents = deck.string("hexgrad.extents") == "static";
  c.implementation_name = deck.string("hexgrad.implementation");
  c.implementation = c.implementation_name == "kokkos"        ? Implementation::kokkos
                     : c.implementation_name == "native-cuda" ? Implementation::native_cuda
                                                              : Implementation::reference;
  if (c.implementation == Implementation::native_cuda) {
    if (!native::available)
      deck.fail("hexgrad.implementation",
                "native-cuda needs a build with CUDA; this build's Kokkos has no CUDA backend");
    if (c.layout != Layout::left)
      deck.fail("hexgrad.layout",
                "native-cuda hard-codes the coalesced (LayoutLeft) strides: use layout left");
  }
  c.point = {deck.number("hexgrad.point.xi"), deck.number("hexgrad.point.eta"),
             deck.number("hexgrad.point.zeta")};
  c.perturbation = deck.number("hexgrad.perturbation");
  c.affine_every = deck.integer("hexgrad.affine_every");
  c.seed = deck.integer("hexgrad.seed");
  return c;
}

}  // namespace karma::hexgrad
