// karma-mgs on small matrices: every algorithm (and, in a CUDA build, the
// native and cuBLAS implementations) against a QR computed independently here
// by Householder reflections in long double; the checks failing on a Q that
// is not orthogonal and on a wrong R; the input's row split, independence of
// the split, and exact conditioning; the launch and byte counts; the run
// rules' verdict on the class decks.
#include "mgs_cublas.hpp"
#include "mgs_cuda.hpp"
#include "mgs_deck.hpp"
#include "mgs_kernels.hpp"
#include "mgs_matrix.hpp"
#include "mgs_verify.hpp"

#include "karma/build_info.hpp"
#include "karma/run_rules.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace karma_test_mgs {

using namespace karma::mgs;

// Row-major n x m in long double.
struct Dense {
  int n = 0, m = 0;
  std::vector<long double> v;
  Dense(int rows, int cols) : n(rows), m(cols), v(static_cast<std::size_t>(rows) * cols, 0.0L) {}
  long double& operator()(int i, int j) { return v[static_cast<std::size_t>(i) * m + j]; }
  long double operator()(int i, int j) const { return v[static_cast<std::size_t>(i) * m + j]; }
};

// A = QR by Householder reflections in long double, signs chosen so that R
// has a positive diagonal (the factorization is then unique).
void householder_qr(const Dense& a_in, Dense& q, Dense& r) {
  const int n = a_in.n, m = a_in.m;
  Dense a = a_in;
  std::vector<std::vector<long double>> reflectors;
  for (int k = 0; k < m; ++k) {
    std::vector<long double> v(n - k);
    long double norm = 0;
    for (int i = k; i < n; ++i) norm += a(i, k) * a(i, k);
    norm = std::sqrt(norm);
    const long double alpha = a(k, k) > 0 ? -norm : norm;
    for (int i = k; i < n; ++i) v[i - k] = a(i, k);
    v[0] -= alpha;
    long double vv = 0;
    for (auto x : v) vv += x * x;
    const long double vn = std::sqrt(vv);
    for (auto& x : v) x /= vn;
    for (int j = k; j < m; ++j) {
      long double d = 0;
      for (int i = k; i < n; ++i) d += v[i - k] * a(i, j);
      for (int i = k; i < n; ++i) a(i, j) -= 2 * v[i - k] * d;
    }
    reflectors.push_back(v);
  }
  q = Dense(n, m);
  r = Dense(m, m);
  for (int j = 0; j < m; ++j) q(j, j) = 1;
  for (int k = m - 1; k >= 0; --k) {
    const auto& v = reflectors[k];
    for (int j = 0; j < m; ++j) {
      long double d = 0;
      for (int i = k; i < n; ++i) d += v[i - k] * q(i, j);
      for (int i = k; i < n; ++i) q(i, j) -= 2 * v[i - k] * d;
    }
  }
  for (int i = 0; i < m; ++i)
    for (int j = i; j < m; ++j) r(i, j) = a(i, j);
  for (int k = 0; k < m; ++k)
    if (r(k, k) < 0) {
      for (int j = 0; j < m; ++j) r(k, j) = -r(k, j);
      for (int i = 0; i < n; ++i) q(i, k) = -q(i, k);
    }
}

template <class View>
void upload(const View& a, const Dense& d) {
  auto h = Kokkos::create_mirror_view(a);
  for (int i = 0; i < d.n; ++i)
    for (int j = 0; j < d.m; ++j)
      h(i, j) = static_cast<typename View::non_const_value_type>(d(i, j));
  Kokkos::deep_copy(a, h);
}

template <class View>
Dense download(const View& a) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  Dense d(static_cast<int>(a.extent(0)), static_cast<int>(a.extent(1)));
  for (int i = 0; i < d.n; ++i)
    for (int j = 0; j < d.m; ++j) d(i, j) = h(i, j);
  return d;
}

// The 6 x 3 example, and a random 200 x 12 one.
Dense example_6x3() {
  const long double rows[6][3] = {{4, -2, 1}, {3, 6, -4}, {-1, 2, 8},
                                  {2, -3, 5}, {0, 1, -1}, {5, 2, 3}};
  Dense a(6, 3);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) a(i, j) = rows[i][j];
  return a;
}

