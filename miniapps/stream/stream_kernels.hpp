// STREAM kernels over karma arrays of rank 1 or 3, any layout, float or double.
#pragma once

// The kernels by family: stream_basics.hpp (kernel table, policies, the
// element-wise operations), stream_dot.hpp (the reductions), and here
// running a kernel, its code and launch, and the values it must leave
// (Gold; stream_verify.hpp compares the arrays with them).
#include "stream_basics.hpp"
#include "stream_dot.hpp"

#include "karma/array.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::stream {

template <Kernel K, class View, class Index, class Op>
void for_each(const char* label, const Arrays<View>& x, const Op& op) {
  constexpr int U = elements_per_item<K, value_t<View>>();
  if constexpr (rank_of<View>() == 1) {
    Kokkos::parallel_for(label, policy_for<View, Index, U>(x.a),
                         ForEach<View, Op, U>{x.a, x.b, x.c, op, std::int64_t(x.a.extent(0))});
  } else if (x.policy == Policy3D::range) {
    const auto items = Items3D<U>::of(x.a);
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, items.count),
                         ForEachItem3D<View, Op, U>{x.a, x.b, x.c, op, items});
  } else {
    Kokkos::parallel_for(label, policy_for<View, Index>(x.a),
                         ForEach<View, Op, 1>{x.a, x.b, x.c, op, 0});
  }
}

// Every element of a, b and c set to `values` (by default the start values).
template <class View, class Index>
void initialize(const Arrays<View>& x, const Init<value_t<View>>& values = {}) {
  // The same policy as the kernels: on a CPU, pages land near their threads.
  for_each<Kernel::copy, View, Index>("stream::init", x, values);
}

struct DotResult {
  Kokkos::View<double, ResultMemory> total;      // Kokkos' reduction
  Kokkos::View<double*, ResultMemory> partials;  // DotTeams, GPUs only: dot_waves waves
  int one_wave_3d = 0;  // DotTeams3D: teams of dot_team_size_3d the device holds at once
};

inline DotResult make_dot_result() {
  int teams = 0, one_wave_3d = 0;
  if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
    const int concurrency = Kokkos::DefaultExecutionSpace().concurrency();
    teams = dot_waves * std::max(1, concurrency / dot_team_size);
    one_wave_3d = std::min(teams, std::max(1, concurrency / dot_team_size_3d));
  }
  return {Kokkos::View<double, ResultMemory>("stream::dot_total"),
          Kokkos::View<double*, ResultMemory>("stream::dot_partials", teams), one_wave_3d};
}

// Runs one kernel once; returns the local dot product for Kernel::dot.
// Allocate `result` once, outside any timed region.
template <class View, class Index>
double execute(Kernel kernel, const Arrays<View>& x, const DotResult& result) {
  using T = value_t<View>;
  const T s = static_cast<T>(scalar);
  switch (kernel) {
    case Kernel::copy:
      for_each<Kernel::copy, View, Index>("stream::copy", x, Copy<T>{});
      break;
    case Kernel::mul:
      for_each<Kernel::mul, View, Index>("stream::mul", x, Mul<T>{s});
      break;
    case Kernel::add:
      for_each<Kernel::add, View, Index>("stream::add", x, Add<T>{});
      break;
    case Kernel::triad:
      for_each<Kernel::triad, View, Index>("stream::triad", x, Triad<T>{s});
      break;
    case Kernel::nstream:
      for_each<Kernel::nstream, View, Index>("stream::nstream", x, Nstream<T>{s});
      break;
    case Kernel::dot:
      if constexpr (rank_of<View>() == 1) {
        if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>())
          return dot_in_teams(x.a, x.b, result.partials, dot_team_size);
        else
          return dot_in_blocks<View, Index>(x.a, x.b, result.total);
      } else {
        if (x.policy == Policy3D::range) {
          if constexpr (is_gpu_space<Kokkos::DefaultExecutionSpace>()) {
            return dot_in_teams_3d(x.a, x.b, result.partials, dot_team_size_3d, result.one_wave_3d);
          } else {
            const auto items = Items3D<1>::of(x.a);
            return reduce_into(Kokkos::RangePolicy<Kokkos::IndexType<Index>>(0, items.count),
                               DotItems3D<View>{x.a, x.b, items}, result.total);
          }
        }
        return reduce_into(policy_for<View, Index>(x.a), Dot<View>{x.a, x.b}, result.total);
      }
  }
  return 0;
}

