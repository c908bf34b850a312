#include "karma/timing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace karma {

Stats summarize(std::vector<double> samples) {
  Stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double x : samples) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return s;
}

std::map<std::string, Stats> KernelTimer::finish() const {
  std::map<std::string, Stats> out;
  // std::map iterates in the same order on every rank, so the collectives match.
  for (const auto& [name, samples] : samples_) {
    std::vector<double> slowest = samples;
    comm::max_inplace(slowest);
    out[name] = summarize(std::move(slowest));
  }
  return out;
}

}  // namespace karma
