// MatVec: y = A x in double (the paper's matrix-vector product).
#include "timed_run.hpp"

namespace karma::microbench {
namespace {

struct MatVec {
  static constexpr const char* name = "MatVec";

  template <Where W, class Layout, Index Rows, Index Cols, Impl I>
  static void run(benchmark::State& state) {
    using T = double;
    using Memory = memory_of<W>;
    using Matrix = Array<T**, Layout, Memory>;
    using Vector = Array<T*, Layout, Memory>;
    Index rows = Rows, cols = Cols;
    hide(rows, cols);
    // A and x read once, y written once.
    const double bytes = (double(Rows) * Cols + Rows + Cols) * sizeof(T);
    if (!fits_in_memory(state, bytes, W)) return;
    auto A = karma::allocate<Matrix>("microbench::A", rows, cols);
    auto x = karma::allocate<Vector>("microbench::x", cols);
    auto y = karma::allocate<Vector>("microbench::y", rows);
    fill(A, seed_a);
    fill(x, seed_x);
    Kokkos::deep_copy(y, T(poison));
    const auto kernel = KARMA_MICROBENCH_KERNEL_OF(matvec, W, I, Layout);
    if constexpr (I != Impl::raw) {
      time_kernel<W>(state, kernel, A, x, y);
    } else {
      const T* pA = A.data();
      const T* px = x.data();
      T* py = y.data();
      time_kernel<W>(state, kernel, pA, px, py, rows, cols);
    }
    const Index bad = count_matvec_mismatches(y, seed_a, seed_x, Cols);
    if (bad) report_wrong(state, std::to_string(bad) + " sampled rows of y differ");
    set_bytes_per_iteration(state, bytes);
  }
};

template <Where W, class Layout, Index Rows, Index Cols>
void add_matvec() {
  const std::string shape = shape_name(Rows, Cols);
  const char* layout = layout_name<Layout>();
  add_benchmark(benchmark_name(MatVec::name, W, layout, Extents::dynamic, shape, Impl::karma),
                &guarded<&MatVec::run<W, Layout, Rows, Cols, Impl::karma>>);
  add_benchmark(benchmark_name(MatVec::name, W, layout, Extents::dynamic, shape, Impl::raw),
                &guarded<&MatVec::run<W, Layout, Rows, Cols, Impl::raw>>);
}

template <Where W, Index Rows, Index Cols>
void add_matvec_layouts() {
  add_matvec<W, Right, Rows, Cols>();
  add_matvec<W, Left, Rows, Cols>();
}

}  // namespace

void register_matvec(Sizes sizes) {
  if (sizes == Sizes::tiny) {
    add_matvec_layouts<Where::serial, 13, 7>();
    add_matvec_layouts<Where::parallel, 13, 7>();
    return;
  }
  add_matvec_layouts<Where::serial, 20000, 1600>();
  add_matvec_layouts<Where::parallel, 40000, 3200>();
}

}  // namespace karma::microbench
