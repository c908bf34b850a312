// One pattern for the vendor code a mini-app may be built with (hand-written
// CUDA, cuBLAS, CBLAS), so that each library's wrapper says only what
// differs: which library, its entry points, and the message of a call that
// cannot happen.
//
//   namespace karma::app::lib {
//   inline constexpr bool available = vendor::cublas;  // the deck's check
//   }
//   #if KARMA_VENDOR_CUBLAS
//   ... the wrapper: the entry points, where the library is built in
//   #else
//   namespace karma::app::lib {
//   template <class T>
//   inline constexpr vendor::Missing<Result> entry{"cublas in a build without it"};
//   }
//   #endif
//
// A deck that asks for a library the build lacks is refused first (exit 2),
// so reaching a Missing entry point is an internal error (exit_runtime_error).
#pragma once

#include <Kokkos_Core.hpp>  // defines KOKKOS_ENABLE_CUDA

#include "karma/error.hpp"

#include <string>

// What this build compiles, as the preprocessor sees it (KARMA_HAVE_CUBLAS
// and KARMA_HAVE_CBLAS: the build found the library for this mini-app).
#if defined(KOKKOS_ENABLE_CUDA)
#define KARMA_VENDOR_CUDA 1
#else
#define KARMA_VENDOR_CUDA 0
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(KARMA_HAVE_CUBLAS)
#define KARMA_VENDOR_CUBLAS 1
#else
#define KARMA_VENDOR_CUBLAS 0
#endif
#if defined(KARMA_HAVE_CBLAS)
#define KARMA_VENDOR_CBLAS 1
#else
#define KARMA_VENDOR_CBLAS 0
#endif

namespace karma::vendor {

// ... and as the program sees it.
inline constexpr bool cuda = KARMA_VENDOR_CUDA;
inline constexpr bool cublas = KARMA_VENDOR_CUBLAS;
inline constexpr bool cblas = KARMA_VENDOR_CBLAS;

// An entry point of a library this build lacks: it takes the real one's
// arguments and throws Error(exit_runtime_error, "internal: " + what).
template <class Result>
struct Missing {
  const char* what;  // "<implementation> in a build without <library>"
  template <class... Args>
  [[noreturn]] Result operator()(const Args&...) const {
    throw Error(exit_runtime_error, std::string("internal: ") + what);
  }
};

}  // namespace karma::vendor
