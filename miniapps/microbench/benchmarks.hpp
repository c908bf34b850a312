// What the benchmark families of karma-microbench share: array types, names,
// registration, and the outcome that decides the exit code.
//
// A benchmark is named Family/where/layout/extents/shape/impl, for example
// Sum3D/serial/right/static/20x20x20/karma, where
//   where:   serial (plain host loops) or parallel (the default execution space)
//   extents: static (all extents in the type), mixed (the first at run time,
//            the others in the type, as Kokkos allows) or dynamic (all at run time)
//   impl:    karma (karma's arrays), raw (a pointer and hand-written indexing)
//            or karma_byref (see Impl).
// Google Benchmark appends /real_time. karma-microbench-ratios pairs the
// names that differ only in impl.
#pragma once

#include "checks.hpp"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>

namespace karma::microbench {

enum class Extents { fixed, mixed, dynamic };
// karma_byref: karma's serial loops on the caller's arrays, without the local
// unmanaged copy karma's kernels make (kernels.hpp, unmanaged()): what that
// copy saves.
enum class Impl { karma, raw, karma_byref };
enum class Where { serial, parallel };
// standard: the sizes of the measurements; tiny: every variant at a few
// elements, for the tests.
enum class Sizes { standard, tiny };

inline const char* name_of(Extents e) {
  return e == Extents::fixed ? "static" : e == Extents::mixed ? "mixed" : "dynamic";
}
inline const char* name_of(Impl i) {
  return i == Impl::karma ? "karma" : i == Impl::raw ? "raw" : "karma_byref";
}
inline const char* name_of(Where w) { return w == Where::serial ? "serial" : "parallel"; }
template <class Layout>
const char* layout_name() {
  return is_right<Layout>() ? "right" : "left";
}

// Serial versions use host arrays, parallel ones the default memory space.
template <Where W>
using memory_of = std::conditional_t<W == Where::serial, HostMemory, DefaultMemory>;

// The data type of a 3D karma array: T[N0][N1][N2], T*[N1][N2] or T***.
template <class T, Extents E, Index N0, Index N1, Index N2>
struct Data3 {
  using type = T***;
};
template <class T, Index N0, Index N1, Index N2>
struct Data3<T, Extents::fixed, N0, N1, N2> {
  using type = T[N0][N1][N2];
};
template <class T, Index N0, Index N1, Index N2>
struct Data3<T, Extents::mixed, N0, N1, N2> {
  using type = T* [N1][N2];
};

template <class T, class Layout, class Memory, Extents E, Index N0, Index N1, Index N2>
using Array3 = Array<typename Data3<T, E, N0, N1, N2>::type, Layout, Memory>;

// The raw version's extents, known to the compiler exactly where the karma
// array's are.
template <Extents E, Index N0, Index N1, Index N2>
auto raw_shape(Index n0, Index n1, Index n2) {
  if constexpr (E == Extents::fixed)
    return Shape<Fixed<N0>, Fixed<N1>, Fixed<N2>>{};
  else if constexpr (E == Extents::mixed)
    return Shape<Index, Fixed<N1>, Fixed<N2>>{n0, {}, {}};
  else
    return Shape<Index, Index, Index>{n0, n1, n2};
}

// A 3D array without initialisation, given only its run-time extents.
template <class View>
View allocate3(const std::string& label, Index n0, Index n1, Index n2) {
  if constexpr (View::rank_dynamic == 0)
    return karma::allocate<View>(label);
  else if constexpr (View::rank_dynamic == 1)
    return karma::allocate<View>(label, n0);
  else
    return karma::allocate<View>(label, n0, n1, n2);
}

// What DoNotOptimize and ClobberMemory do, said in a way GCC 12 compiles
// correctly: Google Benchmark 1.7.1's DoNotOptimize(T&) hands an object to
// an asm statement as a "+m" operand, and with a Kokkos::View GCC 12 -O3
// then deleted the timed loop and passed an uninitialised extent to the
// allocation (seen here; cf. GCC bug 92597). Escaping the address with a
// memory clobber says the same: the object may have been read and changed.

// The optimiser must assume `object` was read and may have changed.
template <class T>
inline void escape(T& object) {
  asm volatile("" : : "r"(&object) : "memory");
}
// The optimiser must compute `value`.
template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "r"(value));
}
// The optimiser must assume any memory was read and may have changed.
inline void clobber() { asm volatile("" : : : "memory"); }

