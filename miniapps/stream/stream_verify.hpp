// karma-stream's verification: every element of every array compared on
// the device with the scalar recurrence (Gold, stream_kernels.hpp), each
// dot's sum with its own, and the fault run.inject_fault array plants.
#pragma once

#include "stream_kernels.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"

#include <Kokkos_Core.hpp>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace karma::stream {

template <class View, class Index>
double max_relative_error(const View& v, double expected) {
  double worst = 0;
  Kokkos::parallel_reduce("stream::verify", policy_for<View, Index>(v),
                          MaxRelativeError<View>{v, expected}, Kokkos::Max<double>(worst));
  return worst;
}

// run.inject_fault: array: the first element in memory doubled, which the
// check of that array against the recurrence must see.
template <class View>
struct DoubleFirst {
  View view;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const { view.data()[0] *= 2; }
};

// The checks of a run, each the worst over the ranks: every element of a,
// b and c against the recurrence, and, where the dot ran, the worst
// relative error of its sums over all runs (`dot_error`), within the
// elements' own error plus the bound for summing N doubles.
template <class View, class Index, class T>
std::vector<Check> verification_checks(const Arrays<View>& x, const Gold<T>& gold, bool ran_dot,
                                       double dot_error, double global_elements) {
  std::vector<Check> checks;
  const double tolerance = 100 * std::numeric_limits<T>::epsilon();
  const std::pair<const char*, std::pair<View, T>> arrays[] = {
      {"a", {x.a, gold.a}}, {"b", {x.b, gold.b}}, {"c", {x.c, gold.c}}};
  for (const auto& [name, array] : arrays) {
    const double e = comm::max(max_relative_error<View, Index>(array.first, array.second));
    checks.push_back({std::string("array ") + name, "max relative error", e, tolerance});
  }
  if (ran_dot) {
    const double dot_tolerance =
        tolerance + global_elements * std::numeric_limits<double>::epsilon();
    checks.push_back({"dot", "max relative error over all runs", dot_error, dot_tolerance});
  }
  return checks;
}

}  // namespace karma::stream
