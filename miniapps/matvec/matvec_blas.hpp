// The vendor GEMV references on the same data as the Kokkos kernels: CBLAS
// (OpenBLAS on Debian) on a CPU, cuBLAS on an NVIDIA GPU. Each is compiled
// only where the build found it (KARMA_HAVE_CBLAS, KARMA_HAVE_CUBLAS).
#pragma once

#include "common/vendor.hpp"
#include "karma/error.hpp"
#include "karma/harness.hpp"

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

namespace karma::matvec::blas {

constexpr bool have_cblas() { return vendor::cblas; }
constexpr bool have_cublas() { return vendor::cublas; }

inline int blas_int(std::int64_t v, const char* what) {
  if (v > INT_MAX)
    throw Error(exit_runtime_error, std::string("BLAS GEMV takes int sizes; ") + what + " = " +
                                        std::to_string(v) + " exceeds 2^31 - 1");
  return static_cast<int>(v);
}

// The GEMV call that computes y = B x for B of rows x cols with leading
// dimension ld, in BLAS terms (column-major): LayoutLeft B is 'N' on B;
// LayoutRight B is 'T' on the column-major cols x rows matrix B^T.
inline std::string gemv_call(const std::string& routine, bool row_major, std::int64_t rows,
                             std::int64_t cols, std::int64_t ld) {
  const std::string m = std::to_string(row_major ? cols : rows);
  const std::string n = std::to_string(row_major ? rows : cols);
  return routine + "(" + (row_major ? "'T'" : "'N'") + ", m=" + m + ", n=" + n +
         ", lda=" + std::to_string(ld) + ")";
}

}  // namespace karma::matvec::blas

#if KARMA_VENDOR_CBLAS

#include <cblas.h>

namespace karma::matvec::blas {

inline void cblas_gemv(bool row_major, std::int64_t rows, std::int64_t cols, const double* b,
                       std::int64_t ld, const double* x, double* y) {
  cblas_dgemv(row_major ? CblasRowMajor : CblasColMajor, CblasNoTrans, blas_int(rows, "rows"),
              blas_int(cols, "columns"), 1.0, b, blas_int(ld, "lda"), x, 1, 0.0, y, 1);
}

inline void cblas_gemv(bool row_major, std::int64_t rows, std::int64_t cols, const float* b,
                       std::int64_t ld, const float* x, float* y) {
  cblas_sgemv(row_major ? CblasRowMajor : CblasColMajor, CblasNoTrans, blas_int(rows, "rows"),
              blas_int(cols, "columns"), 1.0f, b, blas_int(ld, "lda"), x, 1, 0.0f, y, 1);
}

// The same number of threads as the Kokkos kernels get, where the library
// lets us say so (OpenBLAS); returns the count in use, or 0 when unknown.
inline int cblas_set_threads(int threads) {
#if defined(KARMA_HAVE_OPENBLAS)
  openblas_set_num_threads(threads);
  return openblas_get_num_threads();
#else
  (void)threads;
  return 0;
#endif
}

inline std::string cblas_library() {
#if defined(KARMA_HAVE_OPENBLAS)
  return std::string(openblas_get_config()) + " (core " + openblas_get_corename() + ")";
#else
  return "CBLAS (vendor unknown)";
#endif
}

// The CPU BLAS reference as a variant of the harness: y = B x (B rows x
// cols, leading dimension ld, in its own layout) on Kokkos' host threads.
template <class T>
karma::Variant cblas_variant(bool row_major, std::int64_t rows, std::int64_t cols, const T* b,
                             std::int64_t ld, const T* x, T* y) {
  const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  const int used = cblas_set_threads(threads);
  const std::string t = sizeof(T) == 4 ? "s" : "d";
  karma::Variant v;
  v.name = "cblas-" + t + "gemv";
  v.implementation = "cblas";
  v.variant = t + "gemv";
  v.run = [=] { cblas_gemv(row_major, rows, cols, b, ld, x, y); };
  v.code = {"karma::matvec::blas::cblas_gemv"};
  v.extra = {{"library", cblas_library()},
             {"threads", used},
             {"kokkos_threads", threads},
             {"call", gemv_call("cblas_" + t + "gemv", row_major, rows, cols, ld)}};
  return v;
}

}  // namespace karma::matvec::blas

