// Stencil3D: the 27-point box sum of a 3D int array (the paper's stencil).
#include "timed_run.hpp"

namespace karma::microbench {
namespace {

struct Stencil3D {
  static constexpr const char* name = "Stencil3D";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    // Each input element read once, each interior output element written once.
    const double bytes = (elements3(N0, N1, N2) + elements3(N0 - 2, N1 - 2, N2 - 2)) * sizeof(int);
    run_in_out<W, Layout, E, N0, N1, N2, I>(
        state, KARMA_MICROBENCH_KERNEL_OF(stencil3d, W, I, Layout), bytes,
        [](const auto& out) { Kokkos::deep_copy(out, poison); },
        [](const benchmark::State&) {
          return StencilAnswer{seed_a, N0, N1, N2};
        });
  }
};

}  // namespace

void register_stencil3d(Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<Stencil3D>(Serial<7, 6, 5>{}, Parallel<7, 6, 5>{}, Byref<7, 6, 5>{});
  else
    add_3d_family<Stencil3D>(Serial<80, 80, 80>{}, Byref<80, 80, 80>{}, Serial<320, 320, 320>{},
                             Parallel<512, 512, 512>{});
}

}  // namespace karma::microbench