Dense random_matrix(int n, int m, std::uint64_t seed) {
  Dense a(n, m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) a(i, j) = uniform_pm1(hash(seed, stream_entries, i, j));
  return a;
}

enum class Impl { kokkos, native, cublas };

struct Case {
  Algorithm algorithm;
  Impl impl;
  bool on_device;
};

// Factors A with one variant; returns (Q, R) in long double.
template <class T, class Layout>
std::pair<Dense, Dense> factor_with(const Case& c, const Dense& a_in, Tally* tally = nullptr) {
  using View = Kokkos::View<T**, Layout>;
  View a("a", a_in.n, a_in.m);
  upload(a, a_in);
  Workspace<T> ws(a_in.m, c.on_device);
  Tally t;
  bool r_on_device = c.on_device;
  if (c.impl == Impl::kokkos) {
    factor(c.algorithm, a, ws, t);
  } else {
    r_on_device = true;
#if defined(KOKKOS_ENABLE_CUDA)
    const auto rs = static_cast<std::int64_t>(a.stride(0));
    const auto cs = static_cast<std::int64_t>(a.stride(1));
    if (c.impl == Impl::native) {
      native::Context<T> ctx;
      native::factor_mgs(ctx, a.data(), a_in.n, a_in.m, rs, cs, ws.rd(0, 0), c.on_device, t);
      Kokkos::fence();
    }
#if defined(KARMA_HAVE_CUBLAS)
    if (c.impl == Impl::cublas) {
      blas::Context<T> ctx;
      blas::factor_mgs(ctx, a.data(), a_in.n, a_in.m, rs, cs, ws.rd(0, 0), c.on_device, t);
      Kokkos::fence();
    }
#endif
#endif
  }
  if (tally) *tally = t;
  const auto r = ws.r_matrix(r_on_device);
  Dense rd(a_in.m, a_in.m);
  for (int i = 0; i < a_in.m; ++i)
    for (int j = 0; j < a_in.m; ++j) rd(i, j) = r[i * a_in.m + j];
  return {download(a), rd};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (auto alg : {Algorithm::mgs, Algorithm::mgs_fused, Algorithm::cgs2})
    for (bool dev : {true, false}) out.push_back({alg, Impl::kokkos, dev});
#if defined(KOKKOS_ENABLE_CUDA)
  for (bool dev : {true, false}) out.push_back({Algorithm::mgs, Impl::native, dev});
#if defined(KARMA_HAVE_CUBLAS)
  for (bool dev : {true, false}) out.push_back({Algorithm::mgs, Impl::cublas, dev});
#endif
#endif
  return out;
}

std::string describe(const Case& c) {
  const char* impl = c.impl == Impl::kokkos   ? "kokkos"
                     : c.impl == Impl::native ? "native"
                                              : "cublas";
  return std::string(to_string(c.algorithm)) + "/" + impl + (c.on_device ? "/device" : "/host");
}

long double max_difference(const Dense& x, const Dense& y) {
  long double d = 0;
  for (std::size_t i = 0; i < x.v.size(); ++i) d = std::max(d, std::fabs(x.v[i] - y.v[i]));
  return d;
}

template <class T, class Layout>
void against_householder(const Dense& a, double tolerance) {
  Dense q_ref(1, 1), r_ref(1, 1);
  householder_qr(a, q_ref, r_ref);
  for (const auto& c : cases()) {
    const auto [q, r] = factor_with<T, Layout>(c, a);
    EXPECT_LT(max_difference(q, q_ref), tolerance) << describe(c) << " Q";
    // R scales with A: compare relative to its largest entry.
    EXPECT_LT(max_difference(r, r_ref) / std::fabs(r_ref(0, 0)), tolerance) << describe(c) << " R";
  }
}

TEST(MgsFactorization, SixByThreeAgainstHouseholder) {
  against_householder<double, Kokkos::LayoutLeft>(example_6x3(), 1e-13);
  against_householder<double, Kokkos::LayoutRight>(example_6x3(), 1e-13);
}

