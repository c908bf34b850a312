// Division of 32-bit unsigned integers by a divisor fixed before a kernel
// runs, as a multiply-high, an add and two shifts (Granlund and Montgomery,
// "Division by invariant integers using multiplication", 1994). A GPU has no
// integer divider: a division by a value known only at run time costs about
// twenty instructions, which a kernel that recovers (i, j, k) from a flat
// index for every element cannot afford at full memory bandwidth.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma {

class Divisor {
 public:
  Divisor() = default;
  // d >= 1. With l = ceil(log2 d), the multiplier 2^32 (2^l - d) / d + 1
  // fits 32 bits because 2^l - d < d.
  explicit Divisor(std::uint32_t d) : d_(d) {
    int l = 0;
    while ((std::uint64_t{1} << l) < d) ++l;
    multiplier_ =
        static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - d)) / d) +
        1;
    shift_first_ = l > 0 ? 1 : 0;
    shift_second_ = l > 0 ? l - 1 : 0;
  }

  // n / d, exact for every 32-bit n.
  KOKKOS_INLINE_FUNCTION std::uint32_t quotient(std::uint32_t n) const {
    const auto high = static_cast<std::uint32_t>((std::uint64_t{multiplier_} * n) >> 32);
    return (high + ((n - high) >> shift_first_)) >> shift_second_;
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t divisor() const { return d_; }

 private:
  std::uint32_t d_ = 1, multiplier_ = 1;
  int shift_first_ = 0, shift_second_ = 0;
};

}  // namespace karma
