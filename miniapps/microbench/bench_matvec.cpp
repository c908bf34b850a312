// MatVec: y = A x in double (the paper's matrix-vector product).
#include "arms.hpp"

namespace karma::microbench {
namespace {

// Dynamic extents only, as in the paper; A and x filled from seeds, y
// poisoned once, and 1024 sampled rows of y checked after every turn.
template <Where W, class Layout, Index Rows, Index Cols, Impl I>
Arm matvec_arm(bool corrupt) {
  using T = double;
  using Matrix = Array<T**, Layout, memory_of<W>>;
  using Vector = Array<T*, Layout, memory_of<W>>;
  struct State {
    Index rows = Rows, cols = Cols;
    Matrix A;
    Vector x, y;
    std::int64_t wrong = 0;
  };
  const auto s = std::make_shared<State>();
  hide(s->rows, s->cols);
  s->A = karma::allocate<Matrix>("microbench::A", s->rows, s->cols);
  s->x = karma::allocate<Vector>("microbench::x", s->cols);
  s->y = karma::allocate<Vector>("microbench::y", s->rows);
  fill(s->A, seed_a);
  fill(s->x, seed_x);
  if (corrupt) corrupt_first(s->A);
  Kokkos::deep_copy(s->y, T(poison));
  const auto kernel = KARMA_MICROBENCH_KERNEL_OF(matvec, W, I, Layout);
  Arm arm;
  arm.run = [s, kernel](std::int64_t calls) {
    if constexpr (I != Impl::raw) {
      call_times<W>(calls, kernel, s->A, s->x, s->y);
    } else {
      const T* pA = s->A.data();
      const T* px = s->x.data();
      T* py = s->y.data();
      call_times<W>(calls, kernel, pA, px, py, s->rows, s->cols);
    }
  };
  arm.after_turn = [s] { s->wrong += count_matvec_mismatches(s->y, seed_a, seed_x, Cols); };
  arm.wrong = [s] { return s->wrong; };
  return arm;
}

struct MatVec {
  static constexpr const char* name = "MatVec";
  static constexpr const char* stem = "matvec";
  // A and x read once, y written once.
  static double bytes(Index rows, Index cols, Index) {
    return (double(rows) * cols + rows + cols) * sizeof(double);
  }
  static double footprint(Index rows, Index cols, Index) { return bytes(rows, cols, 0); }
  static double flops(Index rows, Index cols) { return 2.0 * double(rows) * cols; }
};

template <Where W, class Layout, Index Rows, Index Cols>
Benchmark matvec_benchmark() {
  Benchmark b;
  b.family = MatVec::name;
  b.stem = MatVec::stem;
  b.where = W;
  b.layout = layout_name<Layout>();
  b.extents = Extents::dynamic;
  b.shape = {Rows, Cols};
  b.bytes_per_call = MatVec::bytes(Rows, Cols, 0);
  b.flops_per_call = MatVec::flops(Rows, Cols);
  b.footprint = MatVec::footprint(Rows, Cols, 0);
  b.make_arm = [](Impl impl, bool corrupt) {
    return impl == Impl::raw ? matvec_arm<W, Layout, Rows, Cols, Impl::raw>(corrupt)
                             : matvec_arm<W, Layout, Rows, Cols, Impl::karma>(corrupt);
  };
  return b;
}

template <Where W, Index Rows, Index Cols>
void add_matvec_layouts(std::vector<Benchmark>& out) {
  out.push_back(matvec_benchmark<W, Right, Rows, Cols>());
  out.push_back(matvec_benchmark<W, Left, Rows, Cols>());
}

}  // namespace

void add_matvec(std::vector<Benchmark>& out, Sizes sizes) {
  if (sizes == Sizes::tiny) {
    add_matvec_layouts<Where::serial, 13, 7>(out);
    add_matvec_layouts<Where::parallel, 13, 7>(out);
    return;
  }
  add_matvec_layouts<Where::serial, 20000, 1600>(out);
  add_matvec_layouts<Where::parallel, 40000, 3200>(out);
}

}  // namespace karma::microbench
