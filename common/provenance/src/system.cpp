// What the run-time learns about the machine: devices, memory, Kokkos.
#include "karma/system.hpp"

#include "karma/build_info.hpp"
#include "karma/comm.hpp"
#include "karma/energy.hpp"
#include "karma/gpu_state.hpp"

#include <Kokkos_Core.hpp>

// Kokkos enables at most one of these device backends.
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

namespace karma {

namespace {

// Kokkos 4.0 took HIP out of Experimental, 4.5 SYCL.
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
using KokkosHip = Kokkos::HIP;
#else
using KokkosHip = Kokkos::Experimental::HIP;
#endif
#endif

#if defined(KOKKOS_ENABLE_SYCL)
sycl::device kokkos_sycl_device() {
#if KOKKOS_VERSION >= 40500
  return Kokkos::SYCL().sycl_queue().get_device();
#elif KOKKOS_VERSION >= 40000
  return Kokkos::Experimental::SYCL().sycl_queue().get_device();
#else
  // 3.x instances expose no queue; their context holds the one device.
  return Kokkos::Experimental::SYCL().sycl_context().get_devices().front();
#endif
}
#endif

// The GPU runtime's own count, before Kokkos starts.
int runtime_device_count() {
  int n = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDeviceCount(&n) != hipSuccess) return 0;
#elif defined(KOKKOS_ENABLE_SYCL)
  // Kokkos' SYCL backend chooses among the GPUs.
  n = static_cast<int>(sycl::device::get_devices(sycl::info::device_type::gpu).size());
#endif
  return n;
}

// "0000:3b:00.0", the form lspci and /sys/bus/pci use.
[[maybe_unused]] std::string pci_address(int domain, int bus, int device) {
  char text[32] = {};
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.0", domain, bus, device);
  return text;
}

// 16 bytes as 8-4-4-4-12 hex digits.
[[maybe_unused]] std::string uuid_text(const unsigned char* bytes) {
  std::string text;
  char hex[3] = {};
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    std::snprintf(hex, sizeof(hex), "%02x", bytes[i]);
    text += hex;
  }
  return text;
}

// The GPU kernel driver's release, as nvidia-smi's "Driver Version" (580.159.04)
// or the amdgpu module's; the runtimes report only their API version.
std::string kernel_driver_version(const std::string& vendor) {
  if (vendor == "NVIDIA") {
    // "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04  ..."
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line, word;
    std::getline(in, line);
    const auto at = line.find("Kernel Module");
    if (at == std::string::npos) return {};
    std::istringstream words(line.substr(at));
    while (words >> word)
      if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos)
        return word;
    return {};
  }
  if (vendor == "AMD") {
    std::ifstream in("/sys/module/amdgpu/version");
    std::string version;
    in >> version;
    return version;
  }
  return {};
}

// What a GPU rank records about its device; empty or zero: not known.
struct GpuFacts {
  int id = -1;
  std::string vendor, name, architecture, target_id, compute_capability;
  // driver_api_version: the CUDA or HIP version the driver supports (CUDA's
  // cudaDriverGetVersion); driver_version: the driver's own release where
  // the runtime gives it (SYCL), else read from the kernel module.
  std::string pci_bus_id, uuid, driver_version, driver_api_version, runtime_version;
  std::uint64_t memory_bytes = 0;
  int multiprocessors = 0, l2_cache_bytes = 0, warp_size = 0;
  // Peak clocks in kHz and the memory bus in bits, as the runtime reports them.
  int clock_khz = 0, memory_clock_khz = 0, memory_bus_bits = 0;
};

#if defined(KOKKOS_ENABLE_CUDA)
// CUDA encodes 12.4 as 12040.
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

int kokkos_device_ordinal() { return Kokkos::Cuda().cuda_device(); }

