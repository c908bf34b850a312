// karma::Divisor: n / d as a multiply and shifts, checked against the
// division operator on the host and in a kernel.
#include "karma/divisor.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace {

std::vector<std::uint32_t> divisors() {
  std::vector<std::uint32_t> d;
  for (std::uint32_t k = 1; k <= 4096; ++k) d.push_back(k);
  for (int l = 12; l < 32; ++l)
    for (std::int64_t off : {-3, -1, 0, 1, 3})
      d.push_back(static_cast<std::uint32_t>((1LL << l) + off));
  d.push_back(0xFFFFFFFFu);
  d.push_back(0xFFFFFFFEu);
  return d;
}

std::vector<std::uint32_t> numerators(std::uint32_t d, std::mt19937& rng) {
  std::vector<std::uint32_t> n = {0,           1,           d - 1,       d,
                                  0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFEu};
  if (d < 0x7FFFFFFFu) n.push_back(2 * d - 1), n.push_back(2 * d);
  // The last multiple of d that fits and the value before it.
  const std::uint32_t last = 0xFFFFFFFFu / d * d;
  n.push_back(last);
  n.push_back(last - 1);
  for (int k = 0; k < 16; ++k) n.push_back(static_cast<std::uint32_t>(rng()));
  return n;
}

TEST(Divisor, MatchesDivisionOnTheHost) {
  std::mt19937 rng(7);
  for (const std::uint32_t d : divisors()) {
    const karma::Divisor div(d);
    EXPECT_EQ(div.divisor(), d);
    for (const std::uint32_t n : numerators(d, rng))
      ASSERT_EQ(div.quotient(n), n / d) << n << " / " << d;
  }
}

// Quotients of `div` that differ from the division operator, over 2^20
// numerators spread across the whole 32-bit range, both ends included. A
// free function: CUDA allows no device lambda in a test's private body.
std::int64_t wrong_quotients_in_kernel(const karma::Divisor& div) {
  const std::uint32_t d = div.divisor();
  std::int64_t wrong = 0;
  Kokkos::parallel_reduce(
      "test_divisor", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, 1 << 20),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& count) {
        const auto n = static_cast<std::uint32_t>(k * 4099 + (k & 1 ? 0xFFFFF000u : 0u));
        if (div.quotient(n) != n / d) ++count;
      },
      wrong);
  return wrong;
}

TEST(Divisor, MatchesDivisionInAKernel) {
  for (const std::uint32_t d : {1u, 3u, 7u, 256u, 257u, 1000u, 65535u, 1u << 31, 0xFFFFFFFFu})
    EXPECT_EQ(wrong_quotients_in_kernel(karma::Divisor(d)), 0) << "d = " << d;
}

}  // namespace
