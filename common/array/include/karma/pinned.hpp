// Page-locked host memory: the device reads and writes it directly, and
// copies between it and the device run at the link's full speed (pageable
// memory goes through a driver bounce buffer). Plain host memory where the
// backend has no such space.
#pragma once

#include <Kokkos_Core.hpp>

namespace karma {

#if defined(KOKKOS_ENABLE_CUDA)
using PinnedHostSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using PinnedHostSpace = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using PinnedHostSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using PinnedHostSpace = Kokkos::HostSpace;
#endif

}  // namespace karma
