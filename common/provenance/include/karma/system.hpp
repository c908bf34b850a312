// Facts about the machine a rank runs on, for device selection and results.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace karma {

// GPUs this process can see (0 in a host-only build); asks the GPU runtime,
// not Kokkos, so it is known before Kokkos starts and the node-local rank can
// choose among them. Honours KOKKOS_VISIBLE_DEVICES as Kokkos does.
int visible_device_count();
std::string hostname();
// As Kokkos prints it and the results record it, e.g. "4.6.1".
std::string kokkos_version_string();
// What Kokkos was built with, known before it starts: version, backends and
// architecture (results' `kokkos`, which describe_kokkos completes).
nlohmann::json kokkos_build();
// One line for --version: the suite's version and git description, Kokkos'
// version, backends and architecture, the compiler and the MPI library, from
// the facts the results record; it starts neither MPI nor the device.
std::string version_line(const std::string& executable);
// CUDA's module loading, chosen before anything starts the CUDA runtime.
// Lazily (CUDA's default from 12.2) a module is loaded when one of its
// kernels first runs, in between the mini-app's allocations, so the kernels
// that ran before an allocation move where the driver places it, and a
// kernel's time with it (results/campaigns/h100).
// Eagerly, every module is loaded at start-up. CUDA builds set
// CUDA_MODULE_LOADING=EAGER where the user left it unset or empty, and keep
// any value the user gave.
void choose_module_loading();
// The value to set for the user's `current` one (null: unset): EAGER where
// it is unset or empty, nothing where the user chose.
std::optional<std::string> module_loading_to_set(const char* current);
// CUDA_MODULE_LOADING as the process runs with it, {mode, set_by: karma or
// environment}; null where it is unset.
nlohmann::json describe_module_loading();
// Call after Kokkos has started.
// The GPU runtime's number for the device Kokkos runs on; -1 for the host.
int current_device_id();
// The multiprocessors (SMs or compute units) of the device Kokkos runs on,
// as the results record them; 0 for the host.
int device_multiprocessors();
// Free memory of the device this rank runs on: MemAvailable for the host,
// the GPU runtime's (CUDA, HIP, SYCL) free memory for a GPU. `source` says
// which.
struct MemoryInfo {
  std::uint64_t free_bytes = 0;
  std::string source;
};
MemoryInfo available_memory();

// The rank's device: docs/results-format.md, `ranks[].device`.
nlohmann::json describe_device();
nlohmann::json describe_kokkos();
// The batch job this run belongs to (Slurm, PBS, ...), or null.
nlohmann::json describe_job();

}  // namespace karma
