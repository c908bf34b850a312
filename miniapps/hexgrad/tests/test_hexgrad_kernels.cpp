// hexgrad's element math against values worked out here independently (a
// box, an affine element, a perturbed element solved by Gaussian
// elimination on finite differences), the Kokkos kernel in every layout,
// extent and precision, the mesh, the flop count, and the checker made to
// fail: a broken reference, a flipped sign, a scaled or corrupted element,
// a NaN.
#include "hexgrad_kernels.hpp"
#include "hexgrad_verify.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace karma_test_hexgrad {

using namespace karma::hexgrad;

using Element = std::array<std::array<double, vertices>, dims>;  // [j][v]

// --- Independent computations (no code shared with the header) -------------

// The hex8 vertex of index v, written out as a table.
constexpr int corner[vertices][dims] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                        {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};

long double shape(int v, const std::array<long double, 3>& q) {
  long double n = 0.125L;
  for (int i = 0; i < dims; ++i) n *= 1 + corner[v][i] * q[i];
  return n;
}

// N_v and x(xi) are linear in each xi_i: central differences are exact.
std::array<long double, 3> shape_gradient(int v, const std::array<long double, 3>& q) {
  std::array<long double, 3> d{};
  for (int i = 0; i < dims; ++i) {
    auto plus = q, minus = q;
    plus[i] += 0.5L;
    minus[i] -= 0.5L;
    d[i] = shape(v, plus) - shape(v, minus);
  }
  return d;
}

std::array<long double, 3> position(const Element& x, const std::array<long double, 3>& q) {
  std::array<long double, 3> p{};
  for (int v = 0; v < vertices; ++v)
    for (int j = 0; j < dims; ++j) p[j] += shape(v, q) * x[j][v];
  return p;
}

// Solves M y = b by Gaussian elimination with partial pivoting.
std::array<long double, 3> solve(std::array<std::array<long double, 3>, 3> M,
                                 std::array<long double, 3> b) {
  for (int c = 0; c < 3; ++c) {
    int p = c;
    for (int r = c + 1; r < 3; ++r)
      if (std::fabs(M[r][c]) > std::fabs(M[p][c])) p = r;
    std::swap(M[c], M[p]);
    std::swap(b[c], b[p]);
    for (int r = c + 1; r < 3; ++r) {
      const long double f = M[r][c] / M[c][c];
      for (int k = c; k < 3; ++k) M[r][k] -= f * M[c][k];
      b[r] -= f * b[c];
    }
  }
  std::array<long double, 3> y{};
  for (int r = 2; r >= 0; --r) {
    long double s = b[r];
    for (int k = r + 1; k < 3; ++k) s -= M[r][k] * y[k];
    y[r] = s / M[r][r];
  }
  return y;
}

// grad_x N_v solves J g = grad_xi N_v with J[i][j] = dx_j / dxi_i, J by
// central differences of the map.
Element independent_gradients(const Element& x, const Point& p) {
  const std::array<long double, 3> q{p.xi, p.eta, p.zeta};
  std::array<std::array<long double, 3>, 3> J{};
  for (int i = 0; i < dims; ++i) {
    auto plus = q, minus = q;
    plus[i] += 0.5L;
    minus[i] -= 0.5L;
    const auto a = position(x, plus), b = position(x, minus);
    for (int j = 0; j < dims; ++j) J[i][j] = a[j] - b[j];
  }
  Element g{};
  for (int v = 0; v < vertices; ++v) {
    const auto y = solve(J, shape_gradient(v, q));
    for (int j = 0; j < dims; ++j) g[j][v] = static_cast<double>(y[j]);
  }
  return g;
}

double max_abs(const Element& a) {
  double m = 0;
  for (const auto& row : a)
    for (double v : row) m = std::max(m, std::abs(v));
  return m;
}

double max_difference(const Element& a, const Element& b) {
  double m = 0;
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) m = std::max(m, std::abs(a[j][v] - b[j][v]));
  return std::isfinite(m) ? m : std::numeric_limits<double>::infinity();
}

// --- Test elements ------------------------------------------------------------

