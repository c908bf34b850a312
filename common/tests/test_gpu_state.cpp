#include "karma/gpu_state.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace karma_test_gpu_state {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(GpuState, WithoutASourceSaysWhy) {
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
TEST(GpuState, NvmlGivesTheUnitsSettingsIdentityAndCounters) {
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
TEST(GpuState, WhatNvmlDoesNotAnswerIsLeftOut) {
  ASSERT_EQ(setenv("KARMA_FAKE_NVML_PARTIAL", "1", 1), 0);
  std::string why;
  const auto j = karma::nvml_state(KARMA_FAKE_NVML, "0000:3b:00.0", why);
  unsetenv("KARMA_FAKE_NVML_PARTIAL");
  ASSERT_FALSE(j.is_null()) << why;
  EXPECT_EQ(j.dump(), R"({"memory_MHz":3201,"memory_max_MHz":3201,"power_limit_W":700.0,)"
                      R"("sm_MHz":1755,"sm_max_MHz":1980,"source":"nvml"})");
}

}  // namespace karma_test_gpu_state
