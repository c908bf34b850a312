// What the run-time learns about the machine: devices, memory, Kokkos.
#include "karma/system.hpp"

#include "karma/app.hpp"

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace karma {

int visible_device_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}
}  // namespace

nlohmann::json describe_device() {
  nlohmann::json d;
  d["execution_space"] = Kokkos::DefaultExecutionSpace::name();
  d["concurrency"] = Kokkos::DefaultExecutionSpace().concurrency();
#if defined(KOKKOS_ENABLE_CUDA)
  int id = -1;
  cudaGetDevice(&id);
  cudaDeviceProp p{};
  if (id >= 0 && cudaGetDeviceProperties(&p, id) == cudaSuccess) {
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), id);
    d["kind"] = "gpu";
    d["id"] = id;
    d["name"] = p.name;
    d["pci_bus_id"] = bus;
    d["memory_bytes"] = static_cast<std::uint64_t>(p.totalGlobalMem);
    d["multiprocessors"] = p.multiProcessorCount;
    d["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    d["l2_cache_bytes"] = p.l2CacheSize;
    return d;
  }
#endif
  d["kind"] = "host";
  d["name"] = cpu_model();
  d["hardware_threads"] = std::thread::hardware_concurrency();
  return d;
}

MemoryInfo available_memory() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
    return {static_cast<std::uint64_t>(free_bytes), "the CUDA device's free memory"};
#endif
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return {kib * 1024, "MemAvailable in /proc/meminfo"};
  }
  // No way to know: do not refuse.
  return {std::numeric_limits<std::uint64_t>::max(), "unknown"};
}

namespace {
std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}
}  // namespace

nlohmann::json describe_kokkos() {
  nlohmann::json k;
  k["version"] = kokkos_version_string();
  k["default_execution_space"] = Kokkos::DefaultExecutionSpace::name();
  k["default_host_execution_space"] = Kokkos::DefaultHostExecutionSpace::name();
  auto backends = nlohmann::json::array();
#if defined(KOKKOS_ENABLE_SERIAL)
  backends.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  backends.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  backends.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  backends.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  backends.push_back("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  backends.push_back("SYCL");
#endif
  k["backends"] = backends;
  auto arch = nlohmann::json::array();
#if defined(KOKKOS_ARCH_HOPPER90)
  arch.push_back("HOPPER90");
#endif
#if defined(KOKKOS_ARCH_AMPERE80)
  arch.push_back("AMPERE80");
#endif
#if defined(KOKKOS_ARCH_VOLTA70)
  arch.push_back("VOLTA70");
#endif
#if defined(KOKKOS_ARCH_NATIVE)
  arch.push_back("NATIVE");
#endif
#if defined(KOKKOS_ARCH_AVX2)
  arch.push_back("AVX2");
#endif
#if defined(KOKKOS_ARCH_SKX)
  arch.push_back("SKX");
#endif
  k["architecture"] = arch;
  // From Kokkos 4.6 View is built on mdspan unless Kokkos was configured with
  // Kokkos_ENABLE_IMPL_VIEW_LEGACY; the mdspan one pads LayoutLeft and
  // LayoutRight, so even arrays with static extents have run-time strides
  // in Kokkos' own access (karma::Array computes its own: array.hpp).
#if KOKKOS_VERSION >= 40600 && !defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY)
  k["view"] = "mdspan";
#else
  k["view"] = "legacy";
#endif
  k["concurrency"] = Kokkos::DefaultExecutionSpace().concurrency();
  std::ostringstream config;
  Kokkos::print_configuration(config, false);
  k["configuration"] = config.str();
  return k;
}

nlohmann::json describe_job() {
  // The schedulers a cluster user is likely to meet, by their job-id variable.
  const std::pair<const char*, const char*> schedulers[] = {
      {"slurm", "SLURM_JOB_ID"}, {"pbs", "PBS_JOBID"},   {"lsf", "LSB_JOBID"},
      {"flux", "FLUX_JOB_ID"},   {"sge", "JOB_ID"},      {"cobalt", "COBALT_JOBID"}};
  for (const auto& [scheduler, variable] : schedulers) {
    if (const char* id = std::getenv(variable)) {
      return {{"scheduler", scheduler}, {"id", id}};
    }
  }
  return nullptr;
}

}  // namespace karma