// An axis-aligned box [o, o + size] (xi = -1 at o).
Element box_element(const std::array<double, 3>& o, const std::array<double, 3>& size) {
  Element x{};
  for (int v = 0; v < vertices; ++v)
    for (int j = 0; j < dims; ++j) x[j][v] = o[j] + 0.5 * (corner[v][j] + 1) * size[j];
  return x;
}

// x = c + A xi.
Element affine_element(const std::array<double, 3>& c, const double (&A)[3][3]) {
  Element x{};
  for (int v = 0; v < vertices; ++v)
    for (int j = 0; j < dims; ++j)
      x[j][v] = c[j] + A[j][0] * corner[v][0] + A[j][1] * corner[v][1] + A[j][2] * corner[v][2];
  return x;
}

// A distorted, non-affine hexahedron near [1, 1.5] x [2, 2.4] x [-3, -2.3].
Element perturbed_element() {
  Element x = box_element({1.0, 2.0, -3.0}, {0.5, 0.4, 0.7});
  const double moves[vertices][dims] = {
      {0.03, -0.01, 0.02}, {-0.04, 0.02, 0.01},  {0.02, 0.05, -0.03}, {-0.01, -0.03, 0.04},
      {0.05, 0.01, -0.02}, {-0.02, -0.04, 0.03}, {0.01, 0.03, 0.05},  {-0.05, 0.02, -0.01}};
  for (int v = 0; v < vertices; ++v)
    for (int j = 0; j < dims; ++j) x[j][v] += moves[v][j];
  return x;
}

const Point points[] = {{0, 0, 0}, {0.25, -0.5, 0.75}, {1, 1, 1}, {-1, 0.3, -0.9}};

// --- The kernel on given elements ---------------------------------------------

template <class T, class L, bool Static>
using ArrayOf = karma::Array<std::conditional_t<Static, T* [dims][vertices], T***>, L>;

template <class View>
View make(const std::string& label, std::size_t n) {
  if constexpr (View::traits::rank_dynamic == 1)
    return View(label, n);
  else
    return View(label, n, dims, vertices);
}

// Runs the timed Kokkos kernel on these elements in this precision, layout
// and extents; returns the gradients in double.
template <class T, class L, bool Static>
std::vector<Element> kernel_gradients(const std::vector<Element>& elements,
                                      const ReferenceGradients<double>& r) {
  using View = ArrayOf<T, L, Static>;
  const std::size_t n = elements.size();
  View x = make<View>("x", n), g = make<View>("g", n);
  auto hx = Kokkos::create_mirror_view(x);
  for (std::size_t e = 0; e < n; ++e)
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) hx(e, j, v) = static_cast<T>(elements[e][j][v]);
  Kokkos::deep_copy(x, hx);
  gradients<int>(typename View::const_type(x), g, convert<T>(r));
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  std::vector<Element> out(n);
  for (std::size_t e = 0; e < n; ++e)
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) out[e][j][v] = static_cast<double>(hg(e, j, v));
  return out;
}

// Every combination the mini-app can instantiate, against `expected`, with a
// relative tolerance of `ulps` of the precision.
void expect_all_variants(const std::vector<Element>& elements, const std::vector<Element>& expected,
                         const ReferenceGradients<double>& r, double ulps) {
  auto compare = [&](const std::vector<Element>& got, double eps, const char* what) {
    for (std::size_t e = 0; e < elements.size(); ++e)
      EXPECT_LE(max_difference(got[e], expected[e]), ulps * eps * max_abs(expected[e]))
          << what << ", element " << e;
  };
  const double d = std::numeric_limits<double>::epsilon();
  const double f = std::numeric_limits<float>::epsilon();
  compare(kernel_gradients<double, karma::Left, true>(elements, r), d, "double left static");
  compare(kernel_gradients<double, karma::Left, false>(elements, r), d, "double left dynamic");
  compare(kernel_gradients<double, karma::Right, true>(elements, r), d, "double right static");
  compare(kernel_gradients<double, karma::Right, false>(elements, r), d, "double right dynamic");
  compare(kernel_gradients<float, karma::Left, true>(elements, r), f, "float left static");
  compare(kernel_gradients<float, karma::Left, false>(elements, r), f, "float left dynamic");
  compare(kernel_gradients<float, karma::Right, true>(elements, r), f, "float right static");
  compare(kernel_gradients<float, karma::Right, false>(elements, r), f, "float right dynamic");
}

