// Stencil3D: the 27-point box sum of a 3D int array (the paper's stencil).
#include "benchmarks.hpp"

namespace karma::microbench {
namespace {

struct Stencil3D {
  static constexpr const char* name = "Stencil3D";

  template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
  static void run(benchmark::State& state) {
    using T = int;
    using Memory = memory_of<W>;
    Index n0 = N0, n1 = N1, n2 = N2;
    hide(n0, n1, n2);
    // Each input element read once, each interior output element written once.
    const double element_bytes =
        (double(N0) * N1 * N2 + double(N0 - 2) * (N1 - 2) * (N2 - 2)) * sizeof(T);
    if (!fits_in_memory(state, 2.0 * N0 * N1 * N2 * sizeof(T), W)) return;
    using Typed = Array3<T, Layout, Memory, E, N0, N1, N2>;
    using Dynamic = Array<T***, Layout, Memory>;
    using View = std::conditional_t<I != Impl::raw, Typed, Dynamic>;
    auto in = allocate3<View>("microbench::in", n0, n1, n2);
    auto out = allocate3<View>("microbench::out", n0, n1, n2);
    fill(dynamic_view(in), seed_a);
    Kokkos::deep_copy(dynamic_view(out), poison);
    if constexpr (I != Impl::raw) {
      for (auto _ : state) {
        escape(in);
        escape(out);
        if constexpr (W == Where::serial) {
          if constexpr (I == Impl::karma)
            stencil3d_karma(in, out);
          else
            stencil3d_karma_byref(in, out);
        } else {
          stencil3d_karma_parallel(in, out);
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
          stencil3d_raw<Layout>(pin, pout, shape);
        } else {
          stencil3d_raw_parallel<Layout>(pin, pout, shape);
          Kokkos::fence();
        }
        clobber();
      }
    }
    const Index bad = count_mismatches(dynamic_view(out), StencilAnswer{seed_a, N0, N1, N2});
    if (bad) report_wrong(state, std::to_string(bad) + " sampled output elements differ");
    state.SetBytesProcessed(static_cast<std::int64_t>(element_bytes) * state.iterations());
  }
};

}  // namespace

void register_stencil3d(Sizes sizes) {
  if (sizes == Sizes::tiny) {
    add_3d_variants<Stencil3D, Where::serial, 7, 6, 5>();
    add_3d_variants<Stencil3D, Where::parallel, 7, 6, 5>();
    add_byref_variants<Stencil3D, 7, 6, 5>();
    return;
  }
  add_3d_variants<Stencil3D, Where::serial, 80, 80, 80>();
  add_byref_variants<Stencil3D, 80, 80, 80>();
  add_3d_variants<Stencil3D, Where::serial, 320, 320, 320>();
  add_3d_variants<Stencil3D, Where::parallel, 512, 512, 512>();
}

}  // namespace karma::microbench
