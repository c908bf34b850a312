// The energy counters (karma/energy.hpp): RAPL's wrap-around and powercap
// tree on a fake tree, the libraries' load failures, and the step logic.
#include "karma/energy.hpp"
#include "karma/gpu_state.hpp"
#include "karma/harness.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace karma_test_energy {

namespace fs = std::filesystem;
namespace energy = karma::energy;

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- rapl_delta_uj --------------------------------------------------------------

TEST(EnergyRaplDelta, WithoutWrapAround) {
  EXPECT_EQ(energy::rapl_delta_uj(100, 250, 1000), 150);
  EXPECT_EQ(energy::rapl_delta_uj(400, 400, 1000), 0);
}

TEST(EnergyRaplDelta, WithWrapAround) {
  // 900 -> 1000 (= 0) -> 100.
  EXPECT_EQ(energy::rapl_delta_uj(900, 100, 1000), 200);
  EXPECT_EQ(energy::rapl_delta_uj(999, 0, 1000), 1);
}

// --- a fake powercap tree -----------------------------------------------------------

class EnergyRaplTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = fs::temp_directory_path().string() + "/karma_test_energy_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  static void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::trunc);
    out << text << "\n";
  }
  // A zone (or subzone) as the powercap driver shows it.
  fs::path zone(const fs::path& dir, const std::string& name, const std::string& energy_uj,
                double max_range_uj) {
    fs::create_directories(dir);
    write(dir / "name", name);
    write(dir / "energy_uj", energy_uj);
    write(dir / "max_energy_range_uj", std::to_string(static_cast<long long>(max_range_uj)));
    return dir;
  }
  // Two packages, the first with a DRAM and a core subzone, laid out as
  // /sys/class/powercap: the control type and each subzone also at the top.
  void two_packages() {
    fs::create_directories(root_ / "intel-rapl");
    const fs::path p0 = zone(root_ / "intel-rapl:0", "package-0", "900000", 1e6);
    zone(p0 / "intel-rapl:0:0", "dram", "50", 1000);
    zone(p0 / "intel-rapl:0:1", "core", "7", 1000);  // inside the package: not counted
    fs::create_directory_symlink(p0 / "intel-rapl:0:0", root_ / "intel-rapl:0:0");
    zone(root_ / "intel-rapl:1", "package-1", "10", 1e6);
  }
  fs::path root_;
};

