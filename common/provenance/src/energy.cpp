#include "karma/energy.hpp"

#include "karma/comm.hpp"
#include "system_access.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace karma::energy {

namespace fs = std::filesystem;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double unix_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using detail::env_or;
using detail::first_line;
using detail::number_in;

namespace {
const auto load = detail::load_library;
}  // namespace

// ---------------------------------------------------------------------------
// powercap (RAPL)

std::vector<RaplDomain> rapl_domains(const std::string& root, std::string& why) {
  std::vector<RaplDomain> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why = root + " does not exist (no powercap driver)";
    return out;
  }
  std::vector<fs::path> zones;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    // Top-level zones are "intel-rapl:N" (AMD processors use the same driver
    // name); "intel-rapl:N:M" are their subzones.
    if (n.rfind("intel-rapl:", 0) == 0 && std::count(n.begin(), n.end(), ':') == 1)
      zones.push_back(e.path());
  }
  std::sort(zones.begin(), zones.end());
  if (zones.empty()) {
    why = "no RAPL zones under " + root;
    return out;
  }
  std::string unreadable;
  auto add = [&](const fs::path& zone) {
    const auto name = first_line((zone / "name").string());
    const std::string energy = (zone / "energy_uj").string();
    const auto range = number_in((zone / "max_energy_range_uj").string());
    if (!name) return;
    if (!number_in(energy) || !range || *range <= 0) {
      unreadable = energy;
      return;
    }
    out.push_back({*name, energy, *range});
  };
  for (const auto& z : zones) {
    add(z);
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(z, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(z.filename().string() + ":", 0) == 0) subs.push_back(e.path());
    }
    std::sort(subs.begin(), subs.end());
    for (const auto& s : subs)
      if (first_line((s / "name").string()).value_or("") == "dram") add(s);
  }
  if (out.empty())
    why = unreadable.empty() ? "no RAPL domain under " + root + " has a name"
                             : "cannot read " + unreadable +
                                   " (the kernel lets only root read RAPL energy by default)";
  return out;
}

double rapl_delta_uj(double last, double now, double max_range) {
  return now >= last ? now - last : now + max_range - last;
}

std::optional<Counter> open_rapl(const std::string& root, std::string& why) {
  auto domains = rapl_domains(root, why);
  if (domains.empty()) return std::nullopt;
  struct State {
    std::vector<RaplDomain> domains;
    std::vector<double> last;
    double total_uj = 0;
  };
  auto st = std::make_shared<State>();
  st->domains = std::move(domains);
  std::string names;
  for (const auto& d : st->domains) {
    names += (names.empty() ? "" : " + ") + d.name;
    st->last.push_back(*number_in(d.energy_path));
  }
  Counter c;
  c.source = "rapl";
  c.device = names;
  c.read = [st](std::string& why) -> std::optional<double> {
    for (std::size_t i = 0; i < st->domains.size(); ++i) {
      const auto v = number_in(st->domains[i].energy_path);
      if (!v) {
        why = "cannot read " + st->domains[i].energy_path;
        return std::nullopt;
      }
      st->total_uj += rapl_delta_uj(st->last[i], *v, st->domains[i].max_range_uj);
      st->last[i] = *v;
    }
    return st->total_uj * 1e-6;
  };
  c.limits = [] { return nlohmann::json::object(); };
  c.clocks = [] { return nlohmann::json::object(); };
  return c;
}

// ---------------------------------------------------------------------------
// NVML, through dlopen: the few entry points used, with NVML's C types.

namespace {
using nvml_device = void*;
using nvml_return = int;
constexpr int nvml_clock_sm = 1, nvml_clock_mem = 2;
}  // namespace