std::optional<GpuFacts> gpu_facts() {
  // Kokkos read the properties of the device it chose when it started; the
  // instance outlives the reference (GCC 13 warns of one to a temporary's).
  const Kokkos::Cuda cuda;
  const cudaDeviceProp& p = cuda.cuda_device_prop();
  GpuFacts f;
  f.id = kokkos_device_ordinal();
  f.vendor = "NVIDIA";
  f.name = p.name;
  f.architecture = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  f.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  f.pci_bus_id = pci_address(p.pciDomainID, p.pciBusID, p.pciDeviceID);
#if CUDART_VERSION >= 10000
  // nvidia-smi's form.
  f.uuid = "GPU-" + uuid_text(reinterpret_cast<const unsigned char*>(p.uuid.bytes));
#endif
  f.memory_bytes = static_cast<std::uint64_t>(p.totalGlobalMem);
  f.multiprocessors = p.multiProcessorCount;
  f.l2_cache_bytes = p.l2CacheSize;
  f.warp_size = p.warpSize;
  // Attributes: CUDA 13 dropped the clock fields of cudaDeviceProp.
  cudaDeviceGetAttribute(&f.clock_khz, cudaDevAttrClockRate, f.id);
  cudaDeviceGetAttribute(&f.memory_clock_khz, cudaDevAttrMemoryClockRate, f.id);
  cudaDeviceGetAttribute(&f.memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, f.id);
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) f.driver_api_version = cuda_version_text(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) f.runtime_version = cuda_version_text(v);
  return f;
}

std::optional<std::uint64_t> device_free_bytes() {
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return std::nullopt;
  return free_bytes;
}
constexpr const char* device_free_source = "the CUDA device's free memory";

#elif defined(KOKKOS_ENABLE_HIP)
// HIP_VERSION's encoding: major * 10^7 + minor * 10^5 + patch.
std::string hip_version_text(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." +
         std::to_string(v % 100000);
}

// ROCm fills the 16 bytes with the agent's unique id as hex text (rocminfo
// prints it as GPU-<that text>); anything else is shown as a UUID.
std::string hip_uuid_text(const hipUUID& uuid) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(uuid.bytes);
  bool text = true, zero = true;
  for (int i = 0; i < 16; ++i) {
    text &= std::isxdigit(bytes[i]) != 0;
    zero &= bytes[i] == 0;
  }
  if (zero) return "";
  return "GPU-" + (text ? std::string(uuid.bytes, 16) : uuid_text(bytes));
}

int kokkos_device_ordinal() { return KokkosHip().hip_device(); }

std::optional<GpuFacts> gpu_facts() {
  // Kokkos read the properties of the device it chose when it started.
  const hipDeviceProp_t& p = KokkosHip::hip_device_prop();
  GpuFacts f;
  f.id = kokkos_device_ordinal();
  f.vendor = "AMD";
  f.name = p.name;
  // gcnArchName is a target id, "gfx90a:sramecc+:xnack-": the processor, then
  // the features the code objects must match.
  f.target_id = p.gcnArchName;
  f.architecture = f.target_id.substr(0, f.target_id.find(':'));
  f.pci_bus_id = pci_address(p.pciDomainID, p.pciBusID, p.pciDeviceID);
  hipDevice_t device{};
  hipUUID uuid{};
  if (hipDeviceGet(&device, f.id) == hipSuccess && hipDeviceGetUuid(&uuid, device) == hipSuccess)
    f.uuid = hip_uuid_text(uuid);
  f.memory_bytes = static_cast<std::uint64_t>(p.totalGlobalMem);
  f.multiprocessors = p.multiProcessorCount;  // compute units
  f.l2_cache_bytes = p.l2CacheSize;
  f.warp_size = p.warpSize;  // the wavefront: 64 on CDNA, 32 on RDNA
  f.clock_khz = p.clockRate;
  f.memory_clock_khz = p.memoryClockRate;
  f.memory_bus_bits = p.memoryBusWidth;
  int v = 0;
  // ROCm's driver version is a plain number, its runtime's HIP_VERSION-coded.
  if (hipDriverGetVersion(&v) == hipSuccess) f.driver_api_version = std::to_string(v);
  if (hipRuntimeGetVersion(&v) == hipSuccess) f.runtime_version = hip_version_text(v);
  return f;
}

std::optional<std::uint64_t> device_free_bytes() {
  std::size_t free_bytes = 0, total = 0;
  if (hipMemGetInfo(&free_bytes, &total) != hipSuccess) return std::nullopt;
  return free_bytes;
}
constexpr const char* device_free_source = "the HIP device's free memory";

