// hexgrad's host reference and the checks of the gradients any
// implementation wrote (README.md, "Verification"), apart from the kernels
// they judge; the faults run.inject_fault plants, and the checks a run
// reports.
#pragma once

#include "hexgrad_kernels.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/pinned.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

namespace karma::hexgrad {

// --- The host reference -----------------------------------------------------

// In double whatever the arrays' precision, written apart from the kernel:
// the inverse Jacobian's rows from cross products of J's rows (Cramer).
// Returns det J.
inline double reference_element(const double (&x)[dims][vertices],
                                const ReferenceGradients<double>& r, double (&g)[dims][vertices]) {
  double J[dims][dims] = {};
  for (int v = 0; v < vertices; ++v)
    for (int i = 0; i < dims; ++i)
      for (int j = 0; j < dims; ++j) J[i][j] += r.d[i][v] * x[j][v];
  // Column i of J^-1 is (row(i+1) x row(i+2)) / det: J^-1[j][i] below.
  double cross[dims][dims];
  for (int i = 0; i < dims; ++i) {
    const double* a = J[(i + 1) % 3];
    const double* b = J[(i + 2) % 3];
    cross[i][0] = a[1] * b[2] - a[2] * b[1];
    cross[i][1] = a[2] * b[0] - a[0] * b[2];
    cross[i][2] = a[0] * b[1] - a[1] * b[0];
  }
  const double det = J[0][0] * cross[0][0] + J[0][1] * cross[0][1] + J[0][2] * cross[0][2];
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) {
      double s = 0;
      for (int i = 0; i < dims; ++i) s += cross[i][j] * r.d[i][v];
      g[j][v] = s / det;
    }
  return det;
}

template <class View>
void load_element(const View& x, std::int64_t e, double (&c)[dims][vertices]) {
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) c[j][v] = static_cast<double>(x(e, j, v));
}

// `implementation: reference`: the plain host loop, on host arrays.
template <class CoordView, class GradView>
void reference_gradients(const CoordView& x, const GradView& g,
                         const ReferenceGradients<double>& r) {
  using T = typename GradView::non_const_value_type;
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  for (std::int64_t e = 0; e < n; ++e) {
    double c[dims][vertices], out[dims][vertices];
    load_element(x, e, c);
    reference_element(c, r, out);
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) g(e, j, v) = static_cast<T>(out[j][v]);
  }
}

// --- Verification -----------------------------------------------------------

// The linear field the check differentiates: f(x) = field . (x - centroid).
inline constexpr double field[dims] = {0.75, -1.25, 2.0};

// The largest scaled errors over the elements checked (see README.md,
// "Verification"). kappa_e = max(1, max |x_v| / (det J_centre)^(1/3)), the
// coordinates' magnitude over the element's size, is how much the rounding
// of the coordinates' sums in J is amplified: the errors of the three checks
// that go through J are divided by it, so one tolerance in machine epsilons
// holds for any box.
struct Errors {
  double reference = 0;     // |g - g_ref|_max / (|g_ref|_max kappa_e)
  double sum_zero = 0;      // |sum_v g[j][v]| / sum_v |g[j][v]|
  double linear_field = 0;  // |sum_v g[j][v] f(x_v) - field_j| / (|field|_max kappa_e)
  double affine = 0;        // affine elements: |g - g_exact|_max / (|g_exact|_max kappa_e)
  std::int64_t elements = 0;
  std::int64_t affine_elements = 0;

  void merge(const Errors& o) {
    reference = std::max(reference, o.reference);
    sum_zero = std::max(sum_zero, o.sum_zero);
    linear_field = std::max(linear_field, o.linear_field);
    affine = std::max(affine, o.affine);
    elements += o.elements;
    affine_elements += o.affine_elements;
  }
};

// A NaN or a non-finite value must fail, never pass as "no larger than".
inline double worst(double current, double e) {
  return std::isfinite(e) ? std::max(current, e) : std::numeric_limits<double>::infinity();
}

