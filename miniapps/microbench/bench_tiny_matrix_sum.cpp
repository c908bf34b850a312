// TinyMatrixSum: out += in over N small 3 x 3 int matrices (the paper's
// N x 3 x 3, where static small extents pay most).
#include "arms.hpp"

namespace karma::microbench {
namespace {

struct TinyMatrixSum {
  static constexpr const char* name = "TinyMatrixSum";
  static constexpr const char* stem = "tiny_matrix_sum";
  // in read, out read and written.
  static double bytes(Index n0, Index n1, Index n2) {
    return 3 * elements3(n0, n1, n2) * sizeof(int);
  }
  static double footprint(Index n0, Index n1, Index n2) {
    return 2 * elements3(n0, n1, n2) * sizeof(int);
  }

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static Arm arm(bool corrupt) {
    return in_out_arm<W, Layout, E, N0, N1, N2, I>(
        KARMA_MICROBENCH_KERNEL_OF(tiny_matrix_sum, W, I, Layout), corrupt,
        [](const auto& out) { fill(out, seed_b); },
        [](Index calls) {
          return AccumulatedAnswer{seed_b, seed_a, calls};
        });
  }
};

}  // namespace

void add_tiny_matrix_sum(std::vector<Benchmark>& out, Sizes sizes) {
  if (sizes == Sizes::tiny)
    add_3d_family<TinyMatrixSum>(out, SerialByref<50, 3, 3>{}, Parallel<50, 3, 3>{});
  else
    add_3d_family<TinyMatrixSum>(out, SerialByref<1000000, 3, 3>{}, Parallel<10000000, 3, 3>{});
}

}  // namespace karma::microbench