// --- The element math ------------------------------------------------------------

TEST(HexgradMath, ReferenceGradientsAtTheCentreAreEighths) {
  const auto r = reference_gradients(Point{});
  for (int v = 0; v < vertices; ++v)
    for (int i = 0; i < dims; ++i) EXPECT_EQ(r.d[i][v], 0.125 * corner[v][i]) << v << " " << i;
}

TEST(HexgradMath, ReferenceGradientsAreTheDerivativesOfN) {
  for (const Point& p : points) {
    const auto r = reference_gradients(p);
    for (int v = 0; v < vertices; ++v) {
      const auto d = shape_gradient(v, {p.xi, p.eta, p.zeta});
      for (int i = 0; i < dims; ++i)
        EXPECT_NEAR(r.d[i][v], static_cast<double>(d[i]), 1e-16) << v << " " << i;
    }
  }
  // Vertex 3 of the usual hex8 order is (-1, 1, -1).
  EXPECT_EQ(vertex_sign(3, 0), -1);
  EXPECT_EQ(vertex_sign(3, 1), 1);
  EXPECT_EQ(vertex_sign(3, 2), -1);
}

// A box of sides (a, b, c): x = o + (xi + 1) a / 2, so grad N_v is
// dN_v/dxi_j times 2 / side_j, and at the centre corner[v][j] / (4 side_j).
TEST(HexgradMath, BoxElementAtAnyPoint) {
  const std::array<double, 3> size{0.5, 0.25, 2.0};
  const Element x = box_element({3.0, -1.0, 0.5}, size);
  for (const Point& p : points) {
    const auto r = reference_gradients(p);
    Element expected{};
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) expected[j][v] = r.d[j][v] * 2.0 / size[j];
    expect_all_variants({x}, {expected}, r, 8);
  }
  Element centre{};
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) centre[j][v] = corner[v][j] / (4.0 * size[j]);
  EXPECT_EQ(max_difference(
                kernel_gradients<double, karma::Left, true>({x}, reference_gradients(Point{}))[0],
                centre),
            0.0);
}

// x = c + A xi: J = A^T, so grad N_v = A^-T grad_xi N_v. A^-1 by hand:
// A = [[2, 1, 0], [0, 1, 0], [1, 0, 4]] has det 8 and inverse
// [[4, -4, 0], [0, 8, 0], [-1, 1, 2]] / 8.
TEST(HexgradMath, AffineElementIsInverseTransposeTimesReferenceGradients) {
  const double A[3][3] = {{2, 1, 0}, {0, 1, 0}, {1, 0, 4}};
  const double Ainv[3][3] = {{0.5, -0.5, 0}, {0, 1, 0}, {-0.125, 0.125, 0.25}};
  const Element x = affine_element({10, -20, 30}, A);
  for (const Point& p : points) {
    const auto r = reference_gradients(p);
    Element expected{};
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v)
        for (int i = 0; i < dims; ++i) expected[j][v] += Ainv[i][j] * r.d[i][v];
    // Coordinates near 30 with A near 1: the kernel's sums lose log2(30) bits.
    expect_all_variants({x}, {expected}, r, 64);
  }
}

TEST(HexgradMath, PerturbedElementMatchesAnIndependentSolve) {
  const Element x = perturbed_element();
  for (const Point& p : points) {
    const Element expected = independent_gradients(x, p);
    expect_all_variants({x, x}, {expected, expected}, reference_gradients(p), 64);
    // The host reference of the checks, too.
    double c[dims][vertices], g[dims][vertices];
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) c[j][v] = x[j][v];
    EXPECT_GT(reference_element(c, reference_gradients(p), g), 0.0);
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v)
        EXPECT_NEAR(g[j][v], expected[j][v], 1e-14 * max_abs(expected));
  }
  // The element is not affine: the gradients depend on the point.
  EXPECT_GT(
      max_difference(independent_gradients(x, points[0]), independent_gradients(x, points[1])),
      0.1);
}

