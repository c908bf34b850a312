// hexgrad: gradients of the 8 trilinear basis functions of hexahedral
// elements at one point of each element (Edwards et al. 2011, first test).
//
// The arrays are rank 3, (element, coordinate, vertex): coordinates in,
// gradients out. The kernel is written once, as a functor templated on the
// View types, so layout (left/right) and extents (double*[3][8] against
// double***) are compile-time choices with one copy of the code. The host
// reference and the checks are in hexgrad_verify.hpp, the hand-written CUDA
// kernel in hexgrad_cuda.hpp.
#pragma once

#include "karma/array.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

// Full unrolling keeps the element's arrays in registers; nvcc needs no
// more than the hint, host compilers would warn about the pragma.
#if defined(__CUDA_ARCH__)
#define KARMA_HEXGRAD_UNROLL _Pragma("unroll")
#else
#define KARMA_HEXGRAD_UNROLL
#endif

namespace karma::hexgrad {

inline constexpr int dims = 3;
inline constexpr int vertices = 8;
inline constexpr int values_per_element = dims * vertices;  // 24 in and 24 out

// Counted from element_gradients below, a multiply-add counting 2 and a
// division 1: Jacobian 9 x (8 mul + 7 add) = 135; adjugate 9 x 3 = 27;
// determinant 3 mul + 2 add = 5; its reciprocal 1; inverse 9 mul; gradients
// 24 x (3 mul + 2 add) = 120. The reference gradients are the same for every
// element (one evaluation point), computed once on the host: not counted.
inline constexpr int flops_per_element = 135 + 27 + 5 + 1 + 9 + 120;

// Vertex v of the reference cube [-1, 1]^3 in the usual hex8 order: the
// bottom face (zeta = -1) counter-clockwise from (-1, -1), then the top face.
KOKKOS_INLINE_FUNCTION constexpr int vertex_sign(int v, int direction) {
  const int bit = direction == 0   ? ((v ^ (v >> 1)) & 1)
                  : direction == 1 ? ((v >> 1) & 1)
                                   : ((v >> 2) & 1);
  return bit ? 1 : -1;
}

// d[i][v] = dN_v / dxi_i at the evaluation point: the same for every element.
template <class T>
struct ReferenceGradients {
  T d[dims][vertices];
};

struct Point {
  double xi = 0, eta = 0, zeta = 0;
};

// N_v = (1 + xi_v xi)(1 + eta_v eta)(1 + zeta_v zeta) / 8, differentiated.
inline ReferenceGradients<double> reference_gradients(const Point& p) {
  const double q[dims] = {p.xi, p.eta, p.zeta};
  ReferenceGradients<double> r{};
  for (int v = 0; v < vertices; ++v) {
    double factor[dims];
    for (int i = 0; i < dims; ++i) factor[i] = 1.0 + vertex_sign(v, i) * q[i];
    for (int i = 0; i < dims; ++i) {
      double product = 0.125 * vertex_sign(v, i);
      for (int k = 0; k < dims; ++k)
        if (k != i) product *= factor[k];
      r.d[i][v] = product;
    }
  }
  return r;
}

template <class T>
ReferenceGradients<T> convert(const ReferenceGradients<double>& r) {
  ReferenceGradients<T> out{};
  for (int i = 0; i < dims; ++i)
    for (int v = 0; v < vertices; ++v) out.d[i][v] = static_cast<T>(r.d[i][v]);
  return out;
}

// The element math of the timed kernel, in the arrays' precision:
// J[i][j] = sum_v d[i][v] x[j][v] (i reference, j physical direction), its
// inverse through the adjugate, and g[j][v] = sum_i Jinv[j][i] d[i][v].
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void element_gradients(const T (&x)[dims][vertices],
                                                   const ReferenceGradients<T>& r,
                                                   T (&g)[dims][vertices]) {
  T J[dims][dims];
  KARMA_HEXGRAD_UNROLL
  for (int i = 0; i < dims; ++i) {
    KARMA_HEXGRAD_UNROLL
    for (int j = 0; j < dims; ++j) {
      T s = r.d[i][0] * x[j][0];
      KARMA_HEXGRAD_UNROLL
      for (int v = 1; v < vertices; ++v) s += r.d[i][v] * x[j][v];
      J[i][j] = s;
    }
  }
  const T a00 = J[1][1] * J[2][2] - J[1][2] * J[2][1];
  const T a01 = J[0][2] * J[2][1] - J[0][1] * J[2][2];
  const T a02 = J[0][1] * J[1][2] - J[0][2] * J[1][1];
  const T a10 = J[1][2] * J[2][0] - J[1][0] * J[2][2];
  const T a11 = J[0][0] * J[2][2] - J[0][2] * J[2][0];
  const T a12 = J[0][2] * J[1][0] - J[0][0] * J[1][2];
  const T a20 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
  const T a21 = J[0][1] * J[2][0] - J[0][0] * J[2][1];
  const T a22 = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  const T det = J[0][0] * a00 + J[0][1] * a10 + J[0][2] * a20;
  const T s = T(1) / det;
  const T inv[dims][dims] = {
      {a00 * s, a01 * s, a02 * s}, {a10 * s, a11 * s, a12 * s}, {a20 * s, a21 * s, a22 * s}};
  KARMA_HEXGRAD_UNROLL
  for (int j = 0; j < dims; ++j) {
    KARMA_HEXGRAD_UNROLL
    for (int v = 0; v < vertices; ++v)
      g[j][v] = inv[j][0] * r.d[0][v] + inv[j][1] * r.d[1][v] + inv[j][2] * r.d[2][v];
  }
}

// The timed Kokkos kernel: one element per work item, every coordinate
// loaded before the arithmetic, every gradient stored after it.
template <class CoordView, class GradView>
struct Gradients {
  using T = typename GradView::non_const_value_type;
  static_assert(std::is_same<typename CoordView::non_const_value_type, T>::value,
                "coordinates and gradients share one precision");
  CoordView x;
  GradView g;
  ReferenceGradients<T> r;

