// Kokkos Tools (docs/running.md "Profiling with Kokkos Tools"). A tool library loaded
// at Kokkos::initialize sees the run's metadata, declared once, and one
// region per measured kernel, named karma/<app>/<kernel> after the kernel's
// name in the results. Regions open and close outside the timed intervals:
// without a tool each is a test of a null callback.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace karma::profiling {

using Metadata = std::vector<std::pair<std::string, std::string>>;

// After Kokkos::initialize: names the app the regions belong to and declares
// to the tool (Kokkos::Tools::declareMetadata) karma.app, the build's facts
// (karma.version, karma.git_describe, karma.git_dirty, karma.build_type,
// karma.compiler, karma.kokkos_version) and then `run`, in order.
void declare_run(const std::string& app, const Metadata& run);

// "karma/<app>/<kernel>", with the app of declare_run.
std::string region_name(const std::string& kernel);

// The region `name` is open for the lifetime of this object.
class Region {
 public:
  explicit Region(const std::string& name);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

}  // namespace karma::profiling
