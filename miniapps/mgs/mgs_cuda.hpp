// The seed paper's mgs in hand-written CUDA (implementation: native-cuda):
// the same left-looking sequence of norm, scale, dot and axpy kernels as the
// Kokkos `mgs`, with what a CUDA programmer would write for them: grid-stride
// reductions with four independent accumulators, warp-shuffle block sums and
// a last-block finish (one launch per reduction, deterministic), element-wise
// kernels of one element per thread. Everything runs on the stream of the
// Kokkos execution space, so the harness's fences cover it. Compiled only
// where Kokkos has its CUDA backend.
#pragma once

#include <Kokkos_Core.hpp>  // defines KOKKOS_ENABLE_CUDA

#include "common/vendor.hpp"
#include "karma/comm.hpp"
#include "karma/error.hpp"
#include "mgs_kernels.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace karma::mgs::native {

inline constexpr bool available = vendor::cuda;

}  // namespace karma::mgs::native

#if KARMA_VENDOR_CUDA

#include <cuda_runtime.h>

namespace karma::mgs::native {

inline constexpr int block_size = 256;

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(exit_runtime_error,
                std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The block's sum, in thread 0.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T warps[block_size / 32];
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  v = threadIdx.x < block_size / 32 ? warps[threadIdx.x] : T(0);
  if (warp == 0) v = warp_sum(v);
  return v;
}

// result = sum_r x[r] y[r] (y == x: the squared norm; root: its square root).
// Each block leaves its sum in partial[]; the last block to finish adds them
// in a fixed order. `done` returns to 0 by itself (atomicInc wraps).
template <class T>
__global__ void __launch_bounds__(block_size)
    dot_kernel(std::int64_t n, const T* __restrict__ x, std::int64_t incx, const T* __restrict__ y,
               std::int64_t incy, T* partial, unsigned* done, T* result, bool root) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_size;
  std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * block_size + threadIdx.x;
  for (; r + 3 * stride < n; r += 4 * stride) {
    s0 += x[r * incx] * y[r * incy];
    s1 += x[(r + stride) * incx] * y[(r + stride) * incy];
    s2 += x[(r + 2 * stride) * incx] * y[(r + 2 * stride) * incy];
    s3 += x[(r + 3 * stride) * incx] * y[(r + 3 * stride) * incy];
  }
  for (; r < n; r += stride) s0 += x[r * incx] * y[r * incy];
  const T s = block_sum((s0 + s1) + (s2 + s3));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s;
    __threadfence();
    last = atomicInc(done, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  T t = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += block_size) t += __ldcg(partial + b);
  t = block_sum(t);
  if (threadIdx.x == 0) *result = root ? sqrt(t) : t;
}

// x *= 1 / *r
template <class T>
__global__ void __launch_bounds__(block_size)
    scale_kernel(std::int64_t n, T* __restrict__ x, std::int64_t incx, const T* __restrict__ r) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_size + threadIdx.x;
  if (i < n) x[i * incx] *= T(1) / *r;
}

// y -= *c x
template <class T>
__global__ void __launch_bounds__(block_size)
    axpy_kernel(std::int64_t n, T* __restrict__ y, std::int64_t incy, const T* __restrict__ x,
                std::int64_t incx, const T* __restrict__ c) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_size + threadIdx.x;
  if (i < n) y[i * incy] -= *c * x[i * incx];
}

// Buffers and launch shapes, made once, outside the timed region.
template <class T>
struct Context {
  cudaStream_t stream;
  int reduce_blocks;  // resident blocks of dot_kernel on the whole device
  T* partial = nullptr;
  unsigned* done = nullptr;
  T* staging = nullptr;  // pinned: a local sum on its way to MPI