std::optional<Counter> open_nvml(const std::string& library, const std::string& pci_bus_id,
                                 std::string& why) {
  const auto lib = load(library, why);
  if (!lib) return std::nullopt;
  using init_t = nvml_return (*)();
  using by_bus_t = nvml_return (*)(const char*, nvml_device*);
  using energy_t = nvml_return (*)(nvml_device, unsigned long long*);
  using uint_t = nvml_return (*)(nvml_device, unsigned int*);
  using clock_t = nvml_return (*)(nvml_device, int, unsigned int*);
  using error_t = const char* (*)(nvml_return);
  const auto init = lib->symbol<init_t>("nvmlInit_v2", why);
  const auto by_bus = lib->symbol<by_bus_t>("nvmlDeviceGetHandleByPciBusId_v2", why);
  const auto energy = lib->symbol<energy_t>("nvmlDeviceGetTotalEnergyConsumption", why);
  const auto limit = lib->symbol<uint_t>("nvmlDeviceGetEnforcedPowerLimit", why);
  const auto clock = lib->symbol<clock_t>("nvmlDeviceGetClockInfo", why);
  const auto text = lib->symbol<error_t>("nvmlErrorString", why);
  if (!init || !by_bus || !energy || !limit || !clock || !text) {
    why = library + ": " + why;
    return std::nullopt;
  }
  auto fail = [&](const char* call, nvml_return r) {
    why = std::string(call) + " failed: " + text(r);
    return std::nullopt;
  };
  if (const nvml_return r = init(); r != 0) return fail("nvmlInit_v2", r);
  nvml_device dev = nullptr;
  if (const nvml_return r = by_bus(pci_bus_id.c_str(), &dev); r != 0)
    return fail(("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ")").c_str(), r);
  unsigned long long mj = 0;
  if (const nvml_return r = energy(dev, &mj); r != 0)
    return fail("nvmlDeviceGetTotalEnergyConsumption", r);

  Counter c;
  c.source = "nvml";
  c.device = "GPU " + pci_bus_id;
  c.read = [dev, energy, text](std::string& why) -> std::optional<double> {
    unsigned long long v = 0;
    if (const nvml_return r = energy(dev, &v); r != 0) {
      why = std::string("nvmlDeviceGetTotalEnergyConsumption failed: ") + text(r);
      return std::nullopt;
    }
    return static_cast<double>(v) * 1e-3;  // millijoules
  };
  c.limits = [dev, limit] {
    unsigned int mw = 0;
    nlohmann::json j = nlohmann::json::object();
    if (limit(dev, &mw) == 0) j["power_limit_W"] = mw * 1e-3;
    return j;
  };
  c.clocks = [dev, clock] {
    unsigned int sm = 0, mem = 0;
    nlohmann::json j = nlohmann::json::object();
    if (clock(dev, nvml_clock_sm, &sm) == 0) j["sm_MHz"] = sm;
    if (clock(dev, nvml_clock_mem, &mem) == 0) j["memory_MHz"] = mem;
    return j;
  };
  return c;
}

// ---------------------------------------------------------------------------
// ROCm SMI, through dlopen.

std::optional<Counter> open_rocm_smi(const std::string& library, const std::string& pci_bus_id,
                                     std::string& why) {
  const auto lib = load(library, why);
  if (!lib) return std::nullopt;
  using init_t = int (*)(std::uint64_t);
  using count_t = int (*)(std::uint32_t*);
  using bdf_t = int (*)(std::uint32_t, std::uint64_t*);
  using energy_t = int (*)(std::uint32_t, std::uint64_t*, float*, std::uint64_t*);
  using cap_t = int (*)(std::uint32_t, std::uint32_t, std::uint64_t*);
  const auto init = lib->symbol<init_t>("rsmi_init", why);
  const auto count = lib->symbol<count_t>("rsmi_num_monitor_devices", why);
  const auto bdf = lib->symbol<bdf_t>("rsmi_dev_pci_id_get", why);
  const auto energy = lib->symbol<energy_t>("rsmi_dev_energy_count_get", why);
  const auto cap = lib->symbol<cap_t>("rsmi_dev_power_cap_get", why);
  if (!init || !count || !bdf || !energy || !cap) {
    why = library + ": " + why;
    return std::nullopt;
  }
  if (const int r = init(0); r != 0) {
    why = "rsmi_init failed with status " + std::to_string(r);
    return std::nullopt;
  }
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    why = "cannot parse the PCI address '" + pci_bus_id + "'";
    return std::nullopt;
  }
  // ROCm SMI's BDF id: domain << 32 | bus << 8 | device << 3 | function.
  const std::uint64_t wanted =
      (std::uint64_t{domain} << 32) | (bus << 8) | (device << 3) | function;
  std::uint32_t n = 0;
  count(&n);
  std::optional<std::uint32_t> index;
  for (std::uint32_t i = 0; i < n && !index; ++i) {
    std::uint64_t id = 0;
    if (bdf(i, &id) == 0 && (id & 0xffffffffffffULL) == wanted) index = i;
  }
  if (!index) {
    why = "ROCm SMI lists no device at " + pci_bus_id;
    return std::nullopt;
  }
  Counter c;
  c.source = "rocm-smi";
  c.device = "GPU " + pci_bus_id;
  const std::uint32_t i = *index;
  c.read = [i, energy](std::string& why) -> std::optional<double> {
    std::uint64_t ticks = 0, stamp = 0;
    float resolution_uj = 0;
    if (const int r = energy(i, &ticks, &resolution_uj, &stamp); r != 0) {
      why = "rsmi_dev_energy_count_get failed with status " + std::to_string(r);
      return std::nullopt;
    }
    return static_cast<double>(ticks) * resolution_uj * 1e-6;
  };
  c.limits = [i, cap] {
    std::uint64_t uw = 0;
    nlohmann::json j = nlohmann::json::object();
    if (cap(i, 0, &uw) == 0) j["power_limit_W"] = static_cast<double>(uw) * 1e-6;
    return j;
  };
  c.clocks = [] { return nlohmann::json::object(); };
  return c;
}

