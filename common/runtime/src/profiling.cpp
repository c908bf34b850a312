#include "karma/profiling.hpp"

#include "karma/build_info.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

namespace karma::profiling {

namespace {
std::string& app_name() {
  static std::string name = "unknown";
  return name;
}
}  // namespace

void declare_run(const std::string& app, const Metadata& run) {
  app_name() = app;
  Metadata all = {{"karma.app", app},
                  {"karma.version", build_info::version},
                  {"karma.git_describe", build_info::git_describe},
                  {"karma.git_dirty", build_info::git_dirty ? "true" : "false"},
                  {"karma.build_type", build_info::build_type},
                  {"karma.compiler", build_info::compiler},
                  {"karma.kokkos_version", kokkos_version_string()}};
  all.insert(all.end(), run.begin(), run.end());
  // Kokkos 3.4 has declareMetadata already (the oldest Kokkos the suite
  // builds on); without a tool loaded it does nothing.
  for (const auto& [key, value] : all) Kokkos::Tools::declareMetadata(key, value);
}

std::string region_name(const std::string& kernel) { return "karma/" + app_name() + "/" + kernel; }

Region::Region(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
Region::~Region() { Kokkos::Profiling::popRegion(); }

}  // namespace karma::profiling