  Context() : stream(Kokkos::DefaultExecutionSpace().cuda_stream()) {
    int device = 0, sms = 0, per_sm = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dot_kernel<T>, block_size, 0),
          "occupancy");
    reduce_blocks = sms * per_sm;
    check(cudaMalloc(&partial, sizeof(T) * reduce_blocks), "cudaMalloc");
    check(cudaMalloc(&done, sizeof(unsigned)), "cudaMalloc");
    check(cudaMemsetAsync(done, 0, sizeof(unsigned), stream), "cudaMemset");
    check(cudaMallocHost(&staging, sizeof(T)), "cudaMallocHost");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  ~Context() {
    cudaStreamSynchronize(stream);
    cudaFree(partial);
    cudaFree(done);
    cudaFreeHost(staging);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

inline unsigned element_blocks(std::int64_t n) {
  return static_cast<unsigned>(n > 0 ? (n + block_size - 1) / block_size : 1);
}

// *result (device) = x . y summed over ranks (root: its square root). With
// results on the device nothing leaves it; otherwise the local sum makes a
// round trip through the host for MPI.
template <class T>
void dot(Context<T>& c, std::int64_t n, const T* x, std::int64_t incx, const T* y,
         std::int64_t incy, T* result, bool root, bool on_device, Tally& t) {
  const auto blocks = static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min<std::int64_t>(c.reduce_blocks, (n + block_size - 1) / block_size)));
  dot_kernel<T><<<blocks, block_size, 0, c.stream>>>(n, x, incx, y, incy, c.partial, c.done, result,
                                                     root && on_device);
  check(cudaGetLastError(), "dot_kernel launch");
  t.kernel(x == y ? 1 : 2, 0);
  if (on_device) return;
  check(cudaMemcpyAsync(c.staging, result, sizeof(T), cudaMemcpyDeviceToHost, c.stream), "copy");
  check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
  ++t.host_waits;
  comm::sum_in_place(c.staging, 1);
  ++t.allreduces;
  if (root) *c.staging = math::sqrt(*c.staging);
  check(cudaMemcpyAsync(result, c.staging, sizeof(T), cudaMemcpyHostToDevice, c.stream), "copy");
}

// The Kokkos `mgs` loop, column by column, on a's storage: element (r, j) at
// data + r * row_stride + j * column_stride. R (m x m, row-major) on device.
template <class T>
void factor_mgs(Context<T>& c, T* data, std::int64_t rows, int m, std::int64_t row_stride,
                std::int64_t column_stride, T* r, bool on_device, Tally& t) {
  const unsigned blocks = element_blocks(rows);
  const auto column = [&](int j) { return data + j * column_stride; };
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < j; ++i) {
      T* rij = r + static_cast<std::int64_t>(i) * m + j;
      dot(c, rows, column(i), row_stride, column(j), row_stride, rij, false, on_device, t);
      if (rows > 0)
        axpy_kernel<T><<<blocks, block_size, 0, c.stream>>>(rows, column(j), row_stride, column(i),
                                                            row_stride, rij);
      check(cudaGetLastError(), "axpy_kernel launch");
      t.kernel(2, 1);
    }
    T* rjj = r + static_cast<std::int64_t>(j) * m + j;
    dot(c, rows, column(j), row_stride, column(j), row_stride, rjj, true, on_device, t);
    if (rows > 0)
      scale_kernel<T><<<blocks, block_size, 0, c.stream>>>(rows, column(j), row_stride, rjj);
    check(cudaGetLastError(), "scale_kernel launch");
    t.kernel(1, 1);
  }
}

// One factorization by hand-written CUDA: see factorization_by.
template <class T>
std::function<void()> factorization(T* data, std::int64_t rows, int m, std::int64_t row_stride,
                                    std::int64_t column_stride, T* r, bool on_device, Tally& t) {
  return factorization_by<Context<T>>(factor_mgs<T>, data, rows, m, row_stride, column_stride, r,
                                      on_device, t);
}

}  // namespace karma::mgs::native

#else

namespace karma::mgs::native {

template <class T>
inline constexpr vendor::Missing<std::function<void()>> factorization{
    "native-cuda in a build without it"};

}  // namespace karma::mgs::native

#endif  // KARMA_VENDOR_CUDA