#else

namespace karma::matvec::blas {

template <class T>
inline constexpr vendor::Missing<karma::Variant> cblas_variant{"cblas in a build without a CBLAS"};

}  // namespace karma::matvec::blas

#endif  // KARMA_VENDOR_CBLAS

#if KARMA_VENDOR_CUBLAS

#include <cublas_v2.h>

namespace karma::matvec::blas {

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(exit_runtime_error, std::string(what) + " failed: cuBLAS status " +
                                        std::to_string(static_cast<int>(status)));
}

// A cuBLAS handle on the stream of the default Kokkos execution space, so
// the core's fences cover its kernels.
class Cublas {
 public:
  Cublas() {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetStream(handle_, Kokkos::DefaultExecutionSpace().cuda_stream()),
                 "cublasSetStream");
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  void gemv(bool row_major, std::int64_t rows, std::int64_t cols, const double* b, std::int64_t ld,
            const double* x, double* y) const {
    const double one = 1, zero = 0;
    check_cublas(
        row_major
            ? cublasDgemv(handle_, CUBLAS_OP_T, blas_int(cols, "columns"), blas_int(rows, "rows"),
                          &one, b, blas_int(ld, "lda"), x, 1, &zero, y, 1)
            : cublasDgemv(handle_, CUBLAS_OP_N, blas_int(rows, "rows"), blas_int(cols, "columns"),
                          &one, b, blas_int(ld, "lda"), x, 1, &zero, y, 1),
        "cublasDgemv");
  }
  void gemv(bool row_major, std::int64_t rows, std::int64_t cols, const float* b, std::int64_t ld,
            const float* x, float* y) const {
    const float one = 1, zero = 0;
    check_cublas(
        row_major
            ? cublasSgemv(handle_, CUBLAS_OP_T, blas_int(cols, "columns"), blas_int(rows, "rows"),
                          &one, b, blas_int(ld, "lda"), x, 1, &zero, y, 1)
            : cublasSgemv(handle_, CUBLAS_OP_N, blas_int(rows, "rows"), blas_int(cols, "columns"),
                          &one, b, blas_int(ld, "lda"), x, 1, &zero, y, 1),
        "cublasSgemv");
  }
  std::string version() const {
    int v = 0;
    cublasGetVersion(handle_, &v);
    return "cuBLAS " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100);
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

// cuBLAS as a variant of the harness: y = B x as cblas_variant, on the
// default Kokkos instance's stream; the handle lives as long as the variant.
template <class T>
karma::Variant cublas_variant(bool row_major, std::int64_t rows, std::int64_t cols, const T* b,
                              std::int64_t ld, const T* x, T* y) {
  auto handle = std::make_shared<Cublas>();
  const std::string t = sizeof(T) == 4 ? "s" : "d";
  karma::Variant v;
  v.name = "cublas-" + t + "gemv";
  v.implementation = "cublas";
  v.variant = t + "gemv";
  v.run = [=] { handle->gemv(row_major, rows, cols, b, ld, x, y); };
  v.code = {"karma::matvec::blas::Cublas"};
  v.extra = {{"library", handle->version()},
             {"call", gemv_call(std::string("cublas") + (sizeof(T) == 4 ? "S" : "D") + "gemv",
                                row_major, rows, cols, ld)}};
  return v;
}

}  // namespace karma::matvec::blas

#else

namespace karma::matvec::blas {

template <class T>
inline constexpr vendor::Missing<karma::Variant> cublas_variant{"cublas in a build without cuBLAS"};

}  // namespace karma::matvec::blas

#endif  // KARMA_VENDOR_CUBLAS