// Makes run-time extents opaque to the optimiser: dynamic means dynamic.
inline void hide(Index& value) { asm volatile("" : "+r"(value)); }
template <class... T>
void hide(T&... values) {
  (hide(values), ...);
}

// What happened, for main's exit code: 1 for a wrong answer, 3 for a
// benchmark that could not run (memory).
struct Outcome {
  std::atomic<int> wrong_answers{0};
  std::atomic<int> resource_errors{0};
};
Outcome& outcome();

// Reports a wrong answer: the benchmark shows an error and the run exits 1.
void report_wrong(benchmark::State& state, const std::string& what);
// Reports a benchmark that cannot run; the run exits 3.
void report_resource_error(benchmark::State& state, const std::string& what);
// Whether `bytes` fit the free memory of the space the arrays live in;
// reports a resource error if not.
bool fits_in_memory(benchmark::State& state, double bytes, Where where);

template <void (*Run)(benchmark::State&)>
void guarded(benchmark::State& state) {
  try {
    Run(state);
  } catch (const std::exception& e) {
    report_resource_error(state, e.what());
  }
}

// expected_sum(), computed once per seed and shape.
std::int64_t cached_expected_sum(std::uint32_t seed, Index n0, Index n1, Index n2);

std::string benchmark_name(const char* family, Where where, const char* layout, Extents extents,
                           const std::string& shape, Impl impl);
std::string shape_name(Index n0, Index n1, Index n2 = 0);
void add_benchmark(const std::string& name, void (*run)(benchmark::State&));
// --raw-twin: every raw benchmark registered a second time as .../raw_twin.
bool& raw_twins();

// Registers the karma and raw versions of Family::run for one layout, one
// kind of extents and one shape.
template <class Family, Where W, class Layout, Extents E, Index N0, Index N1, Index N2>
void add_pair() {
  const std::string shape = shape_name(N0, N1, N2);
  add_benchmark(benchmark_name(Family::name, W, layout_name<Layout>(), E, shape, Impl::karma),
                &guarded<&Family::template run<W, Layout, E, N0, N1, N2, Impl::karma>>);
  add_benchmark(benchmark_name(Family::name, W, layout_name<Layout>(), E, shape, Impl::raw),
                &guarded<&Family::template run<W, Layout, E, N0, N1, N2, Impl::raw>>);
}

// The karma_byref version of a serial benchmark, for both layouts and every
// kind of extents.
template <class Family, class Layout, Extents E, Index N0, Index N1, Index N2>
void add_byref_one() {
  add_benchmark(
      benchmark_name(Family::name, Where::serial, layout_name<Layout>(), E, shape_name(N0, N1, N2),
                     Impl::karma_byref),
      &guarded<&Family::template run<Where::serial, Layout, E, N0, N1, N2, Impl::karma_byref>>);
}
template <class Family, Index N0, Index N1, Index N2>
void add_byref_variants() {
  add_byref_one<Family, Right, Extents::fixed, N0, N1, N2>();
  add_byref_one<Family, Right, Extents::mixed, N0, N1, N2>();
  add_byref_one<Family, Right, Extents::dynamic, N0, N1, N2>();
  add_byref_one<Family, Left, Extents::fixed, N0, N1, N2>();
  add_byref_one<Family, Left, Extents::mixed, N0, N1, N2>();
  add_byref_one<Family, Left, Extents::dynamic, N0, N1, N2>();
}

// Both layouts, each with static, mixed and dynamic extents.
template <class Family, Where W, Index N0, Index N1, Index N2>
void add_3d_variants() {
  add_pair<Family, W, Right, Extents::fixed, N0, N1, N2>();
  add_pair<Family, W, Right, Extents::mixed, N0, N1, N2>();
  add_pair<Family, W, Right, Extents::dynamic, N0, N1, N2>();
  add_pair<Family, W, Left, Extents::fixed, N0, N1, N2>();
  add_pair<Family, W, Left, Extents::mixed, N0, N1, N2>();
  add_pair<Family, W, Left, Extents::dynamic, N0, N1, N2>();
}

void register_sum3d(Sizes sizes);
void register_stencil3d(Sizes sizes);
void register_tiny_matrix_sum(Sizes sizes);
void register_subspan3d(Sizes sizes);
void register_matvec(Sizes sizes);

inline void register_all(Sizes sizes) {
  register_sum3d(sizes);
  register_stencil3d(sizes);
  register_tiny_matrix_sum(sizes);
  register_subspan3d(sizes);
  register_matvec(sizes);
}

}  // namespace karma::microbench
