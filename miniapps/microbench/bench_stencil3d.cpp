// Stencil3D: the 27-point box sum of a 3D int array (the paper's stencil).
#include "arms.hpp"

namespace karma::microbench {
namespace {

struct Stencil3D {
  static constexpr const char* name = "Stencil3D";
  static constexpr const char* stem = "stencil3d";
  // Each input element read once, each interior output element written once.
  static double bytes(Index n0, Index n1, Index n2) {
    return (elements3(n0, n1, n2) + elements3(n0 - 2, n1 - 2, n2 - 2)) * sizeof(int);
  }
  static double footprint(Index n0, Index n1, Index n2) {
    return 2 * elements3(n0, n1, n2) * sizeof(int);
  }

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static Arm arm(bool corrupt) {
    return in_out_arm<W, Layout, E, N0, N1, N2, I>(
        KARMA_MICROBENCH_KERNEL_OF(stencil3d, W, I, Layout), corrupt,
        [](const auto& out) { Kokkos::deep_copy(out, poison); },
        [](Index) {
          return StencilAnswer{seed_a, N0, N1, N2};
        });
  }
};

}  // namespace

void add_stencil3d(std::vector<Benchmark>& out, Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<Stencil3D>(out, SerialByref<7, 6, 5>{}, Parallel<7, 6, 5>{});
  else
    add_3d_family<Stencil3D>(out, SerialByref<80, 80, 80>{}, Serial<320, 320, 320>{},
                             Parallel<512, 512, 512>{});
}

}  // namespace karma::microbench
