// TinyMatrixSum: out += in over N small 3 x 3 int matrices (the paper's
// N x 3 x 3, where static small extents pay most).
#include "timed_run.hpp"

namespace karma::microbench {
namespace {

struct TinyMatrixSum {
  static constexpr const char* name = "TinyMatrixSum";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    // in read, out read and written.
    const double bytes = 3 * elements3(N0, N1, N2) * sizeof(int);
    run_in_out<W, Layout, E, N0, N1, N2, I>(
        state, KARMA_MICROBENCH_KERNEL_OF(tiny_matrix_sum, W, I, Layout), bytes,
        [](const auto& out) { fill(out, seed_b); },
        [](const benchmark::State& finished) {
          return AccumulatedAnswer{seed_b, seed_a, static_cast<Index>(finished.iterations())};
        });
  }
};

}  // namespace

void register_tiny_matrix_sum(Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<TinyMatrixSum>(Serial<50, 3, 3>{}, Parallel<50, 3, 3>{}, Byref<50, 3, 3>{});
  else
    add_3d_family<TinyMatrixSum>(Serial<1000000, 3, 3>{}, Byref<1000000, 3, 3>{},
                                 Parallel<10000000, 3, 3>{});
}

}  // namespace karma::microbench
