// What the run-time reports about the rank's device and about Kokkos, on
// whichever backend the tests were built for.
#include "karma/app.hpp"
#include "karma/system.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace karma_test_system {

using nlohmann::json;

constexpr bool gpu_build =
    !std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;

TEST(DescribeDevice, KindMatchesTheBuild) {
  const json d = karma::describe_device();
  EXPECT_EQ(d.at("kind"), gpu_build ? "gpu" : "host");
  EXPECT_EQ(d.at("execution_space"), Kokkos::DefaultExecutionSpace::name());
  EXPECT_FALSE(d.at("name").get<std::string>().empty());
  EXPECT_FALSE(d.at("vendor").get<std::string>().empty());
  EXPECT_GT(d.at("concurrency").get<long long>(), 0);
}

// Suites ending in OnGpu or OnHost run only there (karma_add_unit_tests).
TEST(DescribeDeviceOnGpu, GpuFields) {
  const json d = karma::describe_device();
  const int id = d.at("id").get<int>();
  EXPECT_EQ(id, karma::current_device_id());
  EXPECT_GE(id, 0);
  EXPECT_GE(d.at("visible_devices").get<int>(), 1);
  EXPECT_GT(d.at("memory_bytes").get<std::uint64_t>(), 0u);
  if (d.contains("free_memory_bytes")) {
    EXPECT_LE(d.at("free_memory_bytes").get<std::uint64_t>(), d.at("memory_bytes"));
  }
  EXPECT_GT(d.at("multiprocessors").get<int>(), 0);
  EXPECT_EQ(karma::device_multiprocessors(), d.at("multiprocessors").get<int>());
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(d.at("vendor"), "NVIDIA");
  EXPECT_EQ(d.at("architecture").get<std::string>().rfind("sm_", 0), 0u);
  EXPECT_EQ(d.at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
  EXPECT_EQ(d.at("pci_bus_id").get<std::string>().size(), 12u);  // 0000:3b:00.0
  EXPECT_EQ(d.at("warp_size"), 32);
  // A GPU node has NVML (the driver installs it): clocks and the power limit.
  const json& state = d.at("state_at_start");
  EXPECT_EQ(state.value("source", ""), "nvml") << state.dump();
  EXPECT_GT(state.value("sm_max_MHz", 0.0), 0) << state.dump();
  EXPECT_GT(state.value("power_limit_W", 0.0), 0) << state.dump();
#elif defined(KOKKOS_ENABLE_HIP)
  EXPECT_EQ(d.at("vendor"), "AMD");
  const auto architecture = d.at("architecture").get<std::string>();
  EXPECT_EQ(architecture.rfind("gfx", 0), 0u);
  EXPECT_EQ(d.at("target_id").get<std::string>().rfind(architecture, 0), 0u);
  EXPECT_EQ(d.at("pci_bus_id").get<std::string>().size(), 12u);
#endif
}

TEST(DescribeDeviceOnHost, HostFields) {
  const json d = karma::describe_device();
  EXPECT_GE(d.at("hardware_threads").get<unsigned>(), 1u);
  EXPECT_FALSE(d.contains("id"));
  EXPECT_EQ(karma::current_device_id(), -1);
  EXPECT_EQ(karma::device_multiprocessors(), 0);
  // Linux has /proc/meminfo.
  EXPECT_GT(d.at("memory_bytes").get<std::uint64_t>(), 0u);
  EXPECT_LE(d.at("free_memory_bytes").get<std::uint64_t>(), d.at("memory_bytes"));
}

TEST(VisibleDeviceCountOnHost, NoneInAHostBuild) {
  EXPECT_EQ(karma::visible_device_count(), 0);
  // The list narrows what the runtime sees; it cannot add devices.
  setenv("KOKKOS_VISIBLE_DEVICES", "0,1", 1);
  EXPECT_EQ(karma::visible_device_count(), 0);
  unsetenv("KOKKOS_VISIBLE_DEVICES");
}

TEST(VisibleDeviceCountOnGpu, AGpuBuildSeesItsDevice) {
  EXPECT_GE(karma::visible_device_count(), 1);
  EXPECT_GT(karma::visible_device_count(), karma::current_device_id());
}

// A CUDA build sets EAGER where the user left CUDA_MODULE_LOADING unset or
// empty, and keeps any value the user gave.
TEST(ModuleLoading, EagerOnlyWhereTheUserChoseNothing) {
  EXPECT_EQ(karma::module_loading_to_set(nullptr), "EAGER");
  EXPECT_EQ(karma::module_loading_to_set(""), "EAGER");
  EXPECT_FALSE(karma::module_loading_to_set("LAZY").has_value());
  EXPECT_FALSE(karma::module_loading_to_set("EAGER").has_value());
}

// What results record: the mode the process runs
// with and who chose it; nothing where it is unset. The test process never
// calls choose_module_loading, so a value here is the environment's.
TEST(ModuleLoading, RecordsTheModeAndWhoSetIt) {
  const char* before = std::getenv("CUDA_MODULE_LOADING");
  const std::string saved = before ? before : "";
  ::unsetenv("CUDA_MODULE_LOADING");
  EXPECT_TRUE(karma::describe_module_loading().is_null());
  ::setenv("CUDA_MODULE_LOADING", "LAZY", 1);
  EXPECT_EQ(karma::describe_module_loading(),
            (nlohmann::json{{"mode", "LAZY"}, {"set_by", "environment"}}));
  if (before)
    ::setenv("CUDA_MODULE_LOADING", saved.c_str(), 1);
  else
    ::unsetenv("CUDA_MODULE_LOADING");
}

TEST(AvailableMemory, SaysWhereItComesFrom) {
  const karma::MemoryInfo m = karma::available_memory();
  EXPECT_GT(m.free_bytes, 0u);
  if (gpu_build) {
    EXPECT_NE(m.source.find("device's free memory"), std::string::npos) << m.source;
  } else {
    EXPECT_EQ(m.source, "MemAvailable in /proc/meminfo");
  }
}

bool lists(const json& archs, const char* name) {
  return std::find(archs.begin(), archs.end(), name) != archs.end();
}

TEST(DescribeKokkos, ArchitectureListsWhatKokkosDefines) {
  const json archs = karma::describe_kokkos().at("architecture");
  ASSERT_TRUE(archs.is_array());
  for (const auto& a : archs) EXPECT_TRUE(a.is_string());
    // A sample of the table, one per kind of row.
#if defined(KOKKOS_ARCH_AMD_GFX90A)
  EXPECT_TRUE(lists(archs, "AMD_GFX90A"));
#else
  EXPECT_FALSE(lists(archs, "AMD_GFX90A"));
#endif
#if defined(KOKKOS_ARCH_HOPPER90)
  EXPECT_TRUE(lists(archs, "HOPPER90"));
#else
  EXPECT_FALSE(lists(archs, "HOPPER90"));
#endif
#if defined(KOKKOS_ARCH_AVX2)
  EXPECT_TRUE(lists(archs, "AVX2"));
#else
  EXPECT_FALSE(lists(archs, "AVX2"));
#endif
}

}  // namespace karma_test_system