TEST(MgsFactorization, RandomAgainstHouseholder) {
  // 700 rows: more than one block of rows per item on a host backend.
  const Dense a = random_matrix(700, 12, 7);
  against_householder<double, Kokkos::LayoutLeft>(a, 1e-12);
  against_householder<double, Kokkos::LayoutRight>(a, 1e-12);
  against_householder<float, Kokkos::LayoutLeft>(a, 2e-4);
  against_householder<float, Kokkos::LayoutRight>(a, 2e-4);
}

TEST(MgsFactorization, OneColumnAndSquare) {
  against_householder<double, Kokkos::LayoutLeft>(random_matrix(50, 1, 3), 1e-14);
  against_householder<double, Kokkos::LayoutRight>(random_matrix(9, 9, 5), 1e-11);
}

// Widths the GPU kernels treat apart: 17 to 32 sums (rows shared by two
// items), and more than 32 (sums in local memory).
TEST(MgsFactorization, WideAgainstHouseholder) {
  against_householder<double, Kokkos::LayoutLeft>(random_matrix(300, 24, 13), 1e-12);
  against_householder<double, Kokkos::LayoutRight>(random_matrix(300, 24, 13), 1e-12);
  against_householder<double, Kokkos::LayoutLeft>(random_matrix(200, 40, 17), 1e-12);
}

// On CUDA a dot of two columns that both start on 16 bytes reads 16-byte
// units (PackedColumnDot), the rows past the last unit one a thread; other
// dots are ColumnDot's. In 703 rows a double column starts on 16 bytes every
// second column, a float one every fourth (the View's allocation starts on
// 16 bytes), and each leaves rows past its last unit.
TEST(MgsFactorization, PackedDotsWhereColumnsAlign) {
#if defined(KOKKOS_ENABLE_CUDA)
  constexpr bool cuda = true;
#else
  constexpr bool cuda = false;
#endif
  const int m = 9;
  const auto packed = [m](std::int64_t n, std::int64_t bytes) {
    const auto on16 = [&](int c) { return c * n * bytes % 16 == 0; };
    std::int64_t count = 0;  // dots a(:, i) . a(:, j), i <= j
    for (int j = 0; j < m; ++j)
      for (int i = 0; i <= j; ++i) count += on16(i) && on16(j) ? 1 : 0;
    return cuda ? count : 0;
  };
  const Dense a = random_matrix(703, m, 19);
  against_householder<double, Kokkos::LayoutLeft>(a, 1e-12);
  against_householder<float, Kokkos::LayoutLeft>(a, 2e-4);
  Tally t;
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, true}, a, &t);
  EXPECT_EQ(t.packed_dots, packed(703, 8));
  factor_with<float, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, false}, a, &t);
  EXPECT_EQ(t.packed_dots, packed(703, 4));
  factor_with<double, Kokkos::LayoutRight>({Algorithm::mgs, Impl::kokkos, true}, a, &t);
  EXPECT_EQ(t.packed_dots, 0);
  const Dense even = random_matrix(704, m, 23);
  factor_with<float, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, true}, even, &t);
  EXPECT_EQ(t.packed_dots, cuda ? m * (m + 1) / 2 : 0);
}

