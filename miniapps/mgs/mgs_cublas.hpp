// The seed paper's mgs through cuBLAS (implementation: cublas): the same
// left-looking loop as the Kokkos `mgs`, in device pointer mode so that no
// scalar leaves the device on one rank, on the stream of the Kokkos
// execution space.
//
//   r_ij = q_i . v_j       cublas<t>dot, written to R(i, j) on the device
//   v_j -= r_ij q_i        cublas<t>axpy with alpha = -r_ij: a one-thread
//                          kernel of ours negates R(i, j) into a device slot
//                          (cuBLAS has no call for it)
//   r_jj = ||v_j||         cublas<t>nrm2 into R(j, j)
//   v_j *= 1 / r_jj        a one-thread kernel of ours forms 1 / r_jj, then
//                          cublas<t>scal
//
// Compiled only where Kokkos has its CUDA backend and cuBLAS was found.
#pragma once

#include <Kokkos_Core.hpp>  // defines KOKKOS_ENABLE_CUDA

#include "common/vendor.hpp"
#include "karma/comm.hpp"
#include "karma/error.hpp"
#include "mgs_cuda.hpp"
#include "mgs_kernels.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

namespace karma::mgs::blas {

inline constexpr bool available = vendor::cublas;

}  // namespace karma::mgs::blas

#if KARMA_VENDOR_CUBLAS

#include <cublas_v2.h>

namespace karma::mgs::blas {

inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(exit_runtime_error, std::string("cuBLAS error in ") + what + ": status " +
                                        std::to_string(static_cast<int>(s)));
}

inline cublasStatus_t xdot(cublasHandle_t h, int n, const double* x, int incx, const double* y,
                           int incy, double* r) {
  return cublasDdot(h, n, x, incx, y, incy, r);
}
inline cublasStatus_t xdot(cublasHandle_t h, int n, const float* x, int incx, const float* y,
                           int incy, float* r) {
  return cublasSdot(h, n, x, incx, y, incy, r);
}
inline cublasStatus_t xnrm2(cublasHandle_t h, int n, const double* x, int incx, double* r) {
  return cublasDnrm2(h, n, x, incx, r);
}
inline cublasStatus_t xnrm2(cublasHandle_t h, int n, const float* x, int incx, float* r) {
  return cublasSnrm2(h, n, x, incx, r);
}
inline cublasStatus_t xscal(cublasHandle_t h, int n, const double* alpha, double* x, int incx) {
  return cublasDscal(h, n, alpha, x, incx);
}
inline cublasStatus_t xscal(cublasHandle_t h, int n, const float* alpha, float* x, int incx) {
  return cublasSscal(h, n, alpha, x, incx);
}
inline cublasStatus_t xaxpy(cublasHandle_t h, int n, const double* alpha, const double* x, int incx,
                            double* y, int incy) {
  return cublasDaxpy(h, n, alpha, x, incx, y, incy);
}
inline cublasStatus_t xaxpy(cublasHandle_t h, int n, const float* alpha, const float* x, int incx,
                            float* y, int incy) {
  return cublasSaxpy(h, n, alpha, x, incx, y, incy);
}

template <class T>
__global__ void reciprocal_kernel(const T* x, T* y) {
  *y = T(1) / *x;
}
template <class T>
__global__ void negate_kernel(const T* x, T* y) {
  *y = -*x;
}

template <class T>
struct Context {
  cublasHandle_t handle = nullptr;
  cudaStream_t stream;
  T* slots = nullptr;    // device: -r_ij and 1 / r_jj
  T* staging = nullptr;  // pinned: a local result on its way to MPI

  Context() : stream(Kokkos::DefaultExecutionSpace().cuda_stream()) {
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetStream(handle, stream), "cublasSetStream");
    check(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
    native::check(cudaMalloc(&slots, 2 * sizeof(T)), "cudaMalloc");
    native::check(cudaMallocHost(&staging, sizeof(T)), "cudaMallocHost");
    native::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  ~Context() {
    cudaStreamSynchronize(stream);
    cublasDestroy(handle);
    cudaFree(slots);
    cudaFreeHost(staging);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  T* negated() const { return slots; }
  T* reciprocal() const { return slots + 1; }
};

// Where results go through the host: the local value at `slot` (device) is
// summed over ranks (squared first and rooted after, for a norm) and put back.
template <class T>
void over_ranks(Context<T>& c, T* slot, bool norm, Tally& t) {
  native::check(cudaMemcpyAsync(c.staging, slot, sizeof(T), cudaMemcpyDeviceToHost, c.stream),
                "copy");
  native::check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
  ++t.host_waits;
  if (norm) *c.staging *= *c.staging;
  comm::sum_in_place(c.staging, 1);
  ++t.allreduces;
  if (norm) *c.staging = math::sqrt(*c.staging);
  native::check(cudaMemcpyAsync(slot, c.staging, sizeof(T), cudaMemcpyHostToDevice, c.stream),
                "copy");
}

// As native::factor_mgs; cuBLAS takes 32-bit sizes (checked by the caller).
template <class T>
void factor_mgs(Context<T>& c, T* data, std::int64_t rows, int m, std::int64_t row_stride,
                std::int64_t column_stride, T* r, bool on_device, Tally& t) {
  const int n = static_cast<int>(rows);
  const int inc = static_cast<int>(row_stride);
  const auto column = [&](int j) { return data + j * column_stride; };
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < j; ++i) {
      T* rij = r + static_cast<std::int64_t>(i) * m + j;
      check(xdot(c.handle, n, column(i), inc, column(j), inc, rij), "dot");
      t.kernel(2, 0);
      if (!on_device) over_ranks(c, rij, false, t);
      negate_kernel<T><<<1, 1, 0, c.stream>>>(rij, c.negated());
      native::check(cudaGetLastError(), "negate_kernel launch");
      t.kernel(0, 0);
      check(xaxpy(c.handle, n, c.negated(), column(i), inc, column(j), inc), "axpy");
      t.kernel(2, 1);
    }
    T* rjj = r + static_cast<std::int64_t>(j) * m + j;
    check(xnrm2(c.handle, n, column(j), inc, rjj), "nrm2");
    t.kernel(1, 0);
    if (!on_device) over_ranks(c, rjj, true, t);
    reciprocal_kernel<T><<<1, 1, 0, c.stream>>>(rjj, c.reciprocal());
    native::check(cudaGetLastError(), "reciprocal_kernel launch");
    t.kernel(0, 0);
    check(xscal(c.handle, n, c.reciprocal(), column(j), inc), "scal");
    t.kernel(1, 1);
  }
}

// One factorization by cuBLAS: see factorization_by.
template <class T>
std::function<void()> factorization(T* data, std::int64_t rows, int m, std::int64_t row_stride,
                                    std::int64_t column_stride, T* r, bool on_device, Tally& t) {
  return factorization_by<Context<T>>(factor_mgs<T>, data, rows, m, row_stride, column_stride, r,
                                      on_device, t);
}

}  // namespace karma::mgs::blas

#else

namespace karma::mgs::blas {

template <class T>
inline constexpr vendor::Missing<std::function<void()>> factorization{
    "cublas in a build without it"};

}  // namespace karma::mgs::blas

#endif  // KARMA_VENDOR_CUBLAS
