// Subspan3D: Sum3D through 2D and 1D slices (the paper's subspan benchmark).
#include "arms.hpp"

namespace karma::microbench {
namespace {

struct Subspan3D {
  static constexpr const char* name = "Subspan3D";
  static constexpr const char* stem = "subspan3d";
  // The array read once.
  static double bytes(Index n0, Index n1, Index n2) { return elements3(n0, n1, n2) * sizeof(int); }
  static double footprint(Index n0, Index n1, Index n2) { return bytes(n0, n1, n2); }

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static Arm arm(bool corrupt) {
    return sum_arm<W, Layout, E, N0, N1, N2, I>(KARMA_MICROBENCH_KERNEL_OF(subspan3d, W, I, Layout),
                                                corrupt);
  }
};

}  // namespace

void add_subspan3d(std::vector<Benchmark>& out, Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<Subspan3D>(out, SerialByref<6, 5, 4>{}, Parallel<6, 5, 4>{});
  else
    add_3d_family<Subspan3D>(out, SerialByref<20, 20, 20>{}, Serial<320, 320, 320>{},
                             Parallel<512, 512, 512>{});
}

}  // namespace karma::microbench
