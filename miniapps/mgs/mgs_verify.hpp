// Checks of a QR factorization A = QR of a distributed N x m multivector,
// computed by the mini-app itself (every rank takes part; results are global):
//
//   orthogonality  ||Q^T Q - I||_F, the Gram matrix accumulated in compensated
//                  double (each thread's running sum carries its rounding
//                  error), summed over ranks in long double;
//   residual       ||A - QR||_F / ||A||_F in double;
//   R              upper triangular with a positive diagonal.
//
// Tolerances follow the error analyses: the loss of orthogonality of MGS
// grows like eps * kappa(A), that of CGS2 stays at eps (Giraud, Langou,
// Rozloznik, van den Eshof 2005); both have a backward error of order eps.
#pragma once

#include "mgs_kernels.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace karma::mgs {

// Columns of the Gram matrix per reduction (two doubles each per thread).
inline constexpr int gram_chunk = 16;

// sums[2t] + sums[2t+1] = a(:, c) . a(:, k0 + t), each thread's running sum
// compensated (Knuth's two-sum): a long sequential sum on a CPU thread
// stays accurate to the last bit of a double.
template <class View>
struct GramChunk {
  using value_type = double[];
  unsigned value_count;  // 2 * columns
  View a;
  int c, k0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r, double* sums) const {
    const double x = static_cast<double>(a(r, c));
    for (unsigned t = 0; 2 * t < value_count; ++t) {
      const double p = x * static_cast<double>(a(r, k0 + static_cast<int>(t)));
      const double s = sums[2 * t] + p;
      const double b = s - sums[2 * t];
      sums[2 * t + 1] += (sums[2 * t] - (s - b)) + (p - b);
      sums[2 * t] = s;
    }
  }
};

// X^T Y for the columns of one view (X = Y = a): m x m, row-major, summed
// over ranks. m * ceil(m / gram_chunk) reductions.
template <class View>
std::vector<long double> gram(const View& a) {
  const int m = static_cast<int>(a.extent(1));
  const auto rows = static_cast<std::int64_t>(a.extent(0));
  std::vector<long double> g(static_cast<std::size_t>(m) * m, 0.0L);
  Kokkos::View<double*, Kokkos::HostSpace> sums("mgs::gram_sums", 2 * gram_chunk);
  for (int c = 0; c < m; ++c) {
    for (int k0 = c; k0 < m; k0 += gram_chunk) {
      const int count = std::min(gram_chunk, m - k0);
      Kokkos::parallel_reduce("mgs::verify_gram", Policy(0, rows),
                              GramChunk<View>{static_cast<unsigned>(2 * count), a, c, k0},
                              Kokkos::subview(sums, Kokkos::make_pair(0, 2 * count)));
      Kokkos::fence();
      for (int t = 0; t < count; ++t)
        g[c * m + k0 + t] = static_cast<long double>(sums(2 * t)) + sums(2 * t + 1);
    }
  }
  for (int c = 0; c < m; ++c)
    for (int k = 0; k < c; ++k) g[c * m + k] = g[k * m + c];
  comm::sum_in_place(g.data(), m * m);
  return g;
}

inline double orthogonality_error(const std::vector<long double>& g, int m) {
  long double s = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      const long double e = g[i * m + j] - (i == j ? 1.0L : 0.0L);
      s += e * e;
    }
  return static_cast<double>(std::sqrt(s));
}

// sums[0] = ||A - QR||_F^2, sums[1] = ||A||_F^2 over this rank's rows.
template <class AView, class QView, class RView>
struct ResidualSums {
  using value_type = double[];
  unsigned value_count;  // 2
  AView a;
  QView q;
  RView r;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* sums) const {
    const int m = static_cast<int>(a.extent(1));
    for (int j = 0; j < m; ++j) {
      const double aij = static_cast<double>(a(i, j));
      double e = aij;
      for (int k = 0; k <= j; ++k) e -= static_cast<double>(q(i, k)) * r(k, j);
      sums[0] += e * e;
      sums[1] += aij * aij;
    }
  }
};

// ||A - QR||_F / ||A||_F over all ranks; r_host is m x m row-major, the same
// on every rank. Only the upper triangle of R is used: the R check looks at
// the rest.
template <class AView, class QView>
double residual_error(const AView& a, const QView& q, const std::vector<double>& r_host) {
  const int m = static_cast<int>(a.extent(1));
  Kokkos::View<double**, Kokkos::LayoutRight> r("mgs::verify_R", m, m);
  Kokkos::deep_copy(r,
                    Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>(
                        r_host.data(), m, m));
  Kokkos::View<double*, Kokkos::HostSpace> sums("mgs::residual_sums", 2);
  Kokkos::parallel_reduce("mgs::verify_residual", Policy(0, static_cast<std::int64_t>(a.extent(0))),
                          ResidualSums<AView, QView, decltype(r)>{2u, a, q, r}, sums);
  Kokkos::fence();
  double both[2] = {sums(0), sums(1)};
  comm::sum_in_place(both, 2);
  return std::sqrt(both[0]) / std::sqrt(both[1]);
}