  template <class Index>
  KOKKOS_INLINE_FUNCTION void operator()(const Index e) const {
    T c[dims][vertices];
    KARMA_HEXGRAD_UNROLL
    for (int j = 0; j < dims; ++j) {
      KARMA_HEXGRAD_UNROLL
      for (int v = 0; v < vertices; ++v) c[j][v] = x(e, j, v);
    }
    T out[dims][vertices];
    element_gradients(c, r, out);
    KARMA_HEXGRAD_UNROLL
    for (int j = 0; j < dims; ++j) {
      KARMA_HEXGRAD_UNROLL
      for (int v = 0; v < vertices; ++v) g(e, j, v) = out[j][v];
    }
  }
};

// The most threads per block on a GPU: the hand-written kernel's block, and
// the cap under which Kokkos picks its own (128 on an H200, for occupancy).
inline constexpr int gpu_block = 256;

template <class Index, class ExecSpace = Kokkos::DefaultExecutionSpace>
auto element_policy(std::int64_t n) {
  using Policy =
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>, Kokkos::LaunchBounds<gpu_block>>;
  return Policy(0, static_cast<Index>(n));
}

// On CUDA, float's kernel in layout left asks Kokkos for a quarter of an
// SM's threads (Kokkos holds it there with shared memory): at the register
// limit it ran 2% to 3% slower on an H100 and an H200 (results/hexgrad/
// README.md, "Occupancy and read-only loads"). Double's runs fastest there.
inline constexpr int gpu_float_occupancy = 25;  // percent

template <class T, class Layout>
constexpr int desired_occupancy() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value &&
      std::is_same<T, float>::value && std::is_same<Layout, Kokkos::LayoutLeft>::value)
    return gpu_float_occupancy;
#endif
  return 0;  // as many threads as the registers allow
}

// The coordinates are only read: in layout left a RandomAccess view lets a
// GPU read them through its read-only path, as the hand-written kernel's
// __restrict__ does. Layout right keeps a plain view: its scattered loads
// read up to 1.5% slower that way on an H200 (float, dynamic extents).
template <class View>
using Coordinates = std::conditional_t<
    std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
    Kokkos::View<typename View::const_data_type, Kokkos::LayoutLeft, typename View::device_type,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged | Kokkos::RandomAccess>>,
    View>;

template <class Index, class CoordView, class GradView>
void gradients(const CoordView& x, const GradView& g,
               const ReferenceGradients<typename GradView::non_const_value_type>& r) {
  using T = typename GradView::non_const_value_type;
  using Kernel = Gradients<Coordinates<CoordView>, GradView>;
  constexpr int occupancy = desired_occupancy<T, typename CoordView::array_layout>();
  if constexpr (occupancy > 0)
    Kokkos::parallel_for(
        "hexgrad::gradients",
        Kokkos::Experimental::prefer(element_policy<Index>(x.extent(0)),
                                     Kokkos::Experimental::DesiredOccupancy(occupancy)),
        Kernel{x, g, r});
  else
    Kokkos::parallel_for("hexgrad::gradients", element_policy<Index>(x.extent(0)), Kernel{x, g, r});
}

// --- The mesh ---------------------------------------------------------------

// A counter-based generator (SplitMix64's finaliser): the same numbers on
// any device and in any order, so every backend and every rank count builds
// the same elements.
KOKKOS_INLINE_FUNCTION std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A structured box of nx x ny x nz cells of size h, with its origin at
// (h/2, h/2, h/2) so that no coordinate is zero. Elements are the first n
// cells, x fastest. Every vertex moves by up to `perturbation` h in each
// direction (seeded, shared vertices move together), so no two elements are
// alike. Every `affine_every`-th element (e % affine_every == 0) is instead a
// parallelepiped c + A xi about its cell's centre, with a random A near
// (h/2) I: a non-conforming cell, which the kernel does not mind, whose
// gradients are known in closed form. A and c are multiples of a power of
// two near h / 2048, so its vertices are exact in double (and in float while
// the box has fewer than about 8000 cells a side).
//
// The random parts are integers and every coordinate is one product (or a
// sum of exact terms), so no compiler can fuse a multiply-add differently on
// the host and the device: the mesh is the same, bit for bit, everywhere.
struct Mesh {
  std::int64_t nx = 1, ny = 1, nz = 1;
  double h = 1;
  double unit = 1;                      // h / 2^32: vertex coordinates are integers times this
  std::int64_t perturbation_units = 0;  // perturbation * 2^16
  double quantum = 1;                   // of the affine elements' A and c
  std::int64_t half = 1;                // h / 2 in quanta
  std::int64_t affine_every = 64;
  std::uint64_t key = 0;  // from the seed and the rank