// A value type that counts the arithmetic done on it (host only).
struct Counted {
  double value = 0;
  static long& count() {
    static long n = 0;
    return n;
  }
  Counted() = default;
  KOKKOS_INLINE_FUNCTION Counted(double v) : value(v) {}  // NOLINT: T(1) in the kernel
  KOKKOS_INLINE_FUNCTION static void tick() {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
    ++count();
#endif
  }
  KOKKOS_INLINE_FUNCTION friend Counted operator+(Counted a, Counted b) {
    tick();
    return a.value + b.value;
  }
  KOKKOS_INLINE_FUNCTION friend Counted operator-(Counted a, Counted b) {
    tick();
    return a.value - b.value;
  }
  KOKKOS_INLINE_FUNCTION friend Counted operator*(Counted a, Counted b) {
    tick();
    return a.value * b.value;
  }
  KOKKOS_INLINE_FUNCTION friend Counted operator/(Counted a, Counted b) {
    tick();
    return a.value / b.value;
  }
  KOKKOS_INLINE_FUNCTION Counted& operator+=(Counted b) {
    tick();
    value += b.value;
    return *this;
  }
};

TEST(HexgradMath, FlopCountIsTheCountOfTheCode) {
  const Element x = perturbed_element();
  const auto rd = reference_gradients(Point{0.25, -0.5, 0.75});
  Counted c[dims][vertices], g[dims][vertices];
  ReferenceGradients<Counted> r;
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) {
      c[j][v] = x[j][v];
      r.d[j][v] = rd.d[j][v];
    }
  Counted::count() = 0;
  element_gradients(c, r, g);
  EXPECT_EQ(Counted::count(), flops_per_element);
  EXPECT_EQ(flops_per_element, 297);
  // And the counted arithmetic computed the gradients.
  const Element expected = independent_gradients(x, Point{0.25, -0.5, 0.75});
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v)
      EXPECT_NEAR(g[j][v].value, expected[j][v], 1e-13 * max_abs(expected));
}

// --- The arrays and the mesh ---------------------------------------------------

// What the hand-written CUDA kernel hard-codes: in a LayoutLeft (N, 3, 8)
// array, value (e, j, v) is at e + stride * (j + 3 v), stride(1) apart.
TEST(HexgradArrays, LayoutLeftPlanesAreWhatNativeCudaAssumes) {
  const std::size_t n = 37;
  karma::HostArray<double* [dims][vertices], karma::Left> a("a", n);
  karma::HostArray<double***, karma::Left> b("b", n, dims, vertices);
  for (std::size_t e = 0; e < n; ++e)
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) {
        const std::size_t stride = a.stride(1);
        EXPECT_EQ(&a(e, j, v), a.data() + e + stride * (j + 3 * v));
        EXPECT_EQ(&b(e, j, v), b.data() + e + b.stride(1) * (j + 3 * v));
      }
  EXPECT_EQ(a.stride(2), 3 * a.stride(1));
}

Mesh small_mesh(std::int64_t affine_every = 5, std::int64_t nz = 4) {
  return make_mesh(6, 5, nz, 0.1, affine_every, mix(7));
}

Element host_element(const Mesh& m, std::int64_t e) {
  double c[dims][vertices];
  m.element(e, c);
  Element x{};
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) x[j][v] = c[j][v];
  return x;
}

TEST(HexgradMesh, NeighboursShareVerticesAndNoValueIsZero) {
  const Mesh m = small_mesh(1000);  // only element 0 affine
  const std::int64_t n = m.nx * m.ny * m.nz;
  for (std::int64_t e = 1; e < n; ++e) {
    const Element x = host_element(m, e);
    for (const auto& row : x)
      for (double value : row) EXPECT_NE(value, 0.0);
    // The +x neighbour's vertex 0 is this element's vertex 1, and so on.
    if (e % m.nx != m.nx - 1) {
      const Element y = host_element(m, e + 1);
      for (int j = 0; j < dims; ++j) {
        EXPECT_EQ(y[j][0], x[j][1]);
        EXPECT_EQ(y[j][7], x[j][6]);
      }
    }
    // Moved off the lattice, by at most 0.1 h.
    const std::int64_t i = e % m.nx;
    EXPECT_NE(x[0][0], (i + 0.5) * m.h);
    EXPECT_LE(std::abs(x[0][0] - (i + 0.5) * m.h), 0.1 * m.h * (1 + 1e-12));
  }
}