// The exact gradients of a parallelepiped, from its edges: column i of A is
// half the mean of the 4 edges along xi_i, and g[j][v] = sum_i Ainv[i][j] d[i][v].
inline bool affine_gradients(const double (&x)[dims][vertices], const ReferenceGradients<double>& r,
                             double (&g)[dims][vertices]) {
  double A[dims][dims] = {};  // A[j][i] = dx_j / dxi_i
  for (int v = 0; v < vertices; ++v)
    for (int i = 0; i < dims; ++i)
      for (int j = 0; j < dims; ++j) A[j][i] += vertex_sign(v, i) * x[j][v] / 8.0;
  // Gauss-Jordan with partial pivoting on [A | I].
  double m[dims][2 * dims];
  for (int j = 0; j < dims; ++j)
    for (int k = 0; k < 2 * dims; ++k) m[j][k] = k < dims ? A[j][k] : (k - dims == j);
  for (int col = 0; col < dims; ++col) {
    int pivot = col;
    for (int row = col + 1; row < dims; ++row)
      if (std::abs(m[row][col]) > std::abs(m[pivot][col])) pivot = row;
    if (m[pivot][col] == 0) return false;
    for (int k = 0; k < 2 * dims; ++k) std::swap(m[col][k], m[pivot][k]);
    const double p = m[col][col];
    for (int k = 0; k < 2 * dims; ++k) m[col][k] /= p;
    for (int row = 0; row < dims; ++row) {
      if (row == col) continue;
      const double f = m[row][col];
      for (int k = 0; k < 2 * dims; ++k) m[row][k] -= f * m[col][k];
    }
  }
  for (int j = 0; j < dims; ++j)
    for (int v = 0; v < vertices; ++v) {
      double s = 0;
      for (int i = 0; i < dims; ++i) s += m[i][dims + j] * r.d[i][v];
      g[j][v] = s;
    }
  return true;
}

// det J at the element's centre, where dN_v/dxi_i = sign / 8.
inline double centre_jacobian_determinant(const double (&x)[dims][vertices]) {
  double J[dims][dims] = {};
  for (int v = 0; v < vertices; ++v)
    for (int i = 0; i < dims; ++i)
      for (int j = 0; j < dims; ++j) J[i][j] += vertex_sign(v, i) * x[j][v] / 8.0;
  return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
         J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
         J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

// Checks the elements [begin, end); element e is the mesh's offset + e.
// `compare` is false when the results are the reference's own.
template <class CoordView, class GradView>
Errors check_elements(const CoordView& x, const GradView& g, const ReferenceGradients<double>& r,
                      std::int64_t affine_every, std::int64_t offset, bool compare,
                      std::int64_t begin, std::int64_t end) {
  const double inf = std::numeric_limits<double>::infinity();
  Errors err;
  for (std::int64_t e = begin; e < end; ++e) {
    double c[dims][vertices], got[dims][vertices], ref[dims][vertices];
    load_element(x, e, c);
    load_element(g, e, got);
    double x_max = 0, centroid[dims] = {};
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v) {
        x_max = std::max(x_max, std::abs(c[j][v]));
        centroid[j] += c[j][v] / vertices;
      }
    // kappa from the element's own size (its Jacobian at the centre, from the
    // vertices alone), so that only the comparisons depend on the reference
    // gradients. An inverted or degenerate element has a NaN kappa: it fails
    // every check scaled by kappa.
    const double size = centre_jacobian_determinant(c);
    const double kappa = size > 0 && std::isfinite(size) ? std::max(1.0, x_max / std::cbrt(size))
                                                         : std::numeric_limits<double>::quiet_NaN();

    if (compare) {
      const double det = reference_element(c, r, ref);
      double diff = 0, scale = 0;
      for (int j = 0; j < dims; ++j)
        for (int v = 0; v < vertices; ++v) {
          diff = worst(diff, std::abs(got[j][v] - ref[j][v]));
          scale = std::max(scale, std::abs(ref[j][v]));
        }
      // No valid reference where the element is inverted at the point.
      err.reference = worst(err.reference, det > 0 ? diff / (scale * kappa) : inf);
    }
    const double field_max = std::max({std::abs(field[0]), std::abs(field[1]), std::abs(field[2])});
    for (int j = 0; j < dims; ++j) {
      double sum = 0, magnitude = 0, derivative = 0;
      for (int v = 0; v < vertices; ++v) {
        sum += got[j][v];
        magnitude += std::abs(got[j][v]);
        double f = 0;
        for (int k = 0; k < dims; ++k) f += field[k] * (c[k][v] - centroid[k]);
        derivative += got[j][v] * f;
      }
      err.sum_zero = worst(err.sum_zero, std::abs(sum) / magnitude);
      err.linear_field =
          worst(err.linear_field, std::abs(derivative - field[j]) / (field_max * kappa));
    }
    if ((offset + e) % affine_every == 0) {
      double exact[dims][vertices];
      double e_affine = inf;
      if (affine_gradients(c, r, exact)) {
        double diff = 0, scale = 0;
        for (int j = 0; j < dims; ++j)
          for (int v = 0; v < vertices; ++v) {
            diff = worst(diff, std::abs(got[j][v] - exact[j][v]));
            scale = std::max(scale, std::abs(exact[j][v]));
          }
        e_affine = diff / (scale * kappa);
      }
      err.affine = worst(err.affine, e_affine);
      ++err.affine_elements;
    }
    ++err.elements;
  }
  return err;
}