// Launches and columns moved, from the formulas in the README.
TEST(MgsFactorization, LaunchAndByteCounts) {
  const int m = 7;
  const Dense a = random_matrix(64, m, 11);
  Tally t;
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, true}, a, &t);
  EXPECT_EQ(t.launches, m * m + m);
  EXPECT_EQ(t.column_reads + t.column_writes, 5 * m * (m - 1) / 2 + 3 * m);
  EXPECT_EQ(t.allreduces, 0);
  EXPECT_EQ(t.host_waits, 0);
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, false}, a, &t);
  EXPECT_EQ(t.allreduces, m * (m - 1) / 2 + m);
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs_fused, Impl::kokkos, true}, a, &t);
  EXPECT_EQ(t.launches, m + 1);
  // Step i reads q_{i-s} .. q_{i-1}, s = i % depth, to catch up with the
  // steps before it, and stores every updated column when s = depth - 1;
  // the others store q_i only (FusedStep).
  const int depth = karma::mgs::fused_depth;
  std::int64_t fused = m;  // the first row of dots
  for (int i = 0; i + 1 < m; ++i)
    fused += (m - i) + i % depth + (i % depth == depth - 1 ? m - i : 1);
  fused += 1 + (m - 1) % depth + 1;  // the last column
  EXPECT_EQ(t.column_reads + t.column_writes, fused);
  EXPECT_EQ(t.host_waits, 0);
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs_fused, Impl::kokkos, false}, a, &t);
  EXPECT_EQ(t.allreduces, m);
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::cgs2, Impl::kokkos, true}, a, &t);
  EXPECT_EQ(t.launches, 2 * m);
  // reads: 1 + sum_{j<m-1} (j + 2) + sum_{1<=c<m} (c + 1) + m; writes 2 (m - 1) + 1
  EXPECT_EQ(t.column_reads,
            1 + (m - 2) * (m - 1) / 2 + 2 * (m - 1) + (m - 1) * m / 2 + (m - 1) + m);
  EXPECT_EQ(t.column_writes, 2 * (m - 1) + 1);
  factor_with<double, Kokkos::LayoutLeft>({Algorithm::cgs2, Impl::kokkos, false}, a, &t);
  EXPECT_EQ(t.allreduces, 2 * m - 1);
}

// --- the checks ----------------------------------------------------------------

struct Checked {
  double orthogonality, residual, violations;
};

Checked check(const Dense& a, const Dense& q, const Dense& r) {
  using View = Kokkos::View<double**, Kokkos::LayoutLeft>;
  View av("a", a.n, a.m), qv("q", q.n, q.m);
  upload(av, a);
  upload(qv, q);
  std::vector<double> rv(r.v.begin(), r.v.end());
  return {orthogonality_error(gram(qv), q.m), residual_error(av, qv, rv),
          r_shape_violations(rv, r.m)};
}

TEST(MgsChecks, AcceptAnExactFactorization) {
  const Dense a = random_matrix(300, 10, 21);
  Dense q(1, 1), r(1, 1);
  householder_qr(a, q, r);
  const Checked c = check(a, q, r);
  const Tolerances tol = tolerances(Algorithm::cgs2, std::numeric_limits<double>::epsilon(), 10, 1);
  EXPECT_LT(c.orthogonality, tol.orthogonality);
  EXPECT_LT(c.residual, tol.residual);
  EXPECT_EQ(c.violations, 0);
}

TEST(MgsChecks, RejectANonOrthogonalQ) {
  const Dense a = random_matrix(300, 10, 22);
  Dense q(1, 1), r(1, 1);
  householder_qr(a, q, r);
  const double eps = std::numeric_limits<double>::epsilon();
  const Tolerances tol = tolerances(Algorithm::mgs, eps, 10, 1e6);  // a loose one
  // q_5 leans towards q_2 by 1e-3: still unit length to first order.
  Dense leaning = q;
  for (int i = 0; i < q.n; ++i) leaning(i, 5) += 1e-3L * q(i, 2);
  EXPECT_GT(check(a, leaning, r).orthogonality, tol.orthogonality);
  // A column 0.1% too long.
  Dense long_column = q;
  for (int i = 0; i < q.n; ++i) long_column(i, 7) *= 1.001L;
  EXPECT_GT(check(a, long_column, r).orthogonality, tol.orthogonality);
  // The Q the mini-app's corrupt option makes.
  Dense corrupted = q;
  corrupted(0, 0) += 2;
  EXPECT_GT(check(a, corrupted, r).orthogonality, 1.0);
  // NaN never passes.
  Dense nan = q;
  nan(3, 3) = std::numeric_limits<long double>::quiet_NaN();
  EXPECT_FALSE(check(a, nan, r).orthogonality <= tol.orthogonality);
}

