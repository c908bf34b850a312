// The arms of the benchmark families: the choice of kernel for a version,
// each version's arrays, calls and checks, and the registration of a
// family's benchmarks. A family's source keeps what is its own: its kernels,
// bytes moved, sizes and expected answer.
#pragma once

#include "benchmarks.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace karma::microbench {

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

// pick_kernel over the five kernels microbench_kernels.hpp names after `stem` (for
// sum3d: sum3d_karma, sum3d_karma_byref, sum3d_karma_parallel,
// sum3d_raw<Layout>, sum3d_raw_parallel<Layout>). A macro because only the
// preprocessor can form the names; each becomes a generic lambda.
#define KARMA_MICROBENCH_KERNEL_OF(stem, W, I, Layout)                            \
  pick_kernel<W, I>([](auto&... args) { return stem##_karma(args...); },          \
                    [](auto&... args) { return stem##_karma_byref(args...); },    \
                    [](auto&... args) { return stem##_karma_parallel(args...); }, \
                    [](auto&... args) { return stem##_raw<Layout>(args...); },    \
                    [](auto&... args) { return stem##_raw_parallel<Layout>(args...); })

constexpr double elements3(Index n0, Index n1, Index n2) { return double(n0) * n1 * n2; }

// One version of a 3D benchmark on int arrays: its extents, opaque to the
// optimiser, and its calls.
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
  auto calls(std::int64_t count, Kernel kernel, Views&... views) const {
    if constexpr (I == Impl::raw)
      return raw_calls(count, kernel, raw_shape<E, N0, N1, N2>(n0, n1, n2), views.data()...);
    else
      return call_times<W>(count, kernel, views...);
  }

 private:
  template <class Kernel, class RawShape, class... Pointers>
  static auto raw_calls(std::int64_t count, Kernel kernel, RawShape shape, Pointers... pointers) {
    return call_times<W>(count, kernel, pointers..., shape);
  }
};

// Sum3D and Subspan3D: the sum of one array filled from seed_a, read once;
// every call's sum is checked.
template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I, class Kernel>
Arm sum_arm(Kernel kernel, bool corrupt) {
  using Version = Version3<W, Layout, E, N0, N1, N2, I>;
  struct State {
    Version version;
    typename Version::View a;
    std::int64_t expected = 0, wrong = 0;
    int result = 0;
  };
  const auto s = std::make_shared<State>();
  s->a = s->version.allocate("microbench::a");
  fill(dynamic_view(s->a), seed_a);
  if (corrupt) corrupt_first(dynamic_view(s->a));
  s->expected = cached_expected_sum(seed_a, N0, N1, N2);
  Arm arm;
  arm.run = [s, kernel](std::int64_t calls) { s->result = s->version.calls(calls, kernel, s->a); };
  arm.after_each = [s] { s->wrong += s->result != s->expected; };
  arm.wrong = [s] { return s->wrong; };
  return arm;
}

// Stencil3D and TinyMatrixSum: kernel(in, out), with in filled from seed_a
// and out by prepare_out; after every turn, sampled elements of out must
// equal answer(calls), `calls` since out was prepared. Out is prepared
// again once calls pass 2^24, so that TinyMatrixSum's sums stay within int.
template <Where W, class Layout, Extents E, Index N0, Index N1, Index N2, Impl I, class Kernel,
          class PrepareOut, class Answer>
Arm in_out_arm(Kernel kernel, bool corrupt, PrepareOut prepare_out, Answer answer) {
  using Version = Version3<W, Layout, E, N0, N1, N2, I>;
  struct State {
    Version version;
    typename Version::View in, out;
    std::int64_t calls = 0, wrong = 0;
    void check(const Answer& answer) {
      wrong += count_mismatches(dynamic_view(out), answer(calls));
    }
  };
  const auto s = std::make_shared<State>();
  s->in = s->version.allocate("microbench::in");
  s->out = s->version.allocate("microbench::out");
  fill(dynamic_view(s->in), seed_a);
  if (corrupt) corrupt_first(dynamic_view(s->in));
  prepare_out(dynamic_view(s->out));
  Arm arm;
  arm.run = [s, kernel](std::int64_t calls) {
    s->version.calls(calls, kernel, s->in, s->out);
    s->calls += calls;
  };
  arm.after_each = [s, prepare_out, answer] {
    if (s->calls < (std::int64_t{1} << 24)) return;
    s->check(answer);
    prepare_out(dynamic_view(s->out));
    s->calls = 0;
  };
  arm.after_turn = [s, answer] { s->check(answer); };
  arm.wrong = [s] { return s->wrong; };
  return arm;
}

// What add_3d_family registers at one shape: the karma and raw versions,
// serial or parallel; SerialByref also karma-byref.
template <Index N0, Index N1, Index N2>
struct Serial {};
template <Index N0, Index N1, Index N2>
struct SerialByref {};
template <Index N0, Index N1, Index N2>
struct Parallel {};

// A benchmark of Family: its description, and how an arm of it is made.
template <class Family, Where W, class Layout, Extents E, Index N0, Index N1, Index N2, bool Byref>
Benchmark benchmark_of() {
  Benchmark b;
  b.family = Family::name;
  b.stem = Family::stem;
  b.where = W;
  b.layout = layout_name<Layout>();
  b.extents = E;
  b.shape = {N0, N1, N2};
  b.bytes_per_call = Family::bytes(N0, N1, N2);
  b.footprint = Family::footprint(N0, N1, N2);
  b.has_byref = Byref;
  b.make_arm = [](Impl impl, bool corrupt) -> Arm {
    if (impl == Impl::raw)
      return Family::template arm<W, Layout, E, N0, N1, N2, Impl::raw>(corrupt);
    if constexpr (Byref)
      if (impl == Impl::karma_byref)
        return Family::template arm<W, Layout, E, N0, N1, N2, Impl::karma_byref>(corrupt);
    return Family::template arm<W, Layout, E, N0, N1, N2, Impl::karma>(corrupt);
  };
  return b;
}

// Both layouts, each with static, mixed and dynamic extents.
template <class Family, Where W, Index N0, Index N1, Index N2, bool Byref>
void add_3d_variants(std::vector<Benchmark>& out) {
  out.push_back(benchmark_of<Family, W, Right, Extents::fixed, N0, N1, N2, Byref>());
  out.push_back(benchmark_of<Family, W, Right, Extents::mixed, N0, N1, N2, Byref>());
  out.push_back(benchmark_of<Family, W, Right, Extents::dynamic, N0, N1, N2, Byref>());
  out.push_back(benchmark_of<Family, W, Left, Extents::fixed, N0, N1, N2, Byref>());
  out.push_back(benchmark_of<Family, W, Left, Extents::mixed, N0, N1, N2, Byref>());
  out.push_back(benchmark_of<Family, W, Left, Extents::dynamic, N0, N1, N2, Byref>());
}

template <class Family, Index N0, Index N1, Index N2>
void add_3d(std::vector<Benchmark>& out, Serial<N0, N1, N2>) {
  add_3d_variants<Family, Where::serial, N0, N1, N2, false>(out);
}
template <class Family, Index N0, Index N1, Index N2>
void add_3d(std::vector<Benchmark>& out, SerialByref<N0, N1, N2>) {
  add_3d_variants<Family, Where::serial, N0, N1, N2, true>(out);
}
template <class Family, Index N0, Index N1, Index N2>
void add_3d(std::vector<Benchmark>& out, Parallel<N0, N1, N2>) {
  add_3d_variants<Family, Where::parallel, N0, N1, N2, false>(out);
}

// Registers the benchmarks of a 3D family, in the order given.
template <class Family, class... Shapes>
void add_3d_family(std::vector<Benchmark>& out, Shapes... shapes) {
  (add_3d<Family>(out, shapes), ...);
}

}  // namespace karma::microbench