// Entries of R that break "upper triangular with a positive diagonal"
// (NaN breaks it too).
inline double r_shape_violations(const std::vector<double>& r, int m) {
  double bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      const double x = r[i * m + j];
      if ((i > j && x != 0.0) || (i == j && !(x > 0.0)) || (i < j && !std::isfinite(x))) ++bad;
    }
  return bad;
}

// Eigenvalues of a symmetric m x m matrix (row-major), by cyclic Jacobi in
// long double: for the condition number of A from its Gram matrix.
inline std::vector<long double> symmetric_eigenvalues(std::vector<long double> a, int m) {
  for (int sweep = 0; sweep < 100; ++sweep) {
    long double off = 0, diag = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) (i == j ? diag : off) += a[i * m + j] * a[i * m + j];
    if (off <= diag * 1e-36L) break;
    for (int p = 0; p < m; ++p)
      for (int q = p + 1; q < m; ++q) {
        const long double apq = a[p * m + q];
        if (apq == 0) continue;
        const long double theta = (a[q * m + q] - a[p * m + p]) / (2 * apq);
        const long double t =
            (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const long double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < m; ++k) {  // columns p, q
          const long double akp = a[k * m + p], akq = a[k * m + q];
          a[k * m + p] = c * akp - s * akq;
          a[k * m + q] = s * akp + c * akq;
        }
        for (int k = 0; k < m; ++k) {  // rows p, q
          const long double apk = a[p * m + k], aqk = a[q * m + k];
          a[p * m + k] = c * apk - s * aqk;
          a[q * m + k] = s * apk + c * aqk;
        }
      }
  }
  std::vector<long double> eigenvalues(m);
  for (int i = 0; i < m; ++i) eigenvalues[i] = a[i * m + i];
  return eigenvalues;
}

// kappa(A) = sqrt(lambda_max / lambda_min) of A^T A: reliable while kappa^2
// stays well inside long double's precision (kappa up to about 1e8).
inline double condition_from_gram(const std::vector<long double>& g, int m) {
  const auto ev = symmetric_eigenvalues(g, m);
  const long double lo = *std::min_element(ev.begin(), ev.end());
  const long double hi = *std::max_element(ev.begin(), ev.end());
  if (!(lo > 0)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(std::sqrt(hi / lo));
}

struct Tolerances {
  double orthogonality;
  double residual;
};

// 10 m eps: the m^2 entries of Q^T Q - I each a few eps off for a perfect
// algorithm, with room for the constants of the bounds; MGS times kappa.
inline Tolerances tolerances(Algorithm algorithm, double eps, int m, double condition) {
  const double base = 10.0 * m * eps;
  const double kappa = std::max(1.0, condition);
  return {algorithm == Algorithm::cgs2 ? base : base * kappa, base};
}

// The largest condition number for which the MGS bound still says anything
// (its tolerance stays below 1).
inline double max_condition(double eps, int m) { return 1.0 / (10.0 * m * eps); }

// What a run's verification gives: its checks, and the condition number of
// A estimated from its Gram matrix.
struct Verified {
  std::vector<Check> checks;
  double condition_estimate = 0;
};

// The checks of Q (`q`, the factorization of `a0`) and R (`r`, row-major
// on the host): orthogonality, residual and R's shape, against the
// tolerances of `algorithm` at the matrix's condition number (`condition`,
// or where it is 0 the estimate).
template <class View>
Verified verify_factorization(const View& a0, const View& q, const std::vector<double>& r,
                              Algorithm algorithm, double condition) {
  using T = typename View::non_const_value_type;
  const int m = static_cast<int>(q.extent(1));
  Verified out;
  const double orthogonality = orthogonality_error(gram(q), m);
  const double residual = residual_error(a0, q, r);
  out.condition_estimate = condition_from_gram(gram(a0), m);
  const double kappa = condition > 0 ? condition : out.condition_estimate;
  const Tolerances tol = tolerances(algorithm, std::numeric_limits<T>::epsilon(), m, kappa);
  out.checks.push_back({"orthogonality", "||Q^T Q - I||_F", orthogonality, tol.orthogonality});
  out.checks.push_back({"residual", "||A - QR||_F / ||A||_F", residual, tol.residual});
  out.checks.push_back({"R", "entries of R off the upper triangle or with a diagonal <= 0",
                        r_shape_violations(r, m), 0.0});
  return out;
}

}  // namespace karma::mgs
