#include "benchmarks.hpp"

#include "karma/app.hpp"
#include "karma/profiling.hpp"
#include "karma/system.hpp"

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

namespace karma::microbench {

Outcome& outcome() {
  static Outcome o;
  return o;
}

void report_wrong(benchmark::State& state, const std::string& what) {
  ++outcome().wrong_answers;
  state.SkipWithError(("wrong answer: " + what).c_str());
}

void report_resource_error(benchmark::State& state, const std::string& what) {
  ++outcome().resource_errors;
  state.SkipWithError(what.c_str());
}

namespace {
// MemAvailable: karma::available_memory() gives the device's in a GPU build,
// and the serial versions' arrays live on the host.
double host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::numeric_limits<double>::infinity();
}
}  // namespace

bool fits_in_memory(benchmark::State& state, double bytes, Where where) {
  const bool host = where == Where::serial || !is_gpu_space<DefaultSpace>();
  const double free_bytes =
      host ? host_available_bytes() : static_cast<double>(available_memory().free_bytes);
  if (bytes <= 0.9 * free_bytes) return true;
  report_resource_error(state, "the arrays need " + format_bytes(bytes) + ", only " +
                                   format_bytes(free_bytes) + " is free");
  return false;
}

std::string shape_name(Index n0, Index n1, Index n2) {
  std::string s = std::to_string(n0) + "x" + std::to_string(n1);
  if (n2 > 0) s += "x" + std::to_string(n2);
  return s;
}

std::string benchmark_name(const char* family, Where where, const char* layout, Extents extents,
                           const std::string& shape, Impl impl) {
  return std::string(family) + "/" + name_of(where) + "/" + layout + "/" + name_of(extents) + "/" +
         shape + "/" + name_of(impl);
}

bool& raw_twins() {
  static bool twins = false;
  return twins;
}

void add_benchmark(const std::string& name, void (*run)(benchmark::State&)) {
  // Each call of the benchmark (its set-up, timed loop and check) in the
  // Kokkos Tools region karma/microbench/<name>: Google Benchmark 1.7 tells
  // the timed loop no name, and the region stays outside it.
  const std::string region = profiling::region_name(name);
  const auto in_region = [region, run](benchmark::State& state) {
    const profiling::Region open(region);
    run(state);
  };
  // Wall-clock time: parallel versions run on several threads or a GPU.
  benchmark::RegisterBenchmark(name.c_str(), in_region)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  // The same function again: raw_twin / raw is what the machine alone spreads.
  const std::string raw = std::string("/") + name_of(Impl::raw);
  if (raw_twins() && name.size() > raw.size() &&
      name.compare(name.size() - raw.size(), raw.size(), raw) == 0)
    add_benchmark(name + "_twin", run);
}

std::int64_t cached_expected_sum(std::uint32_t seed, Index n0, Index n1, Index n2) {
  // Every repetition of every variant of a shape checks against the same
  // sum: compute it once.
  static std::mutex mutex;
  static std::map<std::tuple<std::uint32_t, Index, Index, Index>, std::int64_t> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(seed, n0, n1, n2);
  const auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  const std::int64_t sum = expected_sum(seed, n0, n1, n2);
  cache.emplace(key, sum);
  return sum;
}

}  // namespace karma::microbench
