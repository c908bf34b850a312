// Counter-based hashes: the same numbers on every backend, in any order.
#pragma once

#include "mesh/contact_geometry.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

// --- hashes: counter-based, the same on every backend ---------------------------

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t x) {
  // SplitMix64's finaliser.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

KOKKOS_INLINE_FUNCTION std::uint32_t mix32(std::uint32_t x) {
  // MurmurHash3's finaliser.
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

// The value whose statistics each row computes: f(j) in [0, 1000), a
// multiplicative (Fibonacci) hash of j. Cheap on purpose: the statistics
// measure how fast a storage is read, not integer arithmetic. Sums of these
// are exact in double (and in integers).
KOKKOS_INLINE_FUNCTION int row_value(int j) {
  return static_cast<int>(((static_cast<std::uint32_t>(j) * 0x9e3779b1u) >> 12) % 1000u);
}

// One pair's contribution to the order-independent checksum (a wrapping sum).
KOKKOS_INLINE_FUNCTION std::uint64_t pair_hash(std::int64_t i, std::int64_t j) {
  return mix64((static_cast<std::uint64_t>(i) << 32) ^ static_cast<std::uint64_t>(j) ^
               0x2545f4914f6cdd1dULL);
}

// Perturbation of one node coordinate, uniform in [-amplitude, amplitude].
KOKKOS_INLINE_FUNCTION int perturbation(std::uint64_t seed, std::int64_t node, int component,
                                        int amplitude) {
  const std::uint64_t key =
      mix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(node) * 3u +
            static_cast<std::uint64_t>(component));
  const std::uint64_t span = 2 * static_cast<std::uint64_t>(amplitude) + 1;
  return static_cast<int>((key >> 11) % span) - amplitude;
}

}  // namespace karma::contact
