// Facts about the machine a rank runs on, for device selection and results.
#pragma once

#include <nlohmann/json.hpp>

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
// Call after Kokkos has started.
// The GPU runtime's number for the device Kokkos runs on; -1 for the host.
int current_device_id();
// The rank's device: docs/results-format.md, `ranks[].device`.
nlohmann::json describe_device();
nlohmann::json describe_kokkos();
// The batch job this run belongs to (Slurm, PBS, ...), or null.
nlohmann::json describe_job();

}  // namespace karma
