#include "benchmarks.hpp"

#include <map>
#include <mutex>
#include <tuple>

namespace karma::microbench {

std::string Benchmark::shape_name() const {
  std::string s;
  for (const Index n : shape) s += (s.empty() ? "" : "x") + std::to_string(n);
  return s;
}

std::string Benchmark::name() const {
  return std::string(family) + "/" + name_of(where) + "/" + layout + "/" + name_of(extents) + "/" +
         shape_name();
}

nlohmann::json Benchmark::launch() const {
  return {{"benchmark", family},
          {"where", name_of(where)},
          {"layout", layout},
          {"extents", name_of(extents)},
          {"shape", shape}};
}

std::vector<std::string> code_of(const Benchmark& b, Impl impl) {
  const std::string suffix = impl == Impl::raw           ? "_raw"
                             : impl == Impl::karma_byref ? "_karma_byref"
                                                         : "_karma";
  return {"karma::microbench::" + std::string(b.stem) + suffix +
              (b.where == Where::parallel ? "_parallel" : ""),
          "karma::microbench::call_times"};
}

std::int64_t cached_expected_sum(std::uint32_t seed, Index n0, Index n1, Index n2) {
  // Every arm of every benchmark of a shape checks against the same sum:
  // compute it once.
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

std::vector<Benchmark> all_benchmarks(Sizes sizes) {
  std::vector<Benchmark> out;
  add_sum3d(out, sizes);
  add_stencil3d(out, sizes);
  add_tiny_matrix_sum(out, sizes);
  add_subspan3d(out, sizes);
  add_matvec(out, sizes);
  return out;
}

}  // namespace karma::microbench
