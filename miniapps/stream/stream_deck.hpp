// karma-stream's deck: its keys (the schema --help prints and the run rules
// read) and the run's Config read from them, with the checks that need
// more than one key, the number of ranks or the run section.
#pragma once

#include "stream_kernels.hpp"

#include "karma/array.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/kernel_table.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

// In the anonymous namespace, as it was in main.cpp: code versions
// (karma/code_version.hpp) look names up as C++ does, and stream_dot.hpp's
// DotTeams3D calls a member product() that they take for this one, so its
// text is part of that kernel's code version.
namespace {

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;  // callers check overflow first
  return p;
}

}  // namespace

namespace karma::stream {

inline std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : kernel_table) names.push_back(k.name);
  return names;
}

// Every kernel karma-stream measures (karma/kernel_table.hpp), each its own
// work; BabelStream's results beside karma's carry the same kernels.
inline KernelTable stream_kernels() {
  KernelTable t;
  for (const auto& k : kernel_table)
    t.kernels.push_back({k.name, {"kokkos", "babelstream"}, k.name, k.name, "GB/s", "bytes"});
  return t;
}

inline Schema stream_schema() {
  Schema s;
  s.integer_list("stream.shape", {std::int64_t{1} << 25},
                 "array extents: [n] for 1D, [nx, ny, nz] for 3D; per rank with weak "
                 "scaling, global with strong (2^k is accepted)",
                 {1, 3}, 1);
  s.choice("stream.layout", "right", {"left", "right"},
           "array layout: left (Fortran order) or right (C order); matters for 3D");
  s.choice("stream.precision", "double", {"float", "double"}, "element type");
  s.choice("stream.policy_3d", "auto", {"auto", "range", "mdrange"},
           "how 3D kernels iterate: range (a RangePolicy over items of a few neighbouring "
           "elements, (i, j, k) recovered by multiplications; the dot on a GPU walks the "
           "elements in memory order), mdrange (Kokkos' MDRangePolicy, tiled); auto: range on "
           "GPUs, mdrange on hosts. Only for 3D shapes; range needs fewer than 2^31 elements "
           "per rank");
  s.choice_list("stream.kernels", kernel_names(), kernel_names(),
                "kernels to run; each repetition runs them in the order copy, mul, add, "
                "triad, dot, nstream");
  s.choice("stream.scaling", "weak", {"weak", "strong"},
           "weak: shape is per rank; strong: shape is global and its first extent is split "
           "over the ranks");
  s.run_section(100, 2);
  // What a reportable run may change (docs/run-rules.md).
  s.rule(Rule::axis, {"stream.layout", "stream.precision"});
  s.rule(Rule::tuning, {"stream.policy_3d"});
  s.faults({{"array", "after the timed runs, the first element of c on the last rank doubled"},
            {"dot", "every dot's sum off by one part in a thousand"}});
  return s;
}

struct Config {
  std::vector<std::int64_t> global_shape;
  std::vector<std::int64_t> local_shape;
  Layout layout;
  Precision precision;
  Policy3D policy_3d = Policy3D::mdrange;
  bool policy_3d_by_size = false;          // `auto` on a GPU: the size picked it (read_policy_3d)
  std::vector<const KernelSpec*> kernels;  // in table order
  bool strong;
};

// Whether `iterations` of `kernels` keep every value and the dot sum finite
// (nstream grows the values about 1.92x an iteration, so a long run would
// verify against infinity); returns how many do, at most `iterations`.
template <class T>
std::int64_t finite_iterations(const std::vector<const KernelSpec*>& kernels,
                               const std::vector<std::int64_t>& global_shape,
                               std::int64_t iterations) {
  double elements = 1;
  for (auto extent : global_shape) elements *= static_cast<double>(extent);
  Gold<T> gold;
  for (std::int64_t it = 0; it < iterations; ++it) {
    const T a = gold.a, b = gold.b, c = gold.c;
    for (const auto* k : kernels) {
      const double dot = gold.apply(k->kernel) * elements;
      if (!std::isfinite(dot) || !std::isfinite(gold.a) || !std::isfinite(gold.b) ||
          !std::isfinite(gold.c))
        return it;
    }
    if (gold.a == a && gold.b == b && gold.c == c) return iterations;  // settled for good
  }
  return iterations;
}