TEST(HexgradMesh, NoTwoElementsAreAlike) {
  const Mesh m = small_mesh();
  const std::int64_t n = m.nx * m.ny * m.nz;
  // Edge vectors of vertex 0 identify an element up to translation.
  std::vector<std::array<double, 9>> shapes;
  for (std::int64_t e = 0; e < n; ++e) {
    const Element x = host_element(m, e);
    std::array<double, 9> s{};
    for (int j = 0; j < dims; ++j) {
      s[j] = x[j][1] - x[j][0];
      s[3 + j] = x[j][3] - x[j][0];
      s[6 + j] = x[j][4] - x[j][0];
    }
    for (const auto& other : shapes) EXPECT_NE(other, s) << "element " << e;
    shapes.push_back(s);
  }
}

TEST(HexgradMesh, AffineElementsAreExactParallelepipeds) {
  const Mesh m = small_mesh(5);
  for (std::int64_t e = 0; e < m.nx * m.ny * m.nz; e += 5) {
    ASSERT_TRUE(m.is_affine(e));
    const Element x = host_element(m, e);
    // Parallel edges are equal, exactly, and exactly so in float too.
    for (int j = 0; j < dims; ++j) {
      EXPECT_EQ(x[j][1] - x[j][0], x[j][2] - x[j][3]);
      EXPECT_EQ(x[j][1] - x[j][0], x[j][6] - x[j][7]);
      EXPECT_EQ(x[j][4] - x[j][0], x[j][6] - x[j][2]);
      for (int v = 0; v < vertices; ++v)
        EXPECT_EQ(static_cast<double>(static_cast<float>(x[j][v])), x[j][v]);
    }
  }
  EXPECT_FALSE(m.is_affine(1));
}

// The mesh is the same wherever it is built: the device kernel and the host.
TEST(HexgradMesh, DeviceMeshEqualsHostMesh) {
  const Mesh m = small_mesh();
  const std::int64_t n = m.nx * m.ny * m.nz - 7, offset = 3;
  karma::Array<double* [dims][vertices], karma::Right> x("x", n);
  fill_mesh<int>(x, m, offset);
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  for (std::int64_t e = 0; e < n; ++e) {
    const Element expected = host_element(m, offset + e);
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) ASSERT_EQ(hx(e, j, v), expected[j][v]) << e;
  }
}

// --- The checker -----------------------------------------------------------------

template <class T, class L, bool Static>
struct MeshRun {
  using View = ArrayOf<T, L, Static>;
  View x, g;
  typename View::HostMirror hx, hg;
  ReferenceGradients<double> r;
  std::int64_t affine_every;
};

template <class T, class L, bool Static>
MeshRun<T, L, Static> run_mesh(const Point& p, const ReferenceGradients<double>& timed,
                               std::int64_t n = 997) {
  using View = typename MeshRun<T, L, Static>::View;
  MeshRun<T, L, Static> run;
  const Mesh m = small_mesh(7, (n + 29) / 30);
  run.affine_every = m.affine_every;
  run.x = make<View>("x", static_cast<std::size_t>(n));
  run.g = make<View>("g", static_cast<std::size_t>(n));
  fill_mesh<int>(run.x, m);
  Kokkos::deep_copy(run.g, std::numeric_limits<T>::quiet_NaN());
  gradients<int>(typename View::const_type(run.x), run.g, convert<T>(timed));
  run.hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, run.x);
  run.hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, run.g);
  run.r = reference_gradients(p);
  return run;
}

template <class Run>
Errors check_run(const Run& run, const ReferenceGradients<double>& r, bool compare = true) {
  return check(run.hx, run.hg, r, run.affine_every, 0, compare, 2);
}

template <class T>
void expect_passes(const Errors& e) {
  const Tolerances tol = tolerances<T>();
  EXPECT_LE(e.reference, tol.reference);
  EXPECT_LE(e.sum_zero, tol.sum_zero);
  EXPECT_LE(e.linear_field, tol.linear_field);
  EXPECT_LE(e.affine, tol.affine);
}

template <class T, class L, bool Static>
void expect_mesh_verifies() {
  for (const Point& p : points) {
    const auto run = run_mesh<T, L, Static>(p, reference_gradients(p));
    const Errors e = check_run(run, run.r);
    expect_passes<T>(e);
    EXPECT_EQ(e.elements, 997);
    EXPECT_EQ(e.affine_elements, (997 + 6) / 7);
  }
}

