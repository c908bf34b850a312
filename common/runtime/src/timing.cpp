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

std::map<std::string, nlohmann::json> KernelTimer::communication() const {
  std::map<std::string, nlohmann::json> out;
  const auto ranks = static_cast<std::size_t>(comm::size());
  const auto me = static_cast<std::size_t>(comm::rank());
  for (const auto& [name, samples] : samples_) {
    const double timed = std::accumulate(samples.begin(), samples.end(), 0.0);
    const auto it = communicating_.find(name);
    const double spent = it == communicating_.end() ? 0.0 : it->second;
    // Every rank's two figures, each in its slots, summed: one allgather.
    std::vector<double> both(2 * ranks, 0.0);
    both[me] = spent;
    both[ranks + me] = timed;
    comm::sum_in_place(both.data(), static_cast<std::int64_t>(both.size()));
    const std::vector<double> seconds(both.begin(), both.begin() + ranks);
    const std::vector<double> totals(both.begin() + ranks, both.end());
    const double least = *std::min_element(seconds.begin(), seconds.end());
    nlohmann::json share = nlohmann::json::array(), waiting = nlohmann::json::array(),
                   per_execution = nlohmann::json::array();
    for (std::size_t r = 0; r < ranks; ++r) {
      share.push_back(totals[r] > 0 ? seconds[r] / totals[r] : 0.0);
      waiting.push_back(totals[r] > 0 ? (seconds[r] - least) / totals[r] : 0.0);
      per_execution.push_back(samples.empty() ? 0.0
                                              : seconds[r] / static_cast<double>(samples.size()));
    }
    out[name] = {
        {"share", share}, {"waiting_share", waiting}, {"seconds_per_execution", per_execution}};
  }
  return out;
}

}  // namespace karma
