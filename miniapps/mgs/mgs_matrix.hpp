// The input of karma-mgs: how rows are split over ranks, and the seeded
// matrices, random or with a chosen condition number. Every entry is a
// function of (seed, global row, column) alone, so a matrix is the same
// whatever the number of ranks, the layout or the backend.
#pragma once

#include "karma/math.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

namespace karma::mgs {

// Widest multivector the mini-app accepts: the multi-dot kernels keep one
// partial sum per column per GPU thread in shared memory, and the matrix
// generator one double per column per thread.
inline constexpr int max_columns = 128;

// splitmix64's finaliser: a counter-based generator, the same on every
// backend and independent of how work is split.
KOKKOS_INLINE_FUNCTION std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

KOKKOS_INLINE_FUNCTION std::uint64_t hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t a,
                                          std::uint64_t b = 0) {
  return mix(mix(mix(mix(seed) ^ stream) ^ a) ^ b);
}

// Uniform in [-1, 1), from the top 53 bits.
KOKKOS_INLINE_FUNCTION double uniform_pm1(std::uint64_t h) {
  return static_cast<double>(h >> 11) * (1.0 / 4503599627370496.0) - 1.0;  // 2^-52
}

// Streams of the hash, one per use, so no two uses share numbers.
enum : std::uint64_t {
  stream_entries = 1,
  stream_frequencies = 2,
  stream_rotation = 3,
  stream_signs = 4
};

template <class View>
struct GenerateRandom {
  View a;
  std::int64_t row_begin;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r) const {
    using T = typename View::non_const_value_type;
    const auto g = static_cast<std::uint64_t>(row_begin + r);
    for (int j = 0; j < static_cast<int>(a.extent(1)); ++j)
      a(r, j) = static_cast<T>(uniform_pm1(hash(seed, stream_entries, g, j)));
  }
};

// A = D U diag(sigma) V^T with exactly known singular values sigma (1 down to
// 1/condition, geometrically): U holds m columns of the orthonormal DCT-II
// basis of R^N at seeded distinct frequencies, D flips the sign of seeded
// rows, V is an orthogonal m x m matrix (a product of seeded Householder
// reflections). DU has orthonormal columns without any QR, so the input is
// not produced by the kind of algorithm it tests.
struct Conditioned {
  std::vector<std::int64_t> frequency;  // m distinct, in [0, N)
  std::vector<double> sigma;            // m singular values
  std::vector<double> v;                // m x m, row-major
};

inline Conditioned make_conditioned(std::int64_t n, int m, double condition, std::uint64_t seed) {
  Conditioned c;
  // Floyd's sampling: m distinct frequencies out of n.
  std::set<std::int64_t> chosen;
  for (std::int64_t j = n - m; j < n; ++j) {
    const auto t = static_cast<std::int64_t>(hash(seed, stream_frequencies, j) %
                                             static_cast<std::uint64_t>(j + 1));
    chosen.insert(chosen.count(t) ? j : t);
  }
  c.frequency.assign(chosen.begin(), chosen.end());
  c.sigma.resize(m);
  for (int k = 0; k < m; ++k)
    c.sigma[k] = m == 1 ? 1.0 : std::pow(condition, -static_cast<double>(k) / (m - 1));
  // V = H_1 ... H_m, H_i = I - 2 w w^T / (w^T w), in long double.
  std::vector<long double> v(static_cast<std::size_t>(m) * m, 0.0L), w(m), vw(m);
  for (int k = 0; k < m; ++k) v[k * m + k] = 1.0L;
  for (int i = 0; i < m; ++i) {
    long double ww = 0;
    for (int k = 0; k < m; ++k) {
      w[k] = uniform_pm1(hash(seed, stream_rotation, i, k));
      ww += w[k] * w[k];
    }
    for (int r = 0; r < m; ++r) {
      vw[r] = 0;
      for (int k = 0; k < m; ++k) vw[r] += v[r * m + k] * w[k];
    }
    for (int r = 0; r < m; ++r)
      for (int k = 0; k < m; ++k) v[r * m + k] -= 2.0L * vw[r] * w[k] / ww;
  }
  c.v.assign(v.begin(), v.end());
  return c;
}

template <class View>
struct GenerateConditioned {
  View a;
  std::int64_t row_begin, n;
  std::uint64_t seed;
  Kokkos::View<const std::int64_t*> frequency;
  Kokkos::View<const double*> sigma;
  Kokkos::View<const double**, Kokkos::LayoutRight> v;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r) const {
    using T = typename View::non_const_value_type;
    constexpr double pi = 3.14159265358979323846;
    const int m = static_cast<int>(a.extent(1));
    const auto g = static_cast<std::uint64_t>(row_begin + r);
    const double sign = (hash(seed, stream_signs, g) & 1) ? -1.0 : 1.0;
    double us[max_columns];  // row g of D U diag(sigma)
    for (int k = 0; k < m; ++k) {
      const auto f = static_cast<std::uint64_t>(frequency(k));
      // cos(pi (2g+1) f / (2N)) with the angle reduced exactly modulo 2 pi
      // in integers: (2g+1) f < 2 N^2 <= 2^63 for N <= 2^31.
      const std::uint64_t phase = ((2 * g + 1) * f) % (4 * static_cast<std::uint64_t>(n));
      const double scale = math::sqrt((f == 0 ? 1.0 : 2.0) / static_cast<double>(n));
      us[k] = sign * scale * sigma(k) *
              math::cos(pi * (static_cast<double>(phase) / (2.0 * static_cast<double>(n))));
    }
    for (int j = 0; j < m; ++j) {
      double s = 0;
      for (int k = 0; k < m; ++k) s += us[k] * v(j, k);
      a(r, j) = static_cast<T>(s);
    }
  }
};

enum class MatrixKind { random, conditioned };

// Fills this rank's rows [row_begin, row_begin + a.extent(0)) of the global
// n x m matrix.
template <class View>
void generate(const View& a, std::int64_t row_begin, std::int64_t n, MatrixKind kind,
              double condition, std::uint64_t seed) {
  using Policy = Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>;
  const Policy rows(0, static_cast<std::int64_t>(a.extent(0)));
  if (kind == MatrixKind::random) {
    Kokkos::parallel_for("mgs::generate_random", rows, GenerateRandom<View>{a, row_begin, seed});
    return;
  }
  const int m = static_cast<int>(a.extent(1));
  const Conditioned c = make_conditioned(n, m, condition, seed);
  Kokkos::View<std::int64_t*> frequency("mgs::frequency", m);
  Kokkos::View<double*> sigma("mgs::sigma", m);
  Kokkos::View<double**, Kokkos::LayoutRight> v("mgs::V", m, m);
  Kokkos::deep_copy(
      frequency,
      Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          c.frequency.data(), m));
  Kokkos::deep_copy(
      sigma,
      Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          c.sigma.data(), m));
  Kokkos::deep_copy(v, Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>(c.v.data(), m, m));
  Kokkos::parallel_for("mgs::generate_conditioned", rows,
                       GenerateConditioned<View>{a, row_begin, n, seed, frequency, sigma, v});
  Kokkos::fence();  // the small views go out of scope
}

}  // namespace karma::mgs