template <class View, class Index>
double execute(Kernel kernel, const Arrays<View>& x) {
  return execute<View, Index>(kernel, x, make_dot_result());
}

// What execute() runs for `kernel` (karma/code_version.hpp): the
// definitions of its code path and the launch choices the deck leaves open.
template <class View>
std::vector<std::string> code_of(Kernel kernel, const Arrays<View>& x) {
  const std::string ns = "karma::stream::";
  const bool range_3d = rank_of<View>() == 3 && x.policy == Policy3D::range;
  if (kernel == Kernel::dot) {
    if (is_gpu_space<Kokkos::DefaultExecutionSpace>() && (rank_of<View>() == 1 || range_3d))
      return {ns + (range_3d ? "dot_in_teams_3d" : "dot_in_teams")};
    if (rank_of<View>() == 1) return {ns + "dot_in_blocks"};
    if (range_3d) return {ns + "DotItems3D", ns + "Items3D"};
    return {ns + "Dot", ns + "policy_for"};
  }
  const char* op = kernel == Kernel::copy    ? "Copy"
                   : kernel == Kernel::mul   ? "Mul"
                   : kernel == Kernel::add   ? "Add"
                   : kernel == Kernel::triad ? "Triad"
                                             : "Nstream";
  if (range_3d) return {ns + "ForEachItem3D", ns + "Items3D", ns + "elements_per_item", ns + op};
  return {ns + "ForEach", ns + "policy_for", ns + "elements_per_item", ns + op};
}

template <class View>
nlohmann::json launch_of(Kernel kernel, const Arrays<View>& x) {
  using T = value_t<View>;
  const int items = kernel == Kernel::copy      ? elements_per_item<Kernel::copy, T>()
                    : kernel == Kernel::mul     ? elements_per_item<Kernel::mul, T>()
                    : kernel == Kernel::add     ? elements_per_item<Kernel::add, T>()
                    : kernel == Kernel::triad   ? elements_per_item<Kernel::triad, T>()
                    : kernel == Kernel::nstream ? elements_per_item<Kernel::nstream, T>()
                    : rank_of<View>() == 1 && !is_gpu_space<Kokkos::DefaultExecutionSpace>()
                        ? DotBlocks<View>::width
                        : 1;
  nlohmann::json launch = {{"elements_per_item", items}};
  if (rank_of<View>() == 3) launch["policy_3d"] = x.policy == Policy3D::range ? "range" : "mdrange";
  if (kernel == Kernel::dot && is_gpu_space<Kokkos::DefaultExecutionSpace>())
    launch["team_size"] = rank_of<View>() == 1 ? dot_team_size : dot_team_size_3d;
  return launch;
}

// code_of and launch_of where the run picks the 3D policy (`auto` on a GPU:
// range where 32-bit indices reach every element of a rank, so the size
// picks): the code of both policies, and the launch's policy "auto".
template <class View>
std::vector<std::string> code_of_auto_3d(Kernel kernel, Arrays<View> x) {
  x.policy = Policy3D::range;
  std::vector<std::string> code = code_of(kernel, x);
  x.policy = Policy3D::mdrange;
  for (const auto& symbol : code_of(kernel, x))
    if (std::find(code.begin(), code.end(), symbol) == code.end()) code.push_back(symbol);
  return code;
}

template <class View>
nlohmann::json launch_of_auto_3d(Kernel kernel, const Arrays<View>& x) {
  nlohmann::json launch = launch_of(kernel, x);
  launch["policy_3d"] = "auto";
  return launch;
}

// The same recurrence on scalars, in the arrays' precision: what every
// element must hold after the kernels ran in the same order.
template <class T>
struct Gold {
  T a = static_cast<T>(start_a);
  T b = static_cast<T>(start_b);
  T c = static_cast<T>(start_c);

  // Returns the per-element product for Kernel::dot.
  double apply(Kernel kernel) {
    const T s = static_cast<T>(scalar);
    switch (kernel) {
      case Kernel::copy:
        c = a;
        break;
      case Kernel::mul:
        b = s * c;
        break;
      case Kernel::add:
        c = a + b;
        break;
      case Kernel::triad:
        a = b + s * c;
        break;
      case Kernel::nstream:
        a += b + s * c;
        break;
      case Kernel::dot:
        return static_cast<double>(a) * static_cast<double>(b);
    }
    return 0;
  }
};

}  // namespace karma::stream
