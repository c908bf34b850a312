// Sum3D: the sum of every element of a 3D int array (the paper's types).
#include "benchmarks.hpp"

namespace karma::microbench {
namespace {

struct Sum3D {
  static constexpr const char* name = "Sum3D";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    using T = int;
    using Memory = memory_of<W>;
    Index n0 = N0, n1 = N1, n2 = N2;
    hide(n0, n1, n2);
    const double bytes = double(N0) * N1 * N2 * sizeof(T);
    if (!fits_in_memory(state, bytes, W)) return;
    T result = 0;
    if constexpr (I != Impl::raw) {
      auto a = allocate3<Array3<T, Layout, Memory, E, N0, N1, N2>>("microbench::a", n0, n1, n2);
      fill(dynamic_view(a), seed_a);
      for (auto _ : state) {
        escape(a);
        if constexpr (W == Where::serial) {
          if constexpr (I == Impl::karma)
            result = sum3d_karma(a);
          else
            result = sum3d_karma_byref(a);
        } else {
          result = sum3d_karma_parallel(a);
          Kokkos::fence();
        }
        keep(result);
        clobber();
      }
    } else {
      const auto a = allocate3<Array<T***, Layout, Memory>>("microbench::a", n0, n1, n2);
      fill(a, seed_a);
      const T* p = a.data();
      auto shape = raw_shape<E, N0, N1, N2>(n0, n1, n2);
      for (auto _ : state) {
        escape(p);
        escape(shape);
        if constexpr (W == Where::serial) {
          result = sum3d_raw<Layout>(p, shape);
        } else {
          result = sum3d_raw_parallel<Layout>(p, shape);
          Kokkos::fence();
        }
        keep(result);
        clobber();
      }
    }
    const std::int64_t expected = cached_expected_sum(seed_a, N0, N1, N2);
    if (result != expected)
      report_wrong(state,
                   "sum " + std::to_string(result) + ", expected " + std::to_string(expected));
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  }
};

}  // namespace

void register_sum3d(Sizes sizes) {
  if (sizes == Sizes::tiny) {
    add_3d_variants<Sum3D, Where::serial, 6, 5, 4>();
    add_3d_variants<Sum3D, Where::parallel, 6, 5, 4>();
    return;
  }
  add_3d_variants<Sum3D, Where::serial, 20, 20, 20>();
  add_3d_variants<Sum3D, Where::serial, 320, 320, 320>();
  add_3d_variants<Sum3D, Where::parallel, 512, 512, 512>();
}

}  // namespace karma::microbench
