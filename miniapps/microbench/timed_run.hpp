// What the runs of the benchmark families share: the timed loop, the choice
// of kernel for a version, the arrays and checks of the 3D families and their
// registration. A family's source keeps what is its own: its kernels, bytes
// moved, sizes and expected answer.
#pragma once

#include "benchmarks.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace karma::microbench {

// The timed loop: kernel(args...) once per iteration. Before the call the
// optimiser must assume each of args was read and changed, so the call stays
// in the loop; a parallel version fences, so the time includes the kernel's
// end; a result is kept, so the call is not dropped; memory may have changed
// after it, so its stores are not. Kernel is a template parameter: the call
// is inlined. Returns the last result of a kernel that has one.
template <Where W, class Kernel, class... Args>
auto time_kernel(benchmark::State& state, Kernel kernel, Args&... args) {
  using Result = decltype(kernel(args...));
  if constexpr (std::is_void_v<Result>) {
    for (auto _ : state) {
      (escape(args), ...);
      kernel(args...);
      if constexpr (W == Where::parallel) Kokkos::fence();
      clobber();
    }
  } else {
    Result result{};
    for (auto _ : state) {
      (escape(args), ...);
      result = kernel(args...);
      if constexpr (W == Where::parallel) Kokkos::fence();
      keep(result);
      clobber();
    }
    return result;
  }
}

// The kernel of version W, I among a family's five.
template <Where W, Impl I, class Karma, class KarmaByref, class KarmaParallel, class Raw,
          class RawParallel>
auto pick_kernel(Karma karma, KarmaByref karma_byref, KarmaParallel karma_parallel, Raw raw,
                 RawParallel raw_parallel) {
  if constexpr (I == Impl::raw && W == Where::serial)
    return raw;
  else if constexpr (I == Impl::raw)
    return raw_parallel;
  else if constexpr (W == Where::parallel)
    return karma_parallel;
  else if constexpr (I == Impl::karma)
    return karma;
  else
    return karma_byref;
}

// pick_kernel over the five kernels kernels.hpp names after `stem` (for
// sum3d: sum3d_karma, sum3d_karma_byref, sum3d_karma_parallel,
// sum3d_raw<Layout>, sum3d_raw_parallel<Layout>). A macro because only the
// preprocessor can form the names; each becomes a generic lambda.
#define KARMA_MICROBENCH_KERNEL_OF(stem, W, I, Layout)                            \
  pick_kernel<W, I>([](auto&... args) { return stem##_karma(args...); },          \
                    [](auto&... args) { return stem##_karma_byref(args...); },    \
                    [](auto&... args) { return stem##_karma_parallel(args...); }, \
                    [](auto&... args) { return stem##_raw<Layout>(args...); },    \
                    [](auto&... args) { return stem##_raw_parallel<Layout>(args...); })

// Bytes a benchmark moves per iteration, for bytes_per_second.
inline void set_bytes_per_iteration(benchmark::State& state, double bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

constexpr double elements3(Index n0, Index n1, Index n2) { return double(n0) * n1 * n2; }

// One version of a 3D benchmark on int arrays: its extents, opaque to the
// optimiser, its arrays and its timed loop.
template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I>
struct Version3 {
  // The raw version sees only the arrays' pointers and its own Shape.
  using View = std::conditional_t<I == Impl::raw, Array<int***, Layout, memory_of<W>>,
                                  Array3<int, Layout, memory_of<W>, E, N0, N1, N2>>;

  Index n0 = N0, n1 = N1, n2 = N2;
  Version3() { hide(n0, n1, n2); }

  View allocate(const std::string& label) const { return allocate3<View>(label, n0, n1, n2); }

  // karma's versions get the arrays, the raw one their pointers and a Shape.
  template <class Kernel, class... Views>
  auto time(benchmark::State& state, Kernel kernel, Views&... views) const {
    if constexpr (I == Impl::raw)
      return time_raw(state, kernel, raw_shape<E, N0, N1, N2>(n0, n1, n2), views.data()...);
    else
      return time_kernel<W>(state, kernel, views...);
  }

 private:
  template <class Kernel, class RawShape, class... Pointers>
  static auto time_raw(benchmark::State& state, Kernel kernel, RawShape shape,
                       Pointers... pointers) {
    return time_kernel<W>(state, kernel, pointers..., shape);
  }
};

// Sum3D and Subspan3D: the sum of one array filled from seed_a, read once.
template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I, class Kernel>
void run_sum3d(benchmark::State& state, Kernel kernel) {
  const Version3<W, Layout, E, N0, N1, N2, I> version;
  const double bytes = elements3(N0, N1, N2) * sizeof(int);
  if (!fits_in_memory(state, bytes, W)) return;
  auto a = version.allocate("microbench::a");
  fill(dynamic_view(a), seed_a);
  const int result = version.time(state, kernel, a);
  const std::int64_t expected = cached_expected_sum(seed_a, N0, N1, N2);
  if (result != expected)
    report_wrong(state, "sum " + std::to_string(result) + ", expected " + std::to_string(expected));
  set_bytes_per_iteration(state, bytes);
}

// Stencil3D and TinyMatrixSum: kernel(in, out), with in filled from seed_a
// and out by prepare_out; afterwards sampled elements of out must equal
// answer(state).
template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I, class Kernel,
          class PrepareOut, class Answer>
void run_in_out(benchmark::State& state, Kernel kernel, double bytes, PrepareOut prepare_out,
                Answer answer) {
  const Version3<W, Layout, E, N0, N1, N2, I> version;
  if (!fits_in_memory(state, 2 * elements3(N0, N1, N2) * sizeof(int), W)) return;
  auto in = version.allocate("microbench::in");
  auto out = version.allocate("microbench::out");
  fill(dynamic_view(in), seed_a);
  prepare_out(dynamic_view(out));
  version.time(state, kernel, in, out);
  const Index bad = count_mismatches(dynamic_view(out), answer(state));
  if (bad) report_wrong(state, std::to_string(bad) + " sampled output elements differ");
  set_bytes_per_iteration(state, bytes);
}

// What add_3d_family registers at one shape: the karma and raw versions,
// serial or parallel, or the serial karma_byref ones.
template <Index N0, Index N1, Index N2>
struct Serial {};
template <Index N0, Index N1, Index N2>
struct Parallel {};
template <Index N0, Index N1, Index N2>
struct Byref {};

template <class Family, Index N0, Index N1, Index N2>
void add_3d(Serial<N0, N1, N2>) {
  add_3d_variants<Family, Where::serial, N0, N1, N2>();
}
template <class Family, Index N0, Index N1, Index N2>
void add_3d(Parallel<N0, N1, N2>) {
  add_3d_variants<Family, Where::parallel, N0, N1, N2>();
}
template <class Family, Index N0, Index N1, Index N2>
void add_3d(Byref<N0, N1, N2>) {
  add_byref_variants<Family, N0, N1, N2>();
}

// Registers the variants of a 3D family, in the order given.
template <class Family, class... Variants>
void add_3d_family(Variants... variants) {
  (add_3d<Family>(variants), ...);
}

}  // namespace karma::microbench