// Every element, on `threads` host threads (plain std::thread: the host
// backend of a GPU build is serial).
template <class CoordView, class GradView>
Errors check(const CoordView& x, const GradView& g, const ReferenceGradients<double>& r,
             std::int64_t affine_every, std::int64_t offset, bool compare, int threads) {
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  const std::int64_t parts = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 4096));
  std::vector<Errors> partial(static_cast<std::size_t>(parts));
  std::vector<std::thread> pool;
  for (std::int64_t p = 0; p < parts; ++p)
    pool.emplace_back([&, p] {
      partial[static_cast<std::size_t>(p)] = check_elements(x, g, r, affine_every, offset, compare,
                                                            n * p / parts, n * (p + 1) / parts);
    });
  Errors all;
  for (std::int64_t p = 0; p < parts; ++p) {
    pool[static_cast<std::size_t>(p)].join();
    all.merge(partial[static_cast<std::size_t>(p)]);
  }
  return all;
}

using StagingSpace = PinnedHostSpace;  // full-speed copies from the device

// Copies elements [begin, begin + m) of `from` into the first m of `to`, as
// contiguous pieces: each of the 24 planes of a LayoutLeft array, or the one
// block of a LayoutRight one.
template <class To, class From>
void copy_elements(const To& to, const From& from, std::int64_t begin, std::int64_t m) {
  const auto dst = std::make_pair(std::int64_t{0}, m);
  const auto src = std::make_pair(begin, begin + m);
  if constexpr (std::is_same<typename From::array_layout, Kokkos::LayoutLeft>::value) {
    for (int j = 0; j < dims; ++j)
      for (int v = 0; v < vertices; ++v)
        Kokkos::deep_copy(Kokkos::subview(to, dst, j, v), Kokkos::subview(from, src, j, v));
  } else {
    Kokkos::deep_copy(Kokkos::subview(to, dst, Kokkos::ALL, Kokkos::ALL),
                      Kokkos::subview(from, src, Kokkos::ALL, Kokkos::ALL));
  }
}

