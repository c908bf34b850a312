// Products of sizes checked against 64-bit overflow, for the deck checks that
// refuse a problem whose element or byte count does not fit (callers name the
// key with Deck::fail).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace karma {

// a * b, or std::nullopt when it overflows std::int64_t.
inline std::optional<std::int64_t> checked_product(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of `factors` times `start`, or std::nullopt on overflow.
inline std::optional<std::int64_t> checked_product(const std::vector<std::int64_t>& factors,
                                                   std::int64_t start = 1) {
  std::optional<std::int64_t> p = start;
  for (const auto f : factors)
    if (!(p = checked_product(*p, f))) return std::nullopt;
  return p;
}

}  // namespace karma