// ---------------------------------------------------------------------------
// Steps and windows.

std::optional<Reading> next_step(const Counter& c, double timeout_s, std::string& why,
                                 double max_bracket) {
  // The read before a change saw the old value and the read after it the new
  // one, so the change fell between the start of the first and the end of the
  // second. A reader preempted there, or a read that stalled, widens that
  // bracket and would date a window's edge by the stall: such a change becomes
  // the new baseline and the next one is awaited.
  const auto clock_s = [&c] { return c.now ? c.now() : now_s(); };
  double previous_start = clock_s();
  auto last = c.read(why);
  if (!last) return std::nullopt;
  const double give_up = clock_s() + timeout_s;
  double narrowest = 0;  // of the brackets without a change: how slow reads are
  std::optional<Reading> loose;
  while (true) {
    const double start = clock_s();
    const auto v = c.read(why);
    const double end = clock_s();
    if (!v) return std::nullopt;
    const double bracket = end - previous_start;
    Reading r{*v, 0.5 * (previous_start + end), loose ? loose->changes + 1 : 1};
    previous_start = start;
    if (*v == *last) {
      narrowest = narrowest == 0 ? bracket : std::min(narrowest, bracket);
    } else if (bracket <= std::max(max_bracket, 2 * narrowest)) {
      return r;
    } else {
      loose = r;
      last = v;
    }
    if (end > give_up) {
      // Every change came in a wide bracket: the last one, dated at its
      // middle, rather than no reading at all.
      if (loose) return loose;
      char text[96];
      std::snprintf(text, sizeof(text), "the counter did not change in %.1f s", timeout_s);
      why = text;
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

double bracket_for_step(double step_s) { return std::max(max_bracket_s, step_s / 4); }

std::optional<Idle> measure_idle(const Counter& c, std::string& why) {
  // Until the step is known, changes are dated in the narrowest bracket any
  // step allows (bracket_for_step(0), max_bracket_s): one read in a stall
  // would lengthen the step by half the stall.
  const auto first = next_step(c, 2.0, why);
  if (!first) return std::nullopt;
  Reading last = *first;
  Idle idle;
  int changes = 0;
  for (int readings = 0; readings < 4 || last.at_s - first->at_s < 0.2; ++readings) {
    const auto r = next_step(c, 2.0, why, bracket_for_step(idle.interval_s));
    if (!r) return std::nullopt;
    // An interval over a change read in a wide bracket spans two steps or more.
    if (r->changes == 1) idle.interval_s = std::max(idle.interval_s, r->at_s - last.at_s);
    changes += r->changes;
    last = *r;
  }
  if (idle.interval_s == 0) idle.interval_s = (last.at_s - first->at_s) / changes;
  idle.watts = (last.joules - first->joules) / (last.at_s - first->at_s);
  return idle;
}

double window_target(double window_s, double interval_s) {
  return std::max(window_s, planned_updates * interval_s);
}

std::optional<std::string> too_few_steps(std::int64_t steps, double seconds) {
  if (static_cast<double>(steps) >= min_updates) return std::nullopt;
  char text[160];
  std::snprintf(text, sizeof(text),
                "the counter stepped %lld times in the window of %.3g s, fewer than the %g a "
                "figure needs",
                static_cast<long long>(steps), seconds, min_updates);
  return std::string(text);
}

std::optional<std::string> cut_short(std::int64_t steps, double seconds, double interval_s) {
  if (static_cast<double>(steps) >= planned_updates) return std::nullopt;
  char text[260];
  std::snprintf(text, sizeof(text),
                "the window of %.3g s ended on time with %lld counter steps of the %g planned: "
                "the counter stepped slower than the %.3g s measured at start-up, or load kept "
                "the watch from seeing each step",
                seconds, static_cast<long long>(steps), planned_updates, interval_s);
  return std::string(text);
}

Session& session() {
  static Session s;
  return s;
}

void start(bool requested, double window_s, const nlohmann::json& device, const std::string& host) {
  Session& s = session();
  s = Session{};
  s.requested = requested;
  s.window_s = window_s;
  if (!requested) {
    s.reason = "run.energy is off";
    return;
  }
  std::string why;
  const std::string pci_bus_id = device.value("pci_bus_id", "");
  const std::string vendor = device.value("vendor", "");
  if (device.value("kind", "") != "gpu") {
    // One counter per node: the package is shared by the node's ranks.
    s.counted = comm::local_rank() == 0;
    s.counter = open_rapl(env_or("KARMA_POWERCAP_ROOT", "/sys/class/powercap"), why);
  } else {
    // Ranks sharing a GPU: the lowest one counts it.
    const auto keys = comm::allgather(host + " " + pci_bus_id);
    const std::string mine = keys[static_cast<std::size_t>(comm::rank())];
    s.counted = std::find(keys.begin(), keys.end(), mine) - keys.begin() == comm::rank();
    if (vendor == "NVIDIA")
      s.counter = open_nvml(env_or("KARMA_NVML_LIBRARY", "libnvidia-ml.so.1"), pci_bus_id, why);
    else if (vendor == "AMD")
      s.counter =
          open_rocm_smi(env_or("KARMA_ROCM_SMI_LIBRARY", "librocm_smi64.so"), pci_bus_id, why);
    else
      why = "no energy counter is known for " + (vendor.empty() ? "this" : vendor) + " GPUs";
  }
  if (s.counter) {
    if (const auto idle = measure_idle(*s.counter, why)) {
      s.interval_s = idle->interval_s;
      s.idle_W = idle->watts;
      s.limits = s.counter->limits();
      s.clocks_start = s.counter->clocks();
    } else {
      s.counter.reset();
    }
  }
  if (!s.counter) s.reason = why;
  comm::barrier();
}

void finish() {
  Session& s = session();
  if (s.counter) s.clocks_end = s.counter->clocks();
}

nlohmann::json describe() {
  const Session& s = session();
  nlohmann::json j = {{"status", s.usable() ? "measured" : "unavailable"}};
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (!s.counter) return j;
  j["source"] = s.counter->source;
  j["counter"] = s.counter->device;
  j["counted"] = s.counted;
  j["counter_step_s"] = s.interval_s;
  j["idle_power_W"] = s.idle_W;
  j.update(s.limits);
  if (!s.clocks_start.empty()) j["clocks_start_MHz"] = s.clocks_start;
  if (!s.clocks_end.empty()) j["clocks_end_MHz"] = s.clocks_end;
  return j;
}

}  // namespace karma::energy
