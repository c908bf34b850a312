// The hand-written CUDA kernel of hexgrad, as the paper's: one element per
// thread, strides hard-coded for the coalesced order (element index fastest,
// the memory order of a Kokkos LayoutLeft (N, 3, 8) array), no multi-index
// arithmetic. It runs on the Kokkos arrays' own memory, on the stream of the
// default Kokkos execution-space instance, so the harness's fences cover it.
// Compiled only where Kokkos has its CUDA backend, in the mini-apps' one
// vendor pattern (miniapps/common/vendor.hpp).
#pragma once

#include <Kokkos_Core.hpp>  // defines KOKKOS_ENABLE_CUDA

#include "common/vendor.hpp"
#include "hexgrad_kernels.hpp"
#include "karma/error.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace karma::hexgrad::native {

inline constexpr bool available = vendor::cuda;

}  // namespace karma::hexgrad::native

#if KARMA_VENDOR_CUDA

#include <cuda_runtime.h>

namespace karma::hexgrad::native {

inline constexpr int block = gpu_block;

// x and g hold 24 planes of `stride` values: plane j + 3 v is coordinate
// (gradient component) j of vertex v, element e at offset e in each plane.
template <class T, class Index>
__global__ void __launch_bounds__(block)
    gradients_kernel(const T* __restrict__ x, T* __restrict__ g, const Index n, const Index stride,
                     const ReferenceGradients<T> r) {
  const Index e = static_cast<Index>(blockIdx.x) * block + static_cast<Index>(threadIdx.x);
  if (e >= n) return;
  const T* __restrict__ xe = x + e;
  T* __restrict__ ge = g + e;

  T c[3][8];
#pragma unroll
  for (int v = 0; v < 8; ++v) {
#pragma unroll
    for (int j = 0; j < 3; ++j) c[j][v] = xe[(j + 3 * v) * stride];
  }

  // Jacobian J[i][j] = dx_j / dxi_i.
  T J[3][3];
#pragma unroll
  for (int i = 0; i < 3; ++i) {
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      T s = r.d[i][0] * c[j][0];
#pragma unroll
      for (int v = 1; v < 8; ++v) s += r.d[i][v] * c[j][v];
      J[i][j] = s;
    }
  }

  // Inverse through the adjugate.
  const T a00 = J[1][1] * J[2][2] - J[1][2] * J[2][1];
  const T a01 = J[0][2] * J[2][1] - J[0][1] * J[2][2];
  const T a02 = J[0][1] * J[1][2] - J[0][2] * J[1][1];
  const T a10 = J[1][2] * J[2][0] - J[1][0] * J[2][2];
  const T a11 = J[0][0] * J[2][2] - J[0][2] * J[2][0];
  const T a12 = J[0][2] * J[1][0] - J[0][0] * J[1][2];
  const T a20 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
  const T a21 = J[0][1] * J[2][0] - J[0][0] * J[2][1];
  const T a22 = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  const T s = T(1) / (J[0][0] * a00 + J[0][1] * a10 + J[0][2] * a20);
  const T m00 = a00 * s, m01 = a01 * s, m02 = a02 * s;
  const T m10 = a10 * s, m11 = a11 * s, m12 = a12 * s;
  const T m20 = a20 * s, m21 = a21 * s, m22 = a22 * s;

#pragma unroll
  for (int v = 0; v < 8; ++v) {
    const T d0 = r.d[0][v], d1 = r.d[1][v], d2 = r.d[2][v];
    ge[(0 + 3 * v) * stride] = m00 * d0 + m01 * d1 + m02 * d2;
    ge[(1 + 3 * v) * stride] = m10 * d0 + m11 * d1 + m12 * d2;
    ge[(2 + 3 * v) * stride] = m20 * d0 + m21 * d1 + m22 * d2;
  }
}

// One launch on `stream`; a launch error is a run-time error (exit 3).
template <class T, class Index>
void gradients(const T* x, T* g, std::int64_t n, std::int64_t stride,
               const ReferenceGradients<T>& r, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((n + block - 1) / block);
  gradients_kernel<T, Index>
      <<<blocks, block, 0, stream>>>(x, g, static_cast<Index>(n), static_cast<Index>(stride), r);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw Error(exit_runtime_error,
                std::string("hexgrad native-cuda launch failed: ") + cudaGetErrorString(status));
}

// One execution of the kernel on the arrays of a LayoutLeft (N, 3, 8) View
// pair, whose planes are stride(1) apart, on the default instance's stream.
template <class T, class Index, class View>
std::function<void()> launcher(const View& x, const View& g, std::int64_t n,
                               const ReferenceGradients<T>& r) {
  const auto stride = static_cast<std::int64_t>(x.stride(1));
  if (static_cast<std::int64_t>(x.stride(2)) != dims * stride ||
      static_cast<std::int64_t>(x.stride(0)) != 1)
    throw Error(exit_runtime_error, "internal: native-cuda needs LayoutLeft strides");
  const cudaStream_t stream = DefaultSpace().cuda_stream();
  T* const xp = x.data();
  T* const gp = g.data();
  return [=] { gradients<T, Index>(xp, gp, n, stride, r, stream); };
}

}  // namespace karma::hexgrad::native

#else

namespace karma::hexgrad::native {

// A function template as the CUDA one is (a vendor::Missing takes no
// template arguments); native-cuda's code version hashes this text too.
template <class T, class Index, class View>
std::function<void()> launcher(const View&, const View&, std::int64_t,
                               const ReferenceGradients<T>&) {
  throw Error(exit_runtime_error, "internal: native-cuda in a build without CUDA");
}

}  // namespace karma::hexgrad::native

#endif  // KARMA_VENDOR_CUDA
