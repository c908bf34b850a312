// Sum3D: the sum of every element of a 3D int array (the paper's types).
#include "timed_run.hpp"

namespace karma::microbench {
namespace {

struct Sum3D {
  static constexpr const char* name = "Sum3D";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    run_sum3d<W, Layout, E, N0, N1, N2, I>(state, KARMA_MICROBENCH_KERNEL_OF(sum3d, W, I, Layout));
  }
};

}  // namespace

void register_sum3d(Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<Sum3D>(Serial<6, 5, 4>{}, Parallel<6, 5, 4>{});
  else
    add_3d_family<Sum3D>(Serial<20, 20, 20>{}, Serial<320, 320, 320>{}, Parallel<512, 512, 512>{});
}

}  // namespace karma::microbench