#elif defined(KOKKOS_ENABLE_SYCL)
// Not compiled in this project's builds (no SYCL compiler on its machines).
int kokkos_device_ordinal() {
#if KOKKOS_VERSION >= 40100
  return Kokkos::device_id();
#else
  // Its place among the GPUs, as Kokkos numbers them.
  const auto gpus = sycl::device::get_devices(sycl::info::device_type::gpu);
  const auto it = std::find(gpus.begin(), gpus.end(), kokkos_sycl_device());
  return it == gpus.end() ? -1 : static_cast<int>(it - gpus.begin());
#endif
}

std::optional<GpuFacts> gpu_facts() {
  const sycl::device dev = kokkos_sycl_device();
  GpuFacts f;
  f.id = kokkos_device_ordinal();
  f.vendor = dev.get_info<sycl::info::device::vendor>();
  f.name = dev.get_info<sycl::info::device::name>();
  f.driver_version = dev.get_info<sycl::info::device::driver_version>();
  f.memory_bytes = dev.get_info<sycl::info::device::global_mem_size>();
  f.multiprocessors = static_cast<int>(dev.get_info<sycl::info::device::max_compute_units>());
  f.l2_cache_bytes = static_cast<int>(dev.get_info<sycl::info::device::global_mem_cache_size>());
#if defined(SYCL_EXT_INTEL_DEVICE_INFO)
  // Intel's extension; its aspects say what this device answers.
  if (dev.has(sycl::aspect::ext_intel_pci_address))
    f.pci_bus_id = dev.get_info<sycl::ext::intel::info::device::pci_address>();
#if SYCL_EXT_INTEL_DEVICE_INFO >= 2
  if (dev.has(sycl::aspect::ext_intel_device_info_uuid)) {
    const auto uuid = dev.get_info<sycl::ext::intel::info::device::uuid>();
    f.uuid = uuid_text(uuid.data());
  }
#endif
#endif
  return f;
}

std::optional<std::uint64_t> device_free_bytes() {
#if defined(SYCL_EXT_INTEL_DEVICE_INFO) && SYCL_EXT_INTEL_DEVICE_INFO >= 4
  const sycl::device dev = kokkos_sycl_device();
  if (dev.has(sycl::aspect::ext_intel_free_memory))
    return dev.get_info<sycl::ext::intel::info::device::free_memory>();
#endif
  return std::nullopt;
}
constexpr const char* device_free_source = "the SYCL device's free memory";

#else
int kokkos_device_ordinal() { return -1; }
std::optional<GpuFacts> gpu_facts() { return std::nullopt; }
std::optional<std::uint64_t> device_free_bytes() { return std::nullopt; }
constexpr const char* device_free_source = "";
#endif

// The value of a "Key: value kB" line of /proc/meminfo, in bytes.
std::optional<std::uint64_t> meminfo_bytes(const std::string& wanted) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == wanted) return kib * 1024;
  }
  return std::nullopt;
}

// A field of the first processor in /proc/cpuinfo.
std::string cpuinfo_field(const std::string& field, const std::string& otherwise) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return otherwise;
}

}  // namespace

int visible_device_count() {
  const int devices = runtime_device_count();
#if KOKKOS_VERSION >= 30700
  // Kokkos (3.7 on) numbers --kokkos-device-id among these devices only.
  if (const char* list = std::getenv("KOKKOS_VISIBLE_DEVICES"); list && devices > 0) {
    int listed = 0;
    std::istringstream in(list);
    for (std::string id; std::getline(in, id, ',');) listed += !id.empty();
    return std::min(listed, devices);
  }
#endif
  return devices;
}

int current_device_id() { return kokkos_device_ordinal(); }

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// Floating-point operations per cycle of one SM or compute unit (an FMA
// counts two), from the vendors' published peaks; no query gives them.
struct PerCycle {
  const char* architecture;
  int fp64, fp32;
};
constexpr PerCycle per_cycle[] = {
    {"sm_60", 64, 128},   {"sm_70", 64, 128},   {"sm_80", 64, 128},   {"sm_90", 128, 256},
    {"sm_100", 128, 256}, {"gfx90a", 128, 256}, {"gfx942", 128, 256},
};

