// The small shared pieces of App, Report and Context (karma/app.hpp). The
// rest of what karma/app.hpp declares: run_main in startup.cpp, the results
// document and its writing in results_document.cpp, the command line in
// command_line.cpp.
#include "karma/app.hpp"

#include "karma/comm.hpp"
#include "karma/failure.hpp"
#include "karma/system.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace karma {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof(text), u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
  return text;
}

nlohmann::json allgather_json(const nlohmann::json& value) {
  auto all = nlohmann::json::array();
  for (const auto& text : comm::allgather(value.dump())) all.push_back(nlohmann::json::parse(text));
  return all;
}

bool Report::passed() const {
  for (const auto& c : checks)
    if (!c.passed()) return false;
  return !checks.empty();  // a run that checked nothing has not passed
}

bool Context::verbose() const { return comm::is_root() && !command_line.quiet; }

void Context::require_memory(std::uint64_t bytes_per_rank, const std::string& what) const {
  inject_failure_at("allocation");
  const MemoryInfo memory = available_memory();
  const std::int64_t demand =
      comm::sum_on_device(static_cast<std::int64_t>(std::min<std::uint64_t>(
                              bytes_per_rank, static_cast<std::uint64_t>(INT64_MAX))),
                          device_id);
  const bool fits = static_cast<std::uint64_t>(demand) <= memory.free_bytes;
  // Everyone learns the worst case, so every rank refuses together.
  const double worst_demand = comm::max(static_cast<double>(demand));
  const double least_free = comm::min(static_cast<double>(memory.free_bytes));
  if (!comm::all(fits)) {
    std::ostringstream m;
    m << "the problem does not fit: " << what << " needs " << format_bytes(worst_demand) << " ("
      << static_cast<double>(worst_demand) << " bytes) on one "
      << (device_id >= 0 ? "device" : "node") << " but only " << format_bytes(least_free) << " ("
      << least_free << " bytes) is free (" << memory.source
      << "); nothing was allocated. Use a smaller problem or more ranks.";
    throw Error(exit_runtime_error, m.str(), /*collective=*/true);
  }
}

}  // namespace karma
