#include "karma/gpu_state.hpp"

#include "system_access.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

namespace karma {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// NVML, through dlopen, with its C types: a query the device or the driver's
// NVML does not answer is left out, not guessed.

namespace {
using nvml_device = void*;
using nvml_return = int;
constexpr int nvml_clock_sm = 1, nvml_clock_mem = 2;
constexpr int nvml_corrected = 0, nvml_uncorrected = 1, nvml_aggregate = 1;
struct ViolationTime {
  unsigned long long reference_us;
  unsigned long long violation_ns;
};
// nvmlPerfPolicyType_t: what held the clocks below the applications' (or the
// base) clocks.
constexpr std::pair<int, const char*> clock_events[] = {{0, "power"},
                                                        {1, "thermal"},
                                                        {2, "sync_boost"},
                                                        {3, "board_limit"},
                                                        {4, "low_utilization"},
                                                        {5, "reliability"},
                                                        {10, "below_applications_clocks"},
                                                        {11, "below_base_clocks"}};

// Calls NVML's `name` on `dev`; false where the library lacks it or it fails.
template <class... Args>
bool query(const detail::Library& lib, const char* name, nvml_device dev, Args... args) {
  std::string ignored;
  const auto f = lib.symbol<nvml_return (*)(nvml_device, Args...)>(name, ignored);
  return f && f(dev, args...) == 0;
}

void put_clocks(const detail::Library& lib, nvml_device dev, nlohmann::json& j) {
  const std::pair<const char*, const char*> calls[] = {
      {"nvmlDeviceGetClockInfo", ""},
      {"nvmlDeviceGetMaxClockInfo", "_max"},
      {"nvmlDeviceGetApplicationsClock", "_applications"}};
  for (const auto& [call, suffix] : calls) {
    unsigned int mhz = 0;
    if (query(lib, call, dev, nvml_clock_sm, &mhz)) j[std::string("sm") + suffix + "_MHz"] = mhz;
    if (query(lib, call, dev, nvml_clock_mem, &mhz))
      j[std::string("memory") + suffix + "_MHz"] = mhz;
  }
  if (unsigned int mw = 0; query(lib, "nvmlDeviceGetEnforcedPowerLimit", dev, &mw))
    j["power_limit_W"] = mw * 1e-3;
}

void put_modes_and_counters(const detail::Library& lib, nvml_device dev, nlohmann::json& j) {
  if (unsigned int on = 0; query(lib, "nvmlDeviceGetPersistenceMode", dev, &on))
    j["persistence_mode"] = on == 1;
  if (unsigned int on = 0, pending = 0; query(lib, "nvmlDeviceGetEccMode", dev, &on, &pending))
    j["ecc_enabled"] = on == 1;
  unsigned long long corrected = 0, uncorrected = 0;
  if (query(lib, "nvmlDeviceGetTotalEccErrors", dev, nvml_corrected, nvml_aggregate, &corrected) &&
      query(lib, "nvmlDeviceGetTotalEccErrors", dev, nvml_uncorrected, nvml_aggregate,
            &uncorrected))
    j["ecc_errors"] = {{"corrected", corrected}, {"uncorrected", uncorrected}};
  nlohmann::json events = nlohmann::json::object();
  for (const auto& [policy, name] : clock_events)
    if (ViolationTime t{}; query(lib, "nvmlDeviceGetViolationStatus", dev, policy, &t))
      events[name] = t.violation_ns;
  if (!events.empty()) j["clocks_event_ns"] = std::move(events);
  char text[96] = {};
  if (query(lib, "nvmlDeviceGetBoardPartNumber", dev, text, unsigned{sizeof(text)}))
    j["board_part_number"] = std::string(text);
  if (query(lib, "nvmlDeviceGetVbiosVersion", dev, text, unsigned{sizeof(text)}))
    j["vbios_version"] = std::string(text);
}
}  // namespace

nlohmann::json nvml_state(const std::string& library, const std::string& pci_bus_id,
                          std::string& why) {
  const auto lib = detail::load_library(library, why);
  if (!lib) return nullptr;
  using init_t = nvml_return (*)();
  using by_bus_t = nvml_return (*)(const char*, nvml_device*);
  const auto init = lib->symbol<init_t>("nvmlInit_v2", why);
  const auto by_bus = lib->symbol<by_bus_t>("nvmlDeviceGetHandleByPciBusId_v2", why);
  if (!init || !by_bus) {
    why = library + ": " + why;
    return nullptr;
  }
  nvml_device dev = nullptr;
  if (const nvml_return r = init(); r != 0) {
    why = "nvmlInit_v2 failed with status " + std::to_string(r);
    return nullptr;
  }
  if (const nvml_return r = by_bus(pci_bus_id.c_str(), &dev); r != 0) {
    why = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ") failed with status " +
          std::to_string(r);
    return nullptr;
  }
  nlohmann::json j = {{"source", "nvml"}};
  put_clocks(*lib, dev, j);
  put_modes_and_counters(*lib, dev, j);
  return j;
}

// ---------------------------------------------------------------------------
// AMD: the amdgpu driver's sysfs files, what ROCm SMI reads too.

namespace {
// The level marked current ('*') and the highest of an amdgpu pp_dpm_* file,
// one "N: 1700Mhz *" line per level, in MHz.
std::optional<std::pair<double, double>> dpm_levels(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::optional<double> current;
  double highest = 0;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    double mhz = 0;
    if (std::sscanf(line.c_str() + colon + 1, "%lf", &mhz) != 1) continue;
    highest = std::max(highest, mhz);
    if (line.find('*') != std::string::npos) current = mhz;
  }
  if (!current) return std::nullopt;
  return std::make_pair(*current, highest);
}
}  // namespace

