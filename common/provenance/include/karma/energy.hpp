// Energy of the device a rank runs on, from its cumulative counter: NVML's
// total energy (NVIDIA), ROCm SMI's energy count (AMD), both loaded with
// dlopen so the suite neither links nor needs them, or the powercap (RAPL)
// package and DRAM domains of the host. A counter that cannot be read never
// fails a run: the run says why and goes on without energy figures.
//
// GPU counters advance in steps every 20-100 ms, so a figure needs a window
// of many steps: the harness runs each variant back-to-back for a window of
// the longer of `window_s` and planned_updates counter steps, by the clock,
// starting on a step, and reports no figure for a window whose counter
// stepped fewer than min_updates times.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace karma::energy {

// Seconds on a monotonic clock, and since the Unix epoch (to line a window
// up with other tools' samples, such as nvidia-smi's).
double now_s();
double unix_s();

// A cumulative counter: read() gives joules since an arbitrary origin
// (wrap-around already undone), or nullopt and why not.
struct Counter {
  std::string source;  // "nvml", "rocm-smi" or "rapl"
  std::string device;  // what it measures, e.g. "GPU 0000:3b:00.0", "package-0 + dram"
  std::function<std::optional<double>(std::string& why)> read;
  // The device's power limit in watts and current clocks in MHz, where the
  // source gives them (empty object otherwise).
  std::function<nlohmann::json()> limits;
  std::function<nlohmann::json()> clocks;
  // Seconds on the clock next_step dates readings by; empty: now_s. Tests
  // of the step logic give one that only they advance, which a loaded host
  // cannot preempt between two reads.
  std::function<double()> now;
};

// One RAPL domain as the powercap tree shows it.
struct RaplDomain {
  std::string name;  // "package-0", "dram", ...
  std::string energy_path;
  double max_range_uj = 0;
};
// The package domains under `root` (e.g. /sys/class/powercap) and their DRAM
// subdomains, each with a readable energy_uj; empty and why when none.
std::vector<RaplDomain> rapl_domains(const std::string& root, std::string& why);
// Energy in microjoules a counter advanced from `last` to `now`, counting
// one wrap-around at `max_range`.
double rapl_delta_uj(double last, double now, double max_range);
std::optional<Counter> open_rapl(const std::string& root, std::string& why);

// NVML or ROCm SMI for the GPU at `pci_bus_id` ("0000:3b:00.0"), from the
// library `library` (libnvidia-ml.so.1, librocm_smi64.so); nullopt and why
// when it cannot be loaded or does not know the device.
std::optional<Counter> open_nvml(const std::string& library, const std::string& pci_bus_id,
                                 std::string& why);
std::optional<Counter> open_rocm_smi(const std::string& library, const std::string& pci_bus_id,
                                     std::string& why);

// A window must span at least this many counter steps to give a figure, and
// is planned for planned_updates, so a step or two lost to load still leaves
// one.
constexpr double min_updates = 10;
constexpr double planned_updates = 12;
// A window's seconds: the longer of the deck's run.energy_window and
// planned_updates steps of the counter.
double window_target(double window_s, double interval_s);

// Reads until the counter changes (at most `timeout_s`): the reading just
// after the change and when the change happened, the middle of the bracket
// between the last read that saw the old value and the first that saw the
// new one. A change in a bracket wider than `max_bracket`, and wider than
// twice the narrowest unchanged one (slow reads), is not used to date: the
// next change is awaited, and the last wide one is returned only at the
// timeout. `changes`: the changes since the call began, 1 unless some were
// passed over.
constexpr double max_bracket_s = 2e-3;
struct Reading {
  double joules = 0;
  double at_s = 0;
  int changes = 1;
};
std::optional<Reading> next_step(const Counter& c, double timeout_s, std::string& why,
                                 double max_bracket = max_bracket_s);
// The widest bracket that dates a change of a counter stepping every
// `step_s`: a quarter step, and never under max_bracket_s.
double bracket_for_step(double step_s);
// The counter's step (the longest of the intervals between its changes) and
// the idle power over those whole steps, measured together: at least four
// intervals and 0.2 s.
struct Idle {
  double interval_s = 0;
  double watts = 0;
};
std::optional<Idle> measure_idle(const Counter& c, std::string& why);

// Whether a window of `seconds` in which the counter changed `steps` times
// gives a figure (at least min_updates steps); the reason when it does not.
std::optional<std::string> too_few_steps(std::int64_t steps, double seconds);
// Why a window that stepped fewer than planned_updates times was cut short;
// nullopt when it was not.
std::optional<std::string> cut_short(std::int64_t steps, double seconds, double interval_s);

// The run's energy state, one per process: opened by start() after Kokkos
// is up, used by the harness for every variant, described in the results.
struct Session {
  bool requested = false;
  std::optional<Counter> counter;
  bool counted = true;    // false: another rank on this node reads the same counter
  std::string reason;     // why there are no figures, when there are none
  double window_s = 0.5;  // the deck's run.energy_window
  double interval_s = 0;  // the counter's step
  double idle_W = 0;      // measured before the first variant
  nlohmann::json limits, clocks_start, clocks_end;
  // The windows after the first counter failure give no figures.
  bool usable() const { return counter.has_value() && reason.empty(); }
};
Session& session();

// Collective. Opens the counter of this rank's device (`device` as
// describe_device gives it: an NVIDIA GPU's through NVML, an AMD GPU's through
// ROCm SMI, a host's powercap tree; KARMA_NVML_LIBRARY,
// KARMA_ROCM_SMI_LIBRARY and KARMA_POWERCAP_ROOT name others, for tests and
// unusual installs), measures its step and the idle power. `host`: this
// rank's host name (hostname(), karma/system.hpp); with the GPU's PCI
// address it tells the ranks that share one GPU.
void start(bool requested, double window_s, const nlohmann::json& device, const std::string& host);
// Records the clocks at the end of the run.
void finish();
// This rank's part of the results' `energy` section.
nlohmann::json describe();

}  // namespace karma::energy