  KOKKOS_INLINE_FUNCTION bool is_affine(std::int64_t e) const { return e % affine_every == 0; }

  // Uniform in [-2^16, 2^16).
  KOKKOS_INLINE_FUNCTION std::int64_t jitter(std::uint64_t counter) const {
    return static_cast<std::int64_t>(mix(key ^ mix(counter)) >> 47) - 65536;
  }

  KOKKOS_INLINE_FUNCTION void element(std::int64_t e, double (&x)[dims][vertices]) const {
    const std::int64_t cell[dims] = {e % nx, (e / nx) % ny, e / (nx * ny)};
    if (is_affine(e)) {
      // Counters above any vertex's: 3 * (vertex id) + coordinate < 2^62.
      const std::uint64_t base = (std::uint64_t{1} << 62) + 16 * static_cast<std::uint64_t>(e);
      double A[dims][dims], c[dims];
      for (int j = 0; j < dims; ++j) {
        c[j] = round_to_quantum((cell[j] + 1.0) * h);
        // Off-diagonal and diagonal moves up to 5/32 of h/2.
        for (int i = 0; i < dims; ++i)
          A[j][i] = static_cast<double>((i == j ? half : 0) +
                                        half * 5 * jitter(base + 3 * j + i) / (65536 * 32)) *
                    quantum;
      }
      for (int v = 0; v < vertices; ++v)
        for (int j = 0; j < dims; ++j)
          x[j][v] = c[j] + A[j][0] * vertex_sign(v, 0) + A[j][1] * vertex_sign(v, 1) +
                    A[j][2] * vertex_sign(v, 2);
      return;
    }
    for (int v = 0; v < vertices; ++v) {
      const std::int64_t I = cell[0] + (vertex_sign(v, 0) > 0);
      const std::int64_t J = cell[1] + (vertex_sign(v, 1) > 0);
      const std::int64_t K = cell[2] + (vertex_sign(v, 2) > 0);
      const std::uint64_t id = static_cast<std::uint64_t>(I + (nx + 1) * (J + (ny + 1) * K));
      const std::int64_t corner[dims] = {I, J, K};
      // (corner + 1/2 + perturbation u) h, u uniform in [-1, 1), in units of h / 2^32.
      for (int j = 0; j < dims; ++j)
        x[j][v] = static_cast<double>((2 * corner[j] + 1) * (std::int64_t{1} << 31) +
                                      perturbation_units * jitter(3 * id + j)) *
                  unit;
    }
  }

  // Nearest multiple of the quantum (no math library: host and device alike).
  KOKKOS_INLINE_FUNCTION double round_to_quantum(double value) const {
    const double q = value / quantum;
    const auto k = static_cast<std::int64_t>(q < 0 ? q - 0.5 : q + 0.5);
    return static_cast<double>(k) * quantum;
  }
};

// The mesh of a box of cells; perturbation in [0, 0.1] of the cell size.
inline Mesh make_mesh(std::int64_t nx, std::int64_t ny, std::int64_t nz, double perturbation,
                      std::int64_t affine_every, std::uint64_t key) {
  Mesh m;
  m.nx = nx;
  m.ny = ny;
  m.nz = nz;
  m.h = 1.0 / static_cast<double>(std::max({nx, ny, nz}));
  m.unit = std::ldexp(m.h, -32);
  m.perturbation_units = std::llround(std::ldexp(perturbation, 16));
  // The largest power of two at most h / 2048: A's entries (about h / 2)
  // then carry 10 bits, and the sums of the Jacobian stay exact.
  m.quantum = std::exp2(std::floor(std::log2(m.h)) - 11);
  m.half = std::llround(0.5 * m.h / m.quantum);
  m.affine_every = affine_every;
  m.key = key;
  return m;
}

template <class View>
struct FillMesh {
  View x;
  Mesh mesh;
  std::int64_t offset;  // the mesh index of x's first element
  template <class Index>
  KOKKOS_INLINE_FUNCTION void operator()(const Index e) const {
    double c[dims][vertices];
    mesh.element(offset + e, c);
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v)
        x(e, j, v) = static_cast<typename View::non_const_value_type>(c[j][v]);
  }
};

// Fills the coordinates with the policy of the kernel: on a CPU, pages land
// near the threads that will read them.
template <class Index, class View>
void fill_mesh(const View& x, const Mesh& mesh, std::int64_t offset = 0) {
  Kokkos::parallel_for("hexgrad::mesh", element_policy<Index>(x.extent(0)),
                       FillMesh<View>{x, mesh, offset});
}

}  // namespace karma::hexgrad