TEST(MgsChecks, RejectAWrongR) {
  const Dense a = random_matrix(300, 10, 23);
  Dense q(1, 1), r(1, 1);
  householder_qr(a, q, r);
  const Tolerances tol = tolerances(Algorithm::mgs, std::numeric_limits<double>::epsilon(), 10, 1);
  Dense wrong = r;
  wrong(2, 6) *= 1.0001L;
  EXPECT_GT(check(a, q, wrong).residual, tol.residual);
  Dense lower = r;
  lower(6, 2) = 1e-3L;
  EXPECT_EQ(check(a, q, lower).violations, 1);
  Dense negative = r;
  for (int j = 0; j < 10; ++j) negative(4, j) = -negative(4, j);
  Dense q_flipped = q;
  for (int i = 0; i < q.n; ++i) q_flipped(i, 4) = -q_flipped(i, 4);
  const Checked c = check(a, q_flipped, negative);  // still A = QR, but not the R asked for
  EXPECT_LT(c.residual, tol.residual);
  EXPECT_EQ(c.violations, 1);
}

TEST(MgsChecks, TolerancesFollowTheAnalyses) {
  const double eps = std::numeric_limits<double>::epsilon();
  const auto well = tolerances(Algorithm::mgs, eps, 32, 1);
  const auto ill = tolerances(Algorithm::mgs, eps, 32, 1e10);
  EXPECT_DOUBLE_EQ(ill.orthogonality, well.orthogonality * 1e10);
  EXPECT_DOUBLE_EQ(ill.residual, well.residual);
  EXPECT_DOUBLE_EQ(tolerances(Algorithm::cgs2, eps, 32, 1e10).orthogonality, well.orthogonality);
  EXPECT_DOUBLE_EQ(tolerances(Algorithm::mgs_fused, eps, 32, 1e4).orthogonality,
                   well.orthogonality * 1e4);
  EXPECT_LT(tolerances(Algorithm::mgs, eps, 32, max_condition(eps, 32)).orthogonality, 1.0001);
}

TEST(MgsChecks, JacobiEigenvalues) {
  // diag(9, 4, 1) rotated: the eigenvalues come back.
  const long double c = std::cos(0.3L), s = std::sin(0.3L);
  const long double rot[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}};
  const long double d[3] = {9, 4, 1};
  std::vector<long double> g(9, 0.0L);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) g[i * 3 + j] += rot[i][k] * d[k] * rot[j][k];
  auto ev = symmetric_eigenvalues(g, 3);
  std::sort(ev.begin(), ev.end());
  EXPECT_NEAR(static_cast<double>(ev[0]), 1, 1e-15);
  EXPECT_NEAR(static_cast<double>(ev[1]), 4, 1e-15);
  EXPECT_NEAR(static_cast<double>(ev[2]), 9, 1e-15);
  EXPECT_NEAR(condition_from_gram(g, 3), 3, 1e-15);
}

// --- the input -------------------------------------------------------------------

template <class View>
void expect_split_invariant(MatrixKind kind) {
  const std::int64_t n = 97;
  const int m = 6;
  View whole("whole", n, m), top("top", 40, m), bottom("bottom", n - 40, m);
  generate(whole, 0, n, kind, 1e4, 5);
  generate(top, 0, n, kind, 1e4, 5);
  generate(bottom, 40, n, kind, 1e4, 5);
  const Dense w = download(whole), t = download(top), b = download(bottom);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      EXPECT_EQ(w(i, j), i < 40 ? t(i, j) : b(i - 40, j)) << i << "," << j;
}

TEST(MgsInput, MatrixIndependentOfTheSplitAndLayout) {
  for (auto kind : {MatrixKind::random, MatrixKind::conditioned}) {
    expect_split_invariant<Kokkos::View<double**, Kokkos::LayoutLeft>>(kind);
    expect_split_invariant<Kokkos::View<double**, Kokkos::LayoutRight>>(kind);
    Kokkos::View<double**, Kokkos::LayoutLeft> left("l", 50, 4);
    Kokkos::View<double**, Kokkos::LayoutRight> right("r", 50, 4);
    generate(left, 0, 50, kind, 10, 9);
    generate(right, 0, 50, kind, 10, 9);
    EXPECT_EQ(max_difference(download(left), download(right)), 0);
  }
}