TEST(HexgradKernel, EveryVariantVerifiesOnAMesh) {
  expect_mesh_verifies<double, karma::Left, true>();
  expect_mesh_verifies<double, karma::Left, false>();
  expect_mesh_verifies<double, karma::Right, true>();
  expect_mesh_verifies<double, karma::Right, false>();
  expect_mesh_verifies<float, karma::Left, true>();
  expect_mesh_verifies<float, karma::Left, false>();
  expect_mesh_verifies<float, karma::Right, true>();
  expect_mesh_verifies<float, karma::Right, false>();
}

// The chunked copy-and-check of device arrays finds what checking the whole
// host copy finds, wherever the chunks end (affine elements counted from the
// mesh's index, not the chunk's).
template <class T, class L, bool Static>
void expect_chunks_check_like_whole(std::int64_t chunk) {
  const Point p{0.25, -0.5, 0.75};
  auto run = run_mesh<T, L, Static>(p, reference_gradients(p));
  // One bad gradient in the last chunk, so that the chunks' maxima matter.
  run.hg(990, 1, 4) *= 1.5;
  Kokkos::deep_copy(run.g, run.hg);
  const Errors whole = check(run.hx, run.hg, run.r, run.affine_every, 5, true, 2);
  const Errors chunks =
      check_arrays(run.x, run.g, run.r, run.affine_every, 5, true, 2, chunk, true);
  EXPECT_EQ(chunks.reference, whole.reference);
  EXPECT_EQ(chunks.sum_zero, whole.sum_zero);
  EXPECT_EQ(chunks.linear_field, whole.linear_field);
  EXPECT_EQ(chunks.affine, whole.affine);
  EXPECT_EQ(chunks.elements, 997);
  EXPECT_EQ(chunks.affine_elements, whole.affine_elements);
  EXPECT_GT(whole.reference, tolerances<T>().reference);
}

TEST(HexgradCheck, ChunkedCopiesCheckLikeTheWhole) {
  expect_chunks_check_like_whole<double, karma::Left, true>(100);
  expect_chunks_check_like_whole<double, karma::Left, false>(997);
  expect_chunks_check_like_whole<float, karma::Right, true>(13);
  expect_chunks_check_like_whole<float, karma::Right, false>(1 << 19);
}

ReferenceGradients<double> flipped(const ReferenceGradients<double>& r) {
  const auto f = with_flipped_sign(r);
  int changed = 0;
  for (int i = 0; i < dims; ++i)
    for (int v = 0; v < vertices; ++v) changed += f.d[i][v] != r.d[i][v];
  EXPECT_EQ(changed, 1);  // one sign, of a non-zero gradient
  return f;
}

// A reference with the wrong sign in one gradient: the comparison fails (and
// the affine closed form, built on the same reference gradients); the
// invariants, which need no reference, still pass.
TEST(HexgradCheck, BrokenReferenceFailsTheComparison) {
  const Point p{0.25, -0.5, 0.75};
  const auto run = run_mesh<double, karma::Left, true>(p, reference_gradients(p));
  const Tolerances tol = tolerances<double>();
  const Errors e = check_run(run, flipped(run.r));
  EXPECT_GT(e.reference, 1e-3);
  EXPECT_GT(e.reference, tol.reference);
  EXPECT_GT(e.affine, tol.affine);
  EXPECT_LE(e.sum_zero, tol.sum_zero);
  EXPECT_LE(e.linear_field, tol.linear_field);
}

// The kernel with the wrong sign: every check fails, and the invariants
// see it without any reference.
TEST(HexgradCheck, FlippedSignInTheKernelFailsEveryCheck) {
  for (const Point& p : points) {
    const auto run = run_mesh<float, karma::Right, false>(p, flipped(reference_gradients(p)));
    const Tolerances tol = tolerances<float>();
    const Errors with = check_run(run, run.r);
    EXPECT_GT(with.reference, tol.reference);
    EXPECT_GT(with.sum_zero, tol.sum_zero);
    EXPECT_GT(with.linear_field, tol.linear_field);
    EXPECT_GT(with.affine, tol.affine);
    const Errors without = check_run(run, run.r, false);
    EXPECT_EQ(without.reference, 0.0);
    EXPECT_GT(without.sum_zero, tol.sum_zero);
  }
}