// Peak memory bandwidth (double data rate over the bus) and FLOP/s of a GPU.
void put_peaks(nlohmann::json& d, const GpuFacts& f) {
  if (f.memory_clock_khz > 0 && f.memory_bus_bits > 0) {
    d["peak_memory_bandwidth_GBps"] = 2.0 * f.memory_clock_khz * 1e3 * f.memory_bus_bits / 8 * 1e-9;
    d["peak_memory_bandwidth_from"] =
        "2 x memory clock " + std::to_string(f.memory_clock_khz / 1000) + " MHz x " +
        std::to_string(f.memory_bus_bits) + "-bit bus, as the runtime reports them";
  } else {
    d["peak_memory_bandwidth_from"] = "unknown: the runtime gave no memory clock or bus width";
  }
  for (const auto& p : per_cycle)
    if (f.architecture == p.architecture && f.clock_khz > 0) {
      const double cycles = 1e3 * f.clock_khz * f.multiprocessors;
      d["peak_GFLOPs"] = {{"double", cycles * p.fp64 * 1e-9}, {"float", cycles * p.fp32 * 1e-9}};
      d["peak_GFLOPs_from"] = std::to_string(f.multiprocessors) + " SMs or CUs x " +
                              std::to_string(f.clock_khz / 1000) + " MHz x FLOP per cycle of " +
                              f.architecture + " (" + std::to_string(p.fp64) + " double, " +
                              std::to_string(p.fp32) + " float)";
      return;
    }
  d["peak_GFLOPs_from"] = "unknown: no FLOP-per-cycle figure for " + f.architecture;
}

namespace {
bool module_loading_set_by_karma = false;
}  // namespace

std::optional<std::string> module_loading_to_set(const char* current) {
  if (current == nullptr || *current == '\0') return std::string("EAGER");
  return std::nullopt;
}

void choose_module_loading() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (const auto value = module_loading_to_set(std::getenv("CUDA_MODULE_LOADING"))) {
    ::setenv("CUDA_MODULE_LOADING", value->c_str(), 1);
    module_loading_set_by_karma = true;
  }
#endif
}

nlohmann::json describe_module_loading() {
  const char* mode = std::getenv("CUDA_MODULE_LOADING");
  if (mode == nullptr) return nullptr;
  return {{"mode", mode}, {"set_by", module_loading_set_by_karma ? "karma" : "environment"}};
}

int device_multiprocessors() {
  const auto f = gpu_facts();
  return f ? f->multiprocessors : 0;
}

nlohmann::json describe_device() {
  nlohmann::json d;
  d["execution_space"] = Kokkos::DefaultExecutionSpace::name();
  d["concurrency"] = Kokkos::DefaultExecutionSpace().concurrency();
  if (const auto f = gpu_facts()) {
    d["kind"] = "gpu";
    d["vendor"] = f->vendor;
    d["id"] = f->id;
    d["name"] = f->name;
#if KOKKOS_VERSION >= 40300
    d["visible_devices"] = Kokkos::num_devices();
#else
    d["visible_devices"] = visible_device_count();
#endif
    // Only what this backend and runtime answered.
    const auto put_known = [&d](const char* key, const std::string& value) {
      if (!value.empty()) d[key] = value;
    };
    put_known("architecture", f->architecture);
    put_known("target_id", f->target_id);
    put_known("compute_capability", f->compute_capability);
    put_known("pci_bus_id", f->pci_bus_id);
    put_known("uuid", f->uuid);
    put_known("driver_version",
              f->driver_version.empty() ? kernel_driver_version(f->vendor) : f->driver_version);
    put_known("driver_api_version", f->driver_api_version);
    put_known("runtime_version", f->runtime_version);
    d["memory_bytes"] = f->memory_bytes;
    if (const auto free_bytes = device_free_bytes()) d["free_memory_bytes"] = *free_bytes;
    d["multiprocessors"] = f->multiprocessors;
    d["l2_cache_bytes"] = f->l2_cache_bytes;
    if (f->warp_size > 0) d["warp_size"] = f->warp_size;
    put_peaks(d, *f);
#if defined(KOKKOS_ENABLE_CUDA)
    if (auto loading = describe_module_loading(); !loading.is_null())
      d["module_loading"] = std::move(loading);
#endif
    // The unit before any kernel runs (gpu_state.hpp): with the driver
    // version, what tells a throttled, capped or erring GPU and its board.
    d["state_at_start"] = gpu_state(d);
    return d;
  }
  d["kind"] = "host";
  d["name"] = cpuinfo_field("model name", "unknown CPU");
  d["vendor"] = cpuinfo_field("vendor_id", "unknown");
  d["hardware_threads"] = std::thread::hardware_concurrency();
  if (const auto total = meminfo_bytes("MemTotal:")) d["memory_bytes"] = *total;
  if (const auto free_bytes = meminfo_bytes("MemAvailable:")) d["free_memory_bytes"] = *free_bytes;
  d["peak_memory_bandwidth_from"] =
      "unknown: a host reports its memory's channels and clock only to root (DMI tables)";
  d["peak_GFLOPs_from"] = "unknown: a host reports no FLOP per cycle of its cores";
  return d;
}