nlohmann::json amdgpu_state(const std::string& device_dir, std::string& why) {
  std::error_code ec;
  if (!fs::is_directory(device_dir, ec)) {
    why = device_dir + " does not exist";
    return nullptr;
  }
  // What ROCm SMI reads too: the amdgpu driver's files of the device.
  nlohmann::json j = {{"source", "amdgpu sysfs"}};
  const fs::path dir(device_dir);
  if (const auto sclk = dpm_levels(dir / "pp_dpm_sclk")) {
    j["sm_MHz"] = sclk->first;
    j["sm_max_MHz"] = sclk->second;
  }
  if (const auto mclk = dpm_levels(dir / "pp_dpm_mclk")) {
    j["memory_MHz"] = mclk->first;
    j["memory_max_MHz"] = mclk->second;
  }
  for (const auto& e : fs::directory_iterator(dir / "hwmon", ec))
    if (const auto uw = detail::number_in((e.path() / "power1_cap").string())) {
      j["power_limit_W"] = *uw * 1e-6;
      break;
    }
  if (j.size() == 1) {
    why = "the amdgpu driver gives no clocks or power cap under " + device_dir;
    return nullptr;
  }
  return j;
}

nlohmann::json gpu_state(const nlohmann::json& device) {
  const std::string vendor = device.value("vendor", "");
  const std::string pci_bus_id = device.value("pci_bus_id", "");
  std::string why;
  nlohmann::json j;
  if (pci_bus_id.empty()) {
    why = "the runtime gave no PCI address for the GPU";
  } else if (vendor == "NVIDIA") {
    j = nvml_state(detail::env_or("KARMA_NVML_LIBRARY", "libnvidia-ml.so.1"), pci_bus_id, why);
  } else if (vendor == "AMD") {
    // sysfs names devices in lower case with a 4-digit domain.
    std::string bdf = pci_bus_id;
    std::transform(bdf.begin(), bdf.end(), bdf.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::count(bdf.begin(), bdf.end(), ':') == 1) bdf = "0000:" + bdf;
    j = amdgpu_state(detail::env_or("KARMA_PCI_SYSFS_ROOT", "/sys/bus/pci/devices") + "/" + bdf,
                     why);
  } else {
    why = "no source of clocks and power limit is known for " +
          (vendor.empty() ? std::string("this") : vendor) + " GPUs";
  }
  if (j.is_null()) return {{"reason", why}};
  return j;
}

}  // namespace karma
