// Facts about the machine a rank runs on, for device selection and results.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace karma {

// GPUs this process can see (0 in a host-only build); known before Kokkos
// starts, so the node-local rank can choose among them.
int visible_device_count();
std::string hostname();
// Call after Kokkos has started.
nlohmann::json describe_device();
nlohmann::json describe_kokkos();
// The batch job this run belongs to (Slurm, PBS, ...), or null.
nlohmann::json describe_job();

}  // namespace karma