MemoryInfo available_memory() {
  if (const auto free_bytes = device_free_bytes()) return {*free_bytes, device_free_source};
  if (const auto free_bytes = meminfo_bytes("MemAvailable:"))
    return {*free_bytes, "MemAvailable in /proc/meminfo"};
  // No way to know: do not refuse.
  return {std::numeric_limits<std::uint64_t>::max(), "unknown"};
}

std::string kokkos_version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

namespace {

// Kokkos' configuration header defines KOKKOS_ARCH_<name> (empty) for each
// architecture it was built for. Stringizing the macro after expansion gives
// its value ("") where it is defined and its own name where it is not, so one
// row per architecture replaces an #if ladder.
#define KARMA_STRINGIZE(x) #x
#define KARMA_EXPAND_AND_STRINGIZE(x) KARMA_STRINGIZE(x)
#define KARMA_KOKKOS_ARCH(name) \
  { #name, KARMA_EXPAND_AND_STRINGIZE(KOKKOS_ARCH_##name) }

struct KokkosArch {
  const char* name;
  const char* expansion;  // "KOKKOS_ARCH_<name>" when not defined
  bool defined() const { return std::string("KOKKOS_ARCH_") + name != expansion; }
};

// Those of Kokkos 3.4.01 and 4.6.01, the specific ones only: the families
// (AMPERE, VEGA, ...) and deprecated aliases (VEGA90A, NAVI1030) repeat them.
constexpr KokkosArch kokkos_archs[] = {
    // Host.
    KARMA_KOKKOS_ARCH(SSE42), KARMA_KOKKOS_ARCH(AVX), KARMA_KOKKOS_ARCH(AVX2),
    KARMA_KOKKOS_ARCH(AMD_AVX2), KARMA_KOKKOS_ARCH(AVX512XEON), KARMA_KOKKOS_ARCH(AVX512MIC),
    KARMA_KOKKOS_ARCH(KNC), KARMA_KOKKOS_ARCH(AMD_ZEN), KARMA_KOKKOS_ARCH(AMD_ZEN2),
    KARMA_KOKKOS_ARCH(AMD_ZEN3), KARMA_KOKKOS_ARCH(AMD_ZEN4), KARMA_KOKKOS_ARCH(ARMV80),
    KARMA_KOKKOS_ARCH(ARMV81), KARMA_KOKKOS_ARCH(ARMV8_THUNDERX),
    KARMA_KOKKOS_ARCH(ARMV8_THUNDERX2), KARMA_KOKKOS_ARCH(A64FX), KARMA_KOKKOS_ARCH(ARMV9_GRACE),
    KARMA_KOKKOS_ARCH(ARM_NEON), KARMA_KOKKOS_ARCH(POWER7), KARMA_KOKKOS_ARCH(POWER8),
    KARMA_KOKKOS_ARCH(POWER9), KARMA_KOKKOS_ARCH(RISCV_SG2042), KARMA_KOKKOS_ARCH(RISCV_RVA22V),
    // NVIDIA GPUs.
    KARMA_KOKKOS_ARCH(KEPLER30), KARMA_KOKKOS_ARCH(KEPLER32), KARMA_KOKKOS_ARCH(KEPLER35),
    KARMA_KOKKOS_ARCH(KEPLER37), KARMA_KOKKOS_ARCH(MAXWELL50), KARMA_KOKKOS_ARCH(MAXWELL52),
    KARMA_KOKKOS_ARCH(MAXWELL53), KARMA_KOKKOS_ARCH(PASCAL60), KARMA_KOKKOS_ARCH(PASCAL61),
    KARMA_KOKKOS_ARCH(VOLTA70), KARMA_KOKKOS_ARCH(VOLTA72), KARMA_KOKKOS_ARCH(TURING75),
    KARMA_KOKKOS_ARCH(AMPERE80), KARMA_KOKKOS_ARCH(AMPERE86), KARMA_KOKKOS_ARCH(ADA89),
    KARMA_KOKKOS_ARCH(HOPPER90), KARMA_KOKKOS_ARCH(BLACKWELL100), KARMA_KOKKOS_ARCH(BLACKWELL120),
    // AMD GPUs.
    KARMA_KOKKOS_ARCH(AMD_GFX906), KARMA_KOKKOS_ARCH(AMD_GFX908), KARMA_KOKKOS_ARCH(AMD_GFX90A),
    KARMA_KOKKOS_ARCH(AMD_GFX940), KARMA_KOKKOS_ARCH(AMD_GFX942), KARMA_KOKKOS_ARCH(AMD_GFX942_APU),
    KARMA_KOKKOS_ARCH(AMD_GFX1030), KARMA_KOKKOS_ARCH(AMD_GFX1100), KARMA_KOKKOS_ARCH(AMD_GFX1103),
    // Intel GPUs.
    KARMA_KOKKOS_ARCH(INTEL_GEN), KARMA_KOKKOS_ARCH(INTEL_DG1), KARMA_KOKKOS_ARCH(INTEL_GEN9),
    KARMA_KOKKOS_ARCH(INTEL_GEN11), KARMA_KOKKOS_ARCH(INTEL_GEN12LP), KARMA_KOKKOS_ARCH(INTEL_XEHP),
    KARMA_KOKKOS_ARCH(INTEL_PVC)};

#undef KARMA_KOKKOS_ARCH
#undef KARMA_EXPAND_AND_STRINGIZE
#undef KARMA_STRINGIZE
}  // namespace

nlohmann::json kokkos_build() {
  nlohmann::json k;
  k["version"] = kokkos_version_string();
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
  for (const auto& a : kokkos_archs)
    if (a.defined()) arch.push_back(a.name);
  k["architecture"] = arch;
  return k;
}

std::string version_line(const std::string& executable) {
  const nlohmann::json k = kokkos_build();
  auto joined = [](const nlohmann::json& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n.get<std::string>();
    return s.empty() ? std::string("none") : s;
  };
  std::string mpi = comm::library_version();
  std::replace(mpi.begin(), mpi.end(), '\n', ' ');
  return executable + " " + build_info::version + " (git " + build_info::git_describe +
         "), Kokkos " + k["version"].get<std::string>() + " (" + joined(k["backends"]) +
         "; architecture " + joined(k["architecture"]) + "), compiler " + build_info::compiler +
         ", MPI " + mpi;
}

nlohmann::json describe_kokkos() {
  nlohmann::json k = kokkos_build();
  k["default_execution_space"] = Kokkos::DefaultExecutionSpace::name();
  k["default_host_execution_space"] = Kokkos::DefaultHostExecutionSpace::name();
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
      {"slurm", "SLURM_JOB_ID"}, {"pbs", "PBS_JOBID"}, {"lsf", "LSB_JOBID"},
      {"flux", "FLUX_JOB_ID"},   {"sge", "JOB_ID"},    {"cobalt", "COBALT_JOBID"}};
  for (const auto& [scheduler, variable] : schedulers) {
    if (const char* id = std::getenv(variable)) {
      return {{"scheduler", scheduler}, {"id", id}};
    }
  }
  return nullptr;
}

}  // namespace karma
