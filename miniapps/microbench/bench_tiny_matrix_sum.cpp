// TinyMatrixSum: out += in over N small 3 x 3 int matrices (the paper's
// N x 3 x 3, where static small extents pay most).
#include "benchmarks.hpp"

namespace karma::microbench {
namespace {

struct TinyMatrixSum {
  static constexpr const char* name = "TinyMatrixSum";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    using T = int;
    using Memory = memory_of<W>;
    Index n0 = N0, n1 = N1, n2 = N2;
    hide(n0, n1, n2);
    // in read, out read and written.
    const double bytes = 3.0 * N0 * N1 * N2 * sizeof(T);
    if (!fits_in_memory(state, 2.0 * N0 * N1 * N2 * sizeof(T), W)) return;
    using Typed = Array3<T, Layout, Memory, E, N0, N1, N2>;
    using Dynamic = Array<T***, Layout, Memory>;
    using View = std::conditional_t<I != Impl::raw, Typed, Dynamic>;
    auto in = allocate3<View>("microbench::in", n0, n1, n2);
    auto out = allocate3<View>("microbench::out", n0, n1, n2);
    fill(dynamic_view(in), seed_a);
    fill(dynamic_view(out), seed_b);
    if constexpr (I != Impl::raw) {
      for (auto _ : state) {
        escape(in);
        escape(out);
        if constexpr (W == Where::serial) {
          if constexpr (I == Impl::karma)
            tiny_matrix_sum_karma(in, out);
          else
            tiny_matrix_sum_karma_byref(in, out);
        } else {
          tiny_matrix_sum_karma_parallel(in, out);
          Kokkos::fence();
        }
        clobber();
      }
    } else {
      const T* pin = in.data();
      T* pout = out.data();
      auto shape = raw_shape<E, N0, N1, N2>(n0, n1, n2);
      for (auto _ : state) {
        escape(pin);
        escape(pout);
        escape(shape);
        if constexpr (W == Where::serial) {
          tiny_matrix_sum_raw<Layout>(pin, pout, shape);
        } else {
          tiny_matrix_sum_raw_parallel<Layout>(pin, pout, shape);
          Kokkos::fence();
        }
        clobber();
      }
    }
    const AccumulatedAnswer answer{seed_b, seed_a, static_cast<Index>(state.iterations())};
    const Index bad = count_mismatches(dynamic_view(out), answer);
    if (bad) report_wrong(state, std::to_string(bad) + " sampled output elements differ");
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  }
};

}  // namespace

void register_tiny_matrix_sum(Sizes sizes) {
  if (sizes == Sizes::tiny) {
    add_3d_variants<TinyMatrixSum, Where::serial, 50, 3, 3>();
    add_3d_variants<TinyMatrixSum, Where::parallel, 50, 3, 3>();
    add_byref_variants<TinyMatrixSum, 50, 3, 3>();
    return;
  }
  add_3d_variants<TinyMatrixSum, Where::serial, 1000000, 3, 3>();
  add_byref_variants<TinyMatrixSum, 1000000, 3, 3>();
  add_3d_variants<TinyMatrixSum, Where::parallel, 10000000, 3, 3>();
}

}  // namespace karma::microbench