template <class Mirror>
void scale_element(const Mirror& g, std::int64_t e, double factor) {
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) g(e, j, v) *= factor;
}

// Gradients 1e-9 too large on one element keep summing to zero but
// differentiate a linear field wrongly; the comparison sees it too.
TEST(HexgradCheck, ScaledElementFailsLinearFieldNotSumZero) {
  const Point p{-1, 0.3, -0.9};
  auto run = run_mesh<double, karma::Right, true>(p, reference_gradients(p));
  const Tolerances tol = tolerances<double>();
  expect_passes<double>(check_run(run, run.r));
  scale_element(run.hg, 500, 1 + 1e-9);
  const Errors e = check_run(run, run.r);
  EXPECT_GT(e.linear_field, tol.linear_field);
  EXPECT_GT(e.reference, tol.reference);
  EXPECT_LE(e.sum_zero, tol.sum_zero);
  EXPECT_LE(e.affine, tol.affine);  // 500 is not an affine element
  EXPECT_NE(500 % run.affine_every, 0);
}

TEST(HexgradCheck, CorruptedAffineElementFailsAffine) {
  const Point p{};
  auto run = run_mesh<float, karma::Left, false>(p, reference_gradients(p));
  const Tolerances tol = tolerances<float>();
  expect_passes<float>(check_run(run, run.r));
  // Swap two vertices' gradients of affine element 7 * 20: sums stay zero.
  const std::int64_t e = 7 * 20;
  for (int j = 0; j < dims; ++j) std::swap(run.hg(e, j, 0), run.hg(e, j, 6));
  const Errors bad = check_run(run, run.r, false);
  EXPECT_GT(bad.affine, tol.affine);
  EXPECT_LE(bad.sum_zero, tol.sum_zero);
}

TEST(HexgradCheck, NaNOrUnwrittenGradientFailsEveryCheck) {
  const Point p{0.25, -0.5, 0.75};
  for (std::int64_t e : {0, 1, 996}) {
    auto run = run_mesh<double, karma::Left, true>(p, reference_gradients(p));
    run.hg(e, 2, 5) = std::numeric_limits<double>::quiet_NaN();
    const Errors bad = check_run(run, run.r);
    EXPECT_EQ(bad.reference, std::numeric_limits<double>::infinity());
    EXPECT_EQ(bad.sum_zero, std::numeric_limits<double>::infinity());
    EXPECT_EQ(bad.linear_field, std::numeric_limits<double>::infinity());
    if (e == 0) {
      EXPECT_EQ(bad.affine, std::numeric_limits<double>::infinity());
    }
  }
}

TEST(HexgradCheck, InvertedElementFails) {
  const Point p{};
  auto run = run_mesh<double, karma::Left, true>(p, reference_gradients(p));
  // Mirror element 3 in x: det J < 0, no valid reference.
  for (int v = 0; v < vertices; ++v) run.hx(3, 0, v) = -run.hx(3, 0, v);
  const Errors bad = check_run(run, run.r);
  EXPECT_EQ(bad.reference, std::numeric_limits<double>::infinity());
  EXPECT_EQ(bad.linear_field, std::numeric_limits<double>::infinity());
}

// The tolerances scale with the element's kappa: the same element moved far
// from the origin, where float loses more of J to cancellation, still passes.
TEST(HexgradCheck, ToleranceScalesWithDistanceFromOrigin) {
  const Element near = perturbed_element();
  Element far = near;
  for (int v = 0; v < vertices; ++v) far[0][v] += 1000.0;
  const auto r = reference_gradients(Point{0.25, -0.5, 0.75});
  for (const Element& x : {near, far}) {
    const auto g = kernel_gradients<float, karma::Left, true>({x}, r);
    karma::HostArray<double*[dims][vertices]> hx("hx", 1), hg("hg", 1);
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) {
        hx(0, j, v) = static_cast<double>(static_cast<float>(x[j][v]));
        hg(0, j, v) = g[0][j][v];
      }
    const Errors e = check(hx, hg, r, 1000, 1, true, 1);
    EXPECT_LE(e.reference, tolerances<float>().reference);
  }
}

}  // namespace karma_test_hexgrad