TEST_F(EnergyRaplTree, PackagesAndTheirDram) {
  two_packages();
  std::string why;
  const auto domains = energy::rapl_domains(root_.string(), why);
  ASSERT_EQ(domains.size(), 3u) << why;
  EXPECT_EQ(domains[0].name, "package-0");
  EXPECT_EQ(domains[0].energy_path, (root_ / "intel-rapl:0" / "energy_uj").string());
  EXPECT_EQ(domains[0].max_range_uj, 1e6);
  EXPECT_EQ(domains[1].name, "dram");
  EXPECT_EQ(domains[1].energy_path,
            (root_ / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj").string());
  EXPECT_EQ(domains[1].max_range_uj, 1000);
  EXPECT_EQ(domains[2].name, "package-1");
  EXPECT_TRUE(why.empty()) << why;
}

TEST_F(EnergyRaplTree, MissingRoot) {
  const std::string missing = (root_ / "no-such-dir").string();
  std::string why;
  EXPECT_TRUE(energy::rapl_domains(missing, why).empty());
  EXPECT_EQ(why, missing + " does not exist (no powercap driver)");
  why.clear();
  EXPECT_FALSE(energy::open_rapl(missing, why).has_value());
  EXPECT_TRUE(starts_with(why, missing)) << why;
}

TEST_F(EnergyRaplTree, NoZones) {
  fs::create_directories(root_ / "intel-rapl");
  std::string why;
  EXPECT_TRUE(energy::rapl_domains(root_.string(), why).empty());
  EXPECT_EQ(why, "no RAPL zones under " + root_.string());
}

TEST_F(EnergyRaplTree, GarbageOrMissingEnergyIsNamed) {
  const fs::path p0 = zone(root_ / "intel-rapl:0", "package-0", "garbage", 1e6);
  std::string why;
  EXPECT_FALSE(energy::open_rapl(root_.string(), why).has_value());
  EXPECT_TRUE(starts_with(why, "cannot read " + (p0 / "energy_uj").string() + " (")) << why;
  fs::remove(p0 / "energy_uj");
  why.clear();
  EXPECT_TRUE(energy::rapl_domains(root_.string(), why).empty());
  EXPECT_TRUE(starts_with(why, "cannot read " + (p0 / "energy_uj").string())) << why;
}

TEST_F(EnergyRaplTree, UnreadableEnergyIsNamed) {
  // The kernel lets only root read energy_uj by default. Root reads a file of
  // mode 000, so under root a directory stands in for it.
  const fs::path p0 = zone(root_ / "intel-rapl:0", "package-0", "12", 1e6);
  const fs::path energy_uj = p0 / "energy_uj";
  if (geteuid() == 0) {
    fs::remove(energy_uj);
    fs::create_directory(energy_uj);
  } else {
    fs::permissions(energy_uj, fs::perms::none);
  }
  std::string why;
  EXPECT_TRUE(energy::rapl_domains(root_.string(), why).empty());
  EXPECT_EQ(why, "cannot read " + energy_uj.string() +
                     " (the kernel lets only root read RAPL energy by default)");
}

TEST_F(EnergyRaplTree, ReadSumsTheDomainsAcrossAWrap) {
  fs::create_directories(root_ / "intel-rapl");
  const fs::path p0 = zone(root_ / "intel-rapl:0", "package-0", "900000", 1e6);
  const fs::path dram = zone(p0 / "intel-rapl:0:0", "dram", "50", 1000);
  std::string why;
  const auto c = energy::open_rapl(root_.string(), why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(c->source, "rapl");
  EXPECT_EQ(c->device, "package-0 + dram");
  EXPECT_EQ(c->read(why), 0.0);  // from where it was opened
  // Both wrap: 900000 -> 100000 is 200000 uJ, 50 -> 20 is 970 uJ.
  write(p0 / "energy_uj", "100000");
  write(dram / "energy_uj", "20");
  auto j = c->read(why);
  ASSERT_TRUE(j.has_value()) << why;
  EXPECT_NEAR(*j, 200970e-6, 1e-12);
  write(p0 / "energy_uj", "150000");
  write(dram / "energy_uj", "30");
  j = c->read(why);
  ASSERT_TRUE(j.has_value()) << why;
  EXPECT_NEAR(*j, 250980e-6, 1e-12);
  // A domain that goes away fails the read, naming it.
  fs::remove(dram / "energy_uj");
  EXPECT_FALSE(c->read(why).has_value());
  EXPECT_EQ(why, "cannot read " + (dram / "energy_uj").string());
}

// --- the GPU libraries, loaded with dlopen ---------------------------------------------

TEST(EnergyLibrary, MissingLibraryCannotBeLoaded) {
  const std::string missing = "/nonexistent/libkarma-no-such.so";
  std::string why;
  EXPECT_FALSE(energy::open_nvml(missing, "0000:3b:00.0", why).has_value());
  EXPECT_TRUE(starts_with(why, "cannot load " + missing)) << why;
  why.clear();
  EXPECT_FALSE(energy::open_rocm_smi(missing, "0000:3b:00.0", why).has_value());
  EXPECT_TRUE(starts_with(why, "cannot load " + missing)) << why;
}

TEST(EnergyLibrary, LibraryWithoutTheSymbolsNamesOne) {
  // libm loads, and has none of them.
  std::string why;
  EXPECT_FALSE(energy::open_nvml("libm.so.6", "0000:3b:00.0", why).has_value());
  EXPECT_TRUE(starts_with(why, "libm.so.6: no symbol nvml")) << why;
  why.clear();
  EXPECT_FALSE(energy::open_rocm_smi("libm.so.6", "0000:3b:00.0", why).has_value());
  EXPECT_TRUE(starts_with(why, "libm.so.6: no symbol rsmi_")) << why;
}

// --- the GPU unit's state (gpu_state.hpp) -------------------------------------------

TEST(EnergyGpuState, WithoutASourceSaysWhy) {
  std::string why;
  EXPECT_TRUE(karma::nvml_state("/nonexistent/libkarma-no-nvml.so", "0000:3b:00.0", why).is_null());
  EXPECT_TRUE(starts_with(why, "cannot load /nonexistent/libkarma-no-nvml.so")) << why;
  why.clear();
  EXPECT_TRUE(karma::nvml_state("libm.so.6", "0000:3b:00.0", why).is_null());
  EXPECT_TRUE(starts_with(why, "libm.so.6: no symbol nvml")) << why;
  const auto other = karma::gpu_state({{"vendor", "Intel"}, {"pci_bus_id", "0000:3b:00.0"}});
  EXPECT_EQ(other.dump(),
            R"({"reason":"no source of clocks and power limit is known for Intel GPUs"})");
  const auto no_bus = karma::gpu_state({{"vendor", "NVIDIA"}});
  EXPECT_EQ(no_bus["reason"], "the runtime gave no PCI address for the GPU");
}

// What a unit is, from NVML (the fake one of fake_nvml.cpp): every field, and
// counters that a later read finds grown.
TEST(EnergyGpuState, NvmlGivesTheUnitsSettingsIdentityAndCounters) {
  std::string why;
  const auto j = karma::nvml_state(KARMA_FAKE_NVML, "0000:3b:00.0", why);
  ASSERT_FALSE(j.is_null()) << why;
  EXPECT_EQ(j["source"], "nvml");
  EXPECT_EQ(j["sm_MHz"], 1755);
  EXPECT_EQ(j["sm_max_MHz"], 1980);
  EXPECT_EQ(j["sm_applications_MHz"], 1980);
  EXPECT_EQ(j["memory_applications_MHz"], 3201);
  EXPECT_DOUBLE_EQ(j["power_limit_W"].get<double>(), 700);
  EXPECT_EQ(j["persistence_mode"], true);
  EXPECT_EQ(j["ecc_enabled"], true);
  EXPECT_EQ(j["board_part_number"], "692-2G520-0282-000");
  EXPECT_EQ(j["vbios_version"], "96.00.AF.00.01");
  EXPECT_EQ(j["ecc_errors"]["uncorrected"], 0);
  EXPECT_EQ(j["clocks_event_ns"].size(), 8u) << j.dump();
  EXPECT_EQ(j["clocks_event_ns"]["thermal"], 0);
  // Through gpu_state, as describe_device asks: the counters have grown.
  ASSERT_EQ(setenv("KARMA_NVML_LIBRARY", KARMA_FAKE_NVML, 1), 0);
  const auto later = karma::gpu_state({{"vendor", "NVIDIA"}, {"pci_bus_id", "0000:3b:00.0"}});
  unsetenv("KARMA_NVML_LIBRARY");
  EXPECT_GT(later["clocks_event_ns"]["power"], j["clocks_event_ns"]["power"]);
  EXPECT_GT(later["ecc_errors"]["corrected"], j["ecc_errors"]["corrected"]);
  // A device NVML does not list.
  EXPECT_TRUE(karma::nvml_state(KARMA_FAKE_NVML, "0000:99:00.0", why).is_null());
  EXPECT_TRUE(starts_with(why, "nvmlDeviceGetHandleByPciBusId_v2(0000:99:00.0) failed")) << why;
}

// An NVML that answers only the clocks: the rest is left out, not guessed.
TEST(EnergyGpuState, WhatNvmlDoesNotAnswerIsLeftOut) {
  ASSERT_EQ(setenv("KARMA_FAKE_NVML_PARTIAL", "1", 1), 0);
  std::string why;
  const auto j = karma::nvml_state(KARMA_FAKE_NVML, "0000:3b:00.0", why);
  unsetenv("KARMA_FAKE_NVML_PARTIAL");
  ASSERT_FALSE(j.is_null()) << why;
  EXPECT_EQ(j.dump(), R"({"memory_MHz":3201,"memory_max_MHz":3201,"power_limit_W":700.0,)"
                      R"("sm_MHz":1755,"sm_max_MHz":1980,"source":"nvml"})");
}

TEST_F(EnergyRaplTree, AmdGpuStateFromTheDriversFiles) {
  // An amdgpu device directory: DPM levels with the current one starred,
  // the power cap in microwatts under hwmon.
  const fs::path dev = root_ / "0000:c1:00.0";
  fs::create_directories(dev / "hwmon" / "hwmon4");
  write(dev / "pp_dpm_sclk", "0: 500Mhz\n1: 1200Mhz *\n2: 1700Mhz");
  write(dev / "pp_dpm_mclk", "0: 400Mhz\n1: 1600Mhz *");
  write(dev / "hwmon" / "hwmon4" / "power1_cap", "560000000");
  std::string why;
  const auto j = karma::amdgpu_state(dev.string(), why);
  ASSERT_FALSE(j.is_null()) << why;
  EXPECT_EQ(j["source"], "amdgpu sysfs");
  EXPECT_EQ(j["sm_MHz"], 1200);
  EXPECT_EQ(j["sm_max_MHz"], 1700);
  EXPECT_EQ(j["memory_MHz"], 1600);
  EXPECT_EQ(j["memory_max_MHz"], 1600);
  EXPECT_DOUBLE_EQ(j["power_limit_W"].get<double>(), 560);
  // Through gpu_state: the runtime's upper-case, short-domain address.
  ASSERT_EQ(setenv("KARMA_PCI_SYSFS_ROOT", root_.c_str(), 1), 0);
  const auto via = karma::gpu_state({{"vendor", "AMD"}, {"pci_bus_id", "C1:00.0"}});
  unsetenv("KARMA_PCI_SYSFS_ROOT");
  EXPECT_EQ(via, j);
  // No levels marked current and no cap: nothing is made up.
  write(dev / "pp_dpm_sclk", "0: 500Mhz");
  fs::remove(dev / "pp_dpm_mclk");
  fs::remove(dev / "hwmon" / "hwmon4" / "power1_cap");
  EXPECT_TRUE(karma::amdgpu_state(dev.string(), why).is_null());
  EXPECT_TRUE(starts_with(why, "the amdgpu driver gives no clocks or power cap")) << why;
  EXPECT_TRUE(karma::amdgpu_state((root_ / "absent").string(), why).is_null());
  EXPECT_EQ(why, (root_ / "absent").string() + " does not exist");
}

// --- steps and windows ------------------------------------------------------------

TEST(EnergyWindowSteps, TooFewBelowTheMinimumAndCutShortBelowThePlan) {
  const auto few = energy::too_few_steps(9, 1.2);
  ASSERT_TRUE(few.has_value());
  EXPECT_TRUE(contains(*few, "stepped 9 times in the window of 1.2 s, fewer than the 10")) << *few;
  EXPECT_FALSE(energy::too_few_steps(10, 1.2).has_value());
  const auto cut = energy::cut_short(11, 1.2, 0.1);
  ASSERT_TRUE(cut.has_value());
  EXPECT_TRUE(contains(*cut, "11 counter steps of the 12 planned")) << *cut;
  EXPECT_FALSE(energy::cut_short(12, 1.2, 0.1).has_value());
  EXPECT_EQ(energy::window_target(0.5, 0.1), energy::planned_updates * 0.1);
  EXPECT_EQ(energy::window_target(2.0, 0.1), 2.0);
}

// A clock only the test moves: each reading 0.1 ms after the one before (a
// read's own time), and stall() for a preempted or slow read. The step logic's
// tests run on it, since on a loaded host (ctest -j under the sanitizers) the
// steady clock widens their brackets past what they test.
struct TestClock {
  std::shared_ptr<double> t = std::make_shared<double>(0);
  std::function<double()> now() const {
    return [t = t] { return *t += 1e-4; };
  }
  double seconds() const { return *t; }
  void stall(double s) const { *t += s; }
};

// A counter that steps every `interval` seconds (changeable while it runs) at
// `watts`, on the steady clock or on `clock` where one is given.
struct SteppingCounter {
  std::shared_ptr<double> interval;
  energy::Counter counter;
  SteppingCounter(double interval_s, double watts, const TestClock* clock = nullptr)
      : interval(std::make_shared<double>(interval_s)) {
    const auto seconds = clock ? std::function<double()>([t = clock->t] { return *t; })
                               : std::function<double()>(energy::now_s);
    const double origin = seconds();
    counter.source = "test";
    counter.device = "a stepping counter";
    counter.read = [step = interval, watts, origin, seconds](std::string&) {
      const double t = seconds() - origin;
      return std::optional<double>(std::floor(t / *step) * *step * watts);
    };
    if (clock) counter.now = clock->now();
    counter.limits = [] { return nlohmann::json::object(); };
    counter.clocks = [] { return nlohmann::json::object(); };
  }
};

TEST(EnergyMeasureIdle, StepAndIdlePowerFromTheSameSteps) {
  const TestClock clock;
  SteppingCounter c(0.02, 40, &clock);
  std::string why;
  const auto idle = energy::measure_idle(c.counter, why);
  ASSERT_TRUE(idle.has_value()) << why;
  EXPECT_GE(clock.seconds(), 0.2);
  EXPECT_NEAR(idle->interval_s, 0.02, 1e-3);
  EXPECT_NEAR(idle->watts, 40, 1);
}

// The same on the steady clock, as a run reads its counter, with room for
// the load it may run under.
TEST(EnergyMeasureIdle, OnTheSteadyClock) {
  SteppingCounter c(0.02, 40);
  std::string why;
  const double start = energy::now_s();
  const auto idle = energy::measure_idle(c.counter, why);
  ASSERT_TRUE(idle.has_value()) << why;
  EXPECT_GE(energy::now_s() - start, 0.2);
  EXPECT_NEAR(idle->interval_s, 0.02, 0.01);
  EXPECT_NEAR(idle->watts, 40, 4);
}

// Every third step read 10 ms late (a preempted reader): those steps are
// passed over, and the step is still one interval, not two.
TEST(EnergyMeasureIdle, StepsReadLateDoNotLengthenTheStep) {
  const TestClock clock;
  SteppingCounter c(0.02, 40, &clock);
  const auto read = c.counter.read;
  auto steps_seen = std::make_shared<int>(0);
  auto previous = std::make_shared<double>(-1);
  c.counter.read = [read, steps_seen, previous, clock](std::string& why) {
    const auto v = read(why);
    if (v && *v != *previous && ++*steps_seen % 3 == 0) clock.stall(0.01);
    if (v) *previous = *v;
    return v;
  };
  std::string why;
  const auto idle = energy::measure_idle(c.counter, why);
  ASSERT_TRUE(idle.has_value()) << why;
  EXPECT_GE(*steps_seen, 6);
  // Each end of an interval is dated to within half its bracket (at most a
  // quarter step wide), so one interval, not two.
  EXPECT_NEAR(idle->interval_s, 0.02, 1e-3);
  EXPECT_NEAR(idle->watts, 40, 1);
}

// The session as energy::start leaves it with `counter`, for one test.
class EnergyWindow : public ::testing::Test {
 protected:
  // The device idles at `idle_W`: a SteppingCounter's own power, so that the
  // window's figure is the counter's however late a loaded host reads the
  // steps either side of the window.
  void use(const energy::Counter& counter, double interval_s, double window_s, double idle_W) {
    energy::Session& s = energy::session();
    s = energy::Session{};
    s.requested = true;
    s.counter = counter;
    s.interval_s = interval_s;
    s.window_s = window_s;
    s.idle_W = idle_W;
  }
  void TearDown() override { energy::session() = energy::Session{}; }
  // A kernel timed at 0.5 ms per execution.
  static karma::KernelResult timed() {
    karma::KernelResult r;
    r.name = "kernel";
    r.time.count = 5;
    r.time.min = r.time.median = r.time.max = 5e-4;
    r.fom = 100;
    r.fom_units = "GB/s";
    return r;
  }
};

TEST_F(EnergyWindow, EndsOnTimeWhenLoadSlowsTheExecutionsTenfold) {
  SteppingCounter c(0.01, 50);
  use(c.counter, 0.01, 0.05, 50);
  int runs = 0;
  karma::Variant v;
  v.name = "kernel";
  // As timed for the first executions, then ten times slower, as under a
  // neighbour's load: a window sized by the timed median runs 1.2 s here.
  v.run = [&runs] {
    std::this_thread::sleep_for(std::chrono::microseconds(++runs > 20 ? 5000 : 500));
  };
  const nlohmann::json e = karma::energy_window(v, timed());
  const double target = energy::window_target(0.05, 0.01);
  EXPECT_EQ(e.at("status"), "measured") << e.dump();
  EXPECT_GE(e.at("window_s").get<double>(), target) << e.dump();
  EXPECT_LT(e.at("window_s").get<double>(), target + 0.05) << e.dump();
  EXPECT_LT(e.at("wall_s").get<double>(), target + 0.1) << e.dump();
  // The watch thread, descheduled by a loaded host (ctest -j on a GPU node),
  // may miss a step or two: the figure stands, and the window says so.
  const int steps = e.at("counter_steps").get<int>();
  EXPECT_GE(steps, energy::min_updates) << e.dump();
  EXPECT_EQ(e.contains("cut_short"), steps < energy::planned_updates) << e.dump();
  EXPECT_NEAR(e.at("average_power_W").get<double>(), 50, 1) << e.dump();
}

TEST_F(EnergyWindow, ACounterSteppingSlowerCutsTheWindowShortAndBelowTenGivesNoFigure) {
  for (const double slower : {1.15, 2.0}) {
    SteppingCounter c(0.01, 50);
    use(c.counter, 0.01, 0.05, 50);
    karma::Variant v;
    v.name = "kernel";
    v.run = [] { std::this_thread::sleep_for(std::chrono::microseconds(500)); };
    // Load that makes the counter step slower than at start-up.
    v.before_window = [&c, slower] { *c.interval = 0.01 * slower; };
    const nlohmann::json e = karma::energy_window(v, timed());
    const double target = energy::window_target(0.05, 0.01);
    EXPECT_LT(e.at("window_s").get<double>(), target + 0.05) << e.dump();
    const int steps = e.at("counter_steps").get<int>();
    EXPECT_LT(steps, energy::planned_updates) << e.dump();
    if (steps >= energy::min_updates) {
      EXPECT_EQ(e.at("status"), "measured") << e.dump();
      EXPECT_TRUE(contains(e.value("cut_short", ""), "of the 12 planned")) << e.dump();
    } else {
      EXPECT_EQ(e.at("status"), "unavailable") << e.dump();
      EXPECT_TRUE(contains(e.value("reason", ""), "fewer than the 10 a figure needs")) << e.dump();
    }
    if (slower == 2.0) {
      EXPECT_EQ(e.at("status"), "unavailable") << e.dump();
    }
  }
}

TEST(EnergyNextStep, ACounterThatNeverChangesTimesOut) {
  energy::Counter c;
  c.read = [](std::string&) { return std::optional<double>(5.0); };
  std::string why;
  const double start = energy::now_s();
  EXPECT_FALSE(energy::next_step(c, 0.05, why).has_value());
  EXPECT_GE(energy::now_s() - start, 0.05);
  EXPECT_TRUE(contains(why, "did not change")) << why;
}

TEST(EnergyNextStep, ReturnsTheReadingAfterTheChange) {
  const TestClock clock;
  energy::Counter c;
  c.now = clock.now();
  int reads = 0;
  c.read = [&reads](std::string&) { return std::optional<double>(++reads < 4 ? 1.0 : 2.5); };
  std::string why;
  const auto r = energy::next_step(c, 5.0, why);
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_EQ(r->joules, 2.5);
  EXPECT_EQ(reads, 4);
  // The middle of the bracket from the start of the third read, the last to
  // see 1.0, to the end of the fourth: the call's clock readings 5 and 8.
  EXPECT_NEAR(r->at_s, 6.5e-4, 1e-12);
}

// A reader preempted while it read the change (here, a read that stalls
// 30 ms) would date the window's edge 30 ms early: it waits for the next
// change instead, read without a stall.
TEST(EnergyNextStep, AChangeReadInAStallIsNotDated) {
  const TestClock clock;
  energy::Counter c;
  c.now = clock.now();
  int reads = 0;
  c.read = [&reads, clock](std::string&) {
    ++reads;
    if (reads == 4) clock.stall(0.03);
    return std::optional<double>(reads < 4 ? 1.0 : reads < 7 ? 2.0 : 3.0);
  };
  std::string why;
  const auto r = energy::next_step(c, 5.0, why);
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_EQ(r->joules, 3.0);
  EXPECT_EQ(r->changes, 2);
  EXPECT_EQ(reads, 7);
}

// Reads slower than max_bracket_s still date a change: the bracket is
// judged against the narrowest one without a change.
TEST(EnergyNextStep, SlowReadsStillDateAChange) {
  const TestClock clock;
  energy::Counter c;
  c.now = clock.now();
  int reads = 0;
  c.read = [&reads, clock](std::string&) {
    clock.stall(0.003);
    return std::optional<double>(++reads < 4 ? 1.0 : 2.0);
  };
  std::string why;
  const auto r = energy::next_step(c, 5.0, why);
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_EQ(r->joules, 2.0);
  EXPECT_EQ(reads, 4);
}

// Every change in a stall: at the timeout, the last of them rather than none.
TEST(EnergyNextStep, OnlyStalledChangesGiveTheLastAtTheTimeout) {
  const TestClock clock;
  energy::Counter c;
  c.now = clock.now();
  int reads = 0;
  c.read = [&reads, clock](std::string&) {
    ++reads;
    if (reads % 3 == 0) clock.stall(0.01);
    return std::optional<double>(reads / 3);
  };
  std::string why;
  const auto r = energy::next_step(c, 0.05, why);
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_GE(clock.seconds(), 0.05);
  EXPECT_EQ(r->joules, static_cast<double>(reads / 3));
}

TEST(EnergyNextStep, AFailedReadGivesItsReason) {
  energy::Counter c;
  c.read = [](std::string& why) -> std::optional<double> {
    why = "the counter went away";
    return std::nullopt;
  };
  std::string why;
  EXPECT_FALSE(energy::next_step(c, 1.0, why).has_value());
  EXPECT_EQ(why, "the counter went away");
}

}  // namespace karma_test_energy