// 32-bit indices where items and elements (stream_kernels.hpp) cannot overflow them;
// Policy3D::range needs them.
inline bool small_index(const std::vector<std::int64_t>& local_shape) {
  return product(local_shape) <= std::numeric_limits<int>::max() - 64;
}

inline Policy3D read_policy_3d(const Deck& deck, const std::vector<std::int64_t>& local_shape) {
  const std::string name = deck.string("stream.policy_3d");
  if (local_shape.size() != 3) {
    if (name != "auto")
      deck.fail("stream.policy_3d", "applies to 3D shapes only; stream.shape is 1D");
    return Policy3D::mdrange;
  }
  const bool fits = small_index(local_shape);
  if (name == "range" && !fits)
    deck.fail("stream.policy_3d",
              "range indexes items with 32 bits: the arrays need fewer than 2^31 - 64 "
              "elements per rank, they have " +
                  std::to_string(product(local_shape)));
  if (name == "range" || (name == "auto" && is_gpu_space<Kokkos::DefaultExecutionSpace>() && fits))
    return Policy3D::range;
  return Policy3D::mdrange;
}

inline Config read_config(const Deck& deck, const RunSettings& run) {
  Config c;
  c.layout = layout_from_string(deck.string("stream.layout"));
  c.precision = precision_from_string(deck.string("stream.precision"));
  c.strong = deck.string("stream.scaling") == "strong";
  const auto chosen = deck.string_list("stream.kernels");
  for (const auto& k : kernel_table)
    if (std::find(chosen.begin(), chosen.end(), k.name) != chosen.end()) c.kernels.push_back(&k);

  const auto shape = deck.integer_list("stream.shape");
  const std::int64_t ranks = comm::size();
  c.global_shape = shape;
  c.local_shape = shape;
  if (c.strong) {
    if (shape[0] < ranks)
      deck.fail("stream.shape", "strong scaling splits the first extent (" +
                                    std::to_string(shape[0]) + ") over " + std::to_string(ranks) +
                                    " ranks: it must be at least the number of ranks");
    c.local_shape[0] = block_of(shape[0], ranks, comm::rank()).count;
  } else {
    // Weak scaling: the global problem is ranks copies of the deck's.
    const auto global = checked_product(shape[0], ranks);
    if (!global)
      deck.fail("stream.shape",
                "the global size over " + std::to_string(ranks) + " ranks overflows 64 bits");
    c.global_shape[0] = *global;
  }

  // Three arrays of the whole global problem must be countable in bytes.
  const std::int64_t element_bytes = c.precision == Precision::single ? 4 : 8;
  if (!checked_product(c.global_shape, 3 * element_bytes))
    deck.fail("stream.shape",
              "3 arrays of this shape need more than 2^63 bytes: the byte count overflows");

  std::int64_t iterations = 0;
  if (__builtin_add_overflow(run.warmup, run.repetitions, &iterations))
    iterations = std::numeric_limits<std::int64_t>::max();
  const std::int64_t finite =
      c.precision == Precision::single
          ? finite_iterations<float>(c.kernels, c.global_shape, iterations)
          : finite_iterations<double>(c.kernels, c.global_shape, iterations);
  if (finite < iterations)
    deck.fail(run.warmup > run.repetitions ? "run.warmup" : "run.repetitions",
              "run.warmup + run.repetitions = " + std::to_string(iterations) +
                  " iterations of these kernels take the arrays' " + to_string(c.precision) +
                  " values or the dot sum past their range after " + std::to_string(finite) +
                  " (nstream nearly doubles them every iteration): at " + "most " +
                  std::to_string(finite) + " in all");
  c.policy_3d = read_policy_3d(deck, c.local_shape);
  c.policy_3d_by_size = c.local_shape.size() == 3 && deck.string("stream.policy_3d") == "auto" &&
                        is_gpu_space<Kokkos::DefaultExecutionSpace>();
  return c;
}

}  // namespace karma::stream