TEST(MgsInput, ConditionedMatrixHasTheAskedSingularValues) {
  const int m = 8;
  const std::int64_t n = 1000;
  const double kappa = 1e4;
  Kokkos::View<double**, Kokkos::LayoutLeft> a("a", n, m);
  generate(a, 0, n, MatrixKind::conditioned, kappa, 42);
  auto ev = symmetric_eigenvalues(gram(a), m);
  std::sort(ev.begin(), ev.end(), [](auto x, auto y) { return x > y; });
  for (int k = 0; k < m; ++k) {
    const double sigma = std::pow(kappa, -static_cast<double>(k) / (m - 1));
    EXPECT_NEAR(std::sqrt(static_cast<double>(ev[k])) / sigma, 1.0, 1e-9) << k;
  }
  // V is orthogonal, the frequencies distinct.
  const Conditioned c = make_conditioned(n, m, kappa, 42);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      double d = 0;
      for (int k = 0; k < m; ++k) d += c.v[i * m + k] * c.v[j * m + k];
      EXPECT_NEAR(d, i == j ? 1 : 0, 1e-14);
    }
  auto f = c.frequency;
  std::sort(f.begin(), f.end());
  EXPECT_TRUE(std::adjacent_find(f.begin(), f.end()) == f.end());
  EXPECT_GE(f.front(), 0);
  EXPECT_LT(f.back(), n);
}

TEST(MgsInput, IllConditioningSeparatesMgsFromCgs2) {
  const int m = 10;
  const std::int64_t n = 2000;
  Kokkos::View<double**, Kokkos::LayoutLeft> a("a", n, m);
  generate(a, 0, n, MatrixKind::conditioned, 1e10, 3);
  const Dense ad = download(a);
  const double eps = std::numeric_limits<double>::epsilon();
  const auto [q_mgs, r_mgs] =
      factor_with<double, Kokkos::LayoutLeft>({Algorithm::mgs, Impl::kokkos, true}, ad);
  const auto [q_cgs2, r_cgs2] =
      factor_with<double, Kokkos::LayoutLeft>({Algorithm::cgs2, Impl::kokkos, true}, ad);
  const double o_mgs = check(ad, q_mgs, r_mgs).orthogonality;
  const double o_cgs2 = check(ad, q_cgs2, r_cgs2).orthogonality;
  EXPECT_GT(o_mgs, 1e3 * o_cgs2);  // MGS loses about eps * kappa, CGS2 nothing
  EXPECT_LT(o_mgs, tolerances(Algorithm::mgs, eps, m, 1e10).orthogonality);
  EXPECT_LT(o_cgs2, tolerances(Algorithm::cgs2, eps, m, 1e10).orthogonality);
}

// The run rules' verdict on mgs's class decks as shipped, in a Release build
// on the pinned Kokkos whose checks passed: strong counts on any number of
// ranks, large on several is weak, medium and small count on one only.
nlohmann::json record_of(const std::string& problem_class, int ranks) {
  const std::string path = std::string(KARMA_INPUTS) + "/mgs/" + problem_class + ".yaml";
  const karma::RunFacts run{"mgs", ranks, true, "Release", karma::build_info::kokkos_pinned};
  return karma::reportable_record(mgs_schema(), karma::Deck::load(path, mgs_schema()), run);
}

TEST(MgsRunRules, StrongCountsOnAnyRanks) {
  for (int ranks : {1, 4}) {
    const nlohmann::json r = record_of("strong", ranks);
    EXPECT_EQ(r["class"], "strong") << ranks;
    EXPECT_EQ(r["tier"], "baseline") << ranks;
    EXPECT_TRUE(r["reportable"].get<bool>()) << r.dump();
  }
  const nlohmann::json weak = record_of("large", 2);
  EXPECT_EQ(weak["class"], "weak");
  EXPECT_TRUE(weak["reportable"].get<bool>()) << weak.dump();
  const nlohmann::json medium = record_of("medium", 2);
  EXPECT_EQ(medium["class"], "medium");
  EXPECT_FALSE(medium["reportable"].get<bool>());
  EXPECT_EQ(medium["reasons"],
            nlohmann::json::array(
                {"class medium runs on one rank (on several: the strong deck, or the large deck as "
                 "the weak class)"}));
  EXPECT_TRUE(record_of("medium", 1)["reportable"].get<bool>());
}

}  // namespace karma_test_mgs
