// Kokkos' math functions for device code, under one name for every Kokkos
// karma builds with: Kokkos 3.7 moved them out of Kokkos::Experimental.
#pragma once

#include <Kokkos_Core.hpp>

namespace karma::math {

#if KOKKOS_VERSION >= 30700
using Kokkos::cos;
using Kokkos::fabs;
using Kokkos::log;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::log;
using Kokkos::Experimental::sqrt;
#endif

}  // namespace karma::math
