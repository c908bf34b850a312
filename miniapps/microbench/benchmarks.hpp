// What the benchmark families of karma-microbench share: the benchmarks and
// their names, the arms the harness measures, and the call loop.
//
// A benchmark is a family at one place, layout, kind of extents and shape,
// named Family/where/layout/extents/shape, e.g.
// Sum3D/serial/right/static/20x20x20, where
//   where:   serial (plain host loops) or parallel (the default execution space)
//   extents: static (all extents in the type), mixed (the first at run time,
//            the others in the type, as Kokkos allows) or dynamic (all at run time)
// Each implementation of a benchmark is an arm with arrays of its own: karma
// (karma's arrays), raw (a pointer and hand-written indexing), karma-byref
// (see Impl) and raw-twin (raw's code once more). An arm is a kernel of the
// results: its name is the benchmark's and the implementation's,
// Sum3D/serial/right/static/20x20x20/karma, its variant the benchmark's name.
#pragma once

#include "microbench_verify.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace karma::microbench {

enum class Extents { fixed, mixed, dynamic };
// karma_byref: karma's serial loops on the caller's arrays, without the local
// unmanaged copy karma's kernels make (microbench_kernels.hpp, unmanaged()): what that
// copy saves.
enum class Impl { karma, raw, karma_byref };
enum class Where { serial, parallel };
// standard: the sizes of the measurements; tiny: every variant at a few
// elements, for the tests.
enum class Sizes { standard, tiny };

inline const char* name_of(Extents e) {
  return e == Extents::fixed ? "static" : e == Extents::mixed ? "mixed" : "dynamic";
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

// Google Benchmark's DoNotOptimize and ClobberMemory, said in a way GCC 12
// compiles correctly: Google Benchmark 1.7.1's DoNotOptimize(T&) handed an
// object to an asm statement as a "+m" operand, and with a Kokkos::View GCC
// 12 -O3 then deleted the timed loop and passed an uninitialised extent to
// the allocation (seen here; cf. GCC bug 92597). Escaping the address with a
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

// The timed calls: kernel(args...) `calls` times in a row. Before each call
// the optimiser must assume each of args was read and changed, so the call
// stays in the loop; a parallel version fences, so the time includes the
// kernel's end; a result is kept, so the call is not dropped; memory may
// have changed after it, so its stores are not. Kernel is a template
// parameter: the call is inlined. Returns the last result of a kernel that
// has one.
template <Where W, class Kernel, class... Args>
auto call_times(std::int64_t calls, Kernel kernel, Args&... args) {
  using Result = decltype(kernel(args...));
  if constexpr (std::is_void_v<Result>) {
    for (std::int64_t c = 0; c < calls; ++c) {
      (escape(args), ...);
      kernel(args...);
      if constexpr (W == Where::parallel) Kokkos::fence();
      clobber();
    }
  } else {
    Result result{};
    for (std::int64_t c = 0; c < calls; ++c) {
      (escape(args), ...);
      result = kernel(args...);
      if constexpr (W == Where::parallel) Kokkos::fence();
      keep(result);
      clobber();
    }
    return result;
  }
}

// One implementation of a benchmark with its arrays, as the harness runs
// it: each execution is `calls` calls, and the arm counts its wrong answers
// after an execution (a returned sum) or a turn (its arrays).
struct Arm {
  std::string implementation;     // karma, raw, karma-byref or raw-twin
  std::vector<std::string> code;  // the kernel and the call loop (Variant::code)
  std::function<void(std::int64_t calls)> run;
  std::function<void()> after_each;  // may be empty
  std::function<void()> after_turn;  // may be empty
  std::function<std::int64_t()> wrong;
};

// One benchmark: what it is, what a call moves, and how an arm of it is made.
struct Benchmark {
  const char* family = "";
  const char* stem = "";  // the kernels' names in microbench_kernels.hpp: sum3d_karma, ...
  Where where = Where::serial;
  const char* layout = "";
  Extents extents = Extents::dynamic;
  std::vector<Index> shape;
  double bytes_per_call = 0;  // each input element read once, each output written once
  double flops_per_call = 0;
  double footprint = 0;    // bytes of one arm's arrays
  bool has_byref = false;  // a karma-byref arm exists
  // Allocates and fills an arm's arrays; `corrupt`: one input element off by one.
  std::function<Arm(Impl impl, bool corrupt)> make_arm;

  std::string name() const;  // Family/where/layout/extents/shape
  std::string shape_name() const;
  // The kernel launch as the results record it (Variant::launch): the
  // benchmark itself, fixed by the code.
  nlohmann::json launch() const;
};

// The qualified names an arm runs: its kernel (microbench_kernels.hpp) and call_times.
std::vector<std::string> code_of(const Benchmark& b, Impl impl);

// expected_sum(), computed once per seed and shape.
std::int64_t cached_expected_sum(std::uint32_t seed, Index n0, Index n1, Index n2);

// One input element of an array (rank 2 or 3) off by one: the checks must
// see it (run.inject_fault).
template <class View>
void corrupt_first(const View& a) {
  // A launch per rank of array, each outside `if constexpr`: nvcc does not
  // let a device lambda capture a variable first inside one.
  const Kokkos::RangePolicy<space_of<View>> one(0, 1);
  if constexpr (View::rank == 2)
    Kokkos::parallel_for(
        "microbench::inject_fault", one, KOKKOS_LAMBDA(int) { a(0, 0) += 1; });
  else
    Kokkos::parallel_for(
        "microbench::inject_fault", one, KOKKOS_LAMBDA(int) { a(0, 0, 0) += 1; });
  Kokkos::fence();
}

// Every benchmark of the suite at `sizes`, in the order they run: each
// family's serial ones, then its parallel ones, LayoutRight first, static,
// mixed, dynamic.
std::vector<Benchmark> all_benchmarks(Sizes sizes);

void add_sum3d(std::vector<Benchmark>& out, Sizes sizes);
void add_stencil3d(std::vector<Benchmark>& out, Sizes sizes);
void add_tiny_matrix_sum(std::vector<Benchmark>& out, Sizes sizes);
void add_subspan3d(std::vector<Benchmark>& out, Sizes sizes);
void add_matvec(std::vector<Benchmark>& out, Sizes sizes);

}  // namespace karma::microbench
