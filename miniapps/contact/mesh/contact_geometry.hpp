// contact's types and its fixed-point geometry.
//
// Coordinates are fixed-point integers (units of h / 81920), so every
// backend and thread count computes bit-identical boxes and the overlap test
// is exact: the lists, and so every checksum, are the same everywhere.
#pragma once

#include "karma/array.hpp"
#include "karma/ragged.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Index = std::int64_t;
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>;

// Fixed-point geometry: block A's element size h is `unit`; every length of
// the problem (0.5, 0.2 h, 0.05, 0.05 per step) is a whole number of units.
inline constexpr int unit = 81920;
inline constexpr int h_a = unit;            // block A: n x n x n elements of size 1
inline constexpr int h_b = unit / 2;        // block B: 2n x 2n x n elements of size 0.5
inline constexpr int perturb_a = unit / 5;  // nodes move by up to 0.2 h
inline constexpr int perturb_b = unit / 10;
inline constexpr int inflate = unit / 20;    // boxes grow by 0.05 on every side
inline constexpr int step_move = unit / 20;  // block B moves down 0.05 per step
inline constexpr int start_gap = unit / 2;   // and starts 0.5 above block A
inline constexpr int standard_steps = 30;    // ... ending 1.0 deep inside A
// How far a box reaches beyond its element's nominal cube: the node
// perturbation and the inflation (block A's, the larger, for both blocks).
inline constexpr int box_reach = perturb_a + inflate;

inline constexpr bool on_gpu = is_gpu_space<Exec>();

}  // namespace karma::contact
