// Fenced timing of kernels and the statistics of the repetitions.
#pragma once

#include "karma/comm.hpp"
#include "karma/failure.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace karma {

struct Stats {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, max = 0, stddev = 0;  // stddev: sample (n-1)
};

Stats summarize(std::vector<double> samples);

// Times named kernels over repetitions. Each timed call starts after a fence
// and a barrier and ends with a fence, so the device work is inside the
// interval; each repetition's time is the slowest rank's. A call that returns
// with the device idle (it waited for a result it read) is timed without the
// closing fence: a fence on an idle device still takes the host its time.
class KernelTimer {
 public:
  enum class Ends { running, idle };

  // `fence` waits for all device work (tests count its calls).
  explicit KernelTimer(void (*fence)() = fence_all) : fence_(fence) {}

  template <class Fn>
  void time(const std::string& name, Fn&& fn, Ends ends = Ends::running) {
    fence_();
    comm::barrier();
    if (samples_.empty()) inject_failure_at("kernel");
    const double spent = comm::seconds_spent();
    const auto start = std::chrono::steady_clock::now();
    fn();
    if (ends == Ends::running) fence_();
    const auto stop = std::chrono::steady_clock::now();
    samples_[name].push_back(std::chrono::duration<double>(stop - start).count());
    communicating_[name] += comm::seconds_spent() - spent;
  }

  // Collective: reduces every repetition over ranks, then summarises.
  std::map<std::string, Stats> finish() const;
  // Collective: each kernel's communication on each rank, in rank order:
  // {share, waiting_share, seconds_per_execution}. share: the rank's time
  // communicating and waiting over its timed time; waiting_share: the part
  // of it above the least rank's, what the rank waited for slower peers.
  std::map<std::string, nlohmann::json> communication() const;
  const std::vector<double>& samples(const std::string& name) const { return samples_.at(name); }

 private:
  static void fence_all() { Kokkos::fence(); }
  void (*fence_)();
  std::map<std::string, std::vector<double>> samples_;
  std::map<std::string, double> communicating_;  // seconds, this rank's
};

}  // namespace karma