// Checks arrays wherever they live. Device arrays come to the host in
// chunks of `chunk` elements through one pinned buffer, so the host needs
// no copy of the whole problem and the copies run at full speed; host arrays
// are checked in place unless `stage` asks for the chunked path (tests).
template <class View>
Errors check_arrays(const View& x, const View& g, const ReferenceGradients<double>& r,
                    std::int64_t affine_every, std::int64_t offset, bool compare, int threads,
                    std::int64_t chunk = std::int64_t{1} << 19, bool stage = false) {
  constexpr bool host_accessible =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;
  if constexpr (host_accessible)
    if (!stage) return check(x, g, r, affine_every, offset, compare, threads);
  using Staging =
      Kokkos::View<typename View::non_const_data_type, typename View::array_layout, StagingSpace>;
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  const std::int64_t size = std::max<std::int64_t>(1, std::min(n, chunk));
  auto make = [&](const char* label) {
    const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    if constexpr (Staging::traits::rank_dynamic == 1)
      return Staging(alloc, static_cast<std::size_t>(size));
    else
      return Staging(alloc, static_cast<std::size_t>(size), dims, vertices);
  };
  const Staging hx = make("hexgrad::check_x"), hg = make("hexgrad::check_g");
  Errors all;
  for (std::int64_t begin = 0; begin < n; begin += size) {
    const std::int64_t m = std::min(size, n - begin);
    copy_elements(hx, x, begin, m);
    copy_elements(hg, g, begin, m);
    const auto first = std::make_pair(std::int64_t{0}, m);
    all.merge(check(Kokkos::subview(hx, first, Kokkos::ALL, Kokkos::ALL),
                    Kokkos::subview(hg, first, Kokkos::ALL, Kokkos::ALL), r, affine_every,
                    offset + begin, compare, threads));
  }
  return all;
}

// The fault the tests inject: the sign of dN_v/dxi flipped for the vertex
// where it is largest (never zero: sum_v |dN_v/dxi| = 1 at any point).
inline ReferenceGradients<double> with_flipped_sign(ReferenceGradients<double> r) {
  int largest = 0;
  for (int v = 1; v < vertices; ++v)
    if (std::abs(r.d[0][v]) > std::abs(r.d[0][largest])) largest = v;
  r.d[0][largest] = -r.d[0][largest];
  return r;
}

// Tolerances, in units of the arrays' machine epsilon; README.md gives the
// bounds they come from and the errors seen.
struct Tolerances {
  double reference, sum_zero, linear_field, affine;
};

template <class T>
Tolerances tolerances() {
  const double eps = std::numeric_limits<T>::epsilon();
  return {32 * eps, 16 * eps, 32 * eps, 32 * eps};
}

// --- The faults and the checks a run reports ----------------------------------

// run.inject_fault: a sign flipped in the reference gradients the timed
// kernel uses (kernel-sign) or in those the checks use (reference-sign).
enum class Fault { none, kernel_sign, reference_sign };

// run.inject_fault's fault.
inline Fault fault_of(const RunSettings& run) {
  return run.inject_fault == "kernel-sign"      ? Fault::kernel_sign
         : run.inject_fault == "reference-sign" ? Fault::reference_sign
                                                : Fault::none;
}

// The checks of the gradients, each the worst over the ranks against its
// tolerance; `compare`: against the host reference too (not when the
// reference is what was timed).
template <class T>
std::vector<Check> verification_checks(const Errors& local, bool compare) {
  std::vector<Check> checks;
  const Tolerances tol = tolerances<T>();
  if (compare)
    checks.push_back({"reference", "max over elements of |g - g_ref|_max / (|g_ref|_max kappa)",
                      comm::max(local.reference), tol.reference});
  checks.push_back({"sum-zero", "max over elements, directions of |sum_v g| / sum_v |g|",
                    comm::max(local.sum_zero), tol.sum_zero});
  checks.push_back({"linear-field",
                    "max over elements of |grad f - c|_max / (|c|_max kappa), f = c.x",
                    comm::max(local.linear_field), tol.linear_field});
  checks.push_back({"affine",
                    "max over affine elements of |g - g_exact|_max / (|g_exact|_max kappa)",
                    comm::max(local.affine), tol.affine});
  return checks;
}

}  // namespace karma::hexgrad
