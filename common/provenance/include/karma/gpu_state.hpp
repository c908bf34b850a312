// What a GPU unit is and how it ran: its clocks (now, at most, the
// applications'), power limit, persistence and ECC modes, board part number
// and VBIOS, and the counters that tell a run it was held back (time below
// the applications' clocks by cause) or that the memory erred (ECC errors).
// Read before the first kernel and after the last, so that the tools can name
// a run that was throttled or whose error counts grew. Units of one GPU model
// differ by board (part number) and by state; the results record both.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace karma {

// The state of `device`, as describe_device gives it: an NVIDIA GPU's from
// NVML, an AMD GPU's (clocks and power cap) from the amdgpu driver's sysfs
// files (KARMA_NVML_LIBRARY and KARMA_PCI_SYSFS_ROOT name others, for tests);
// what a source does not give is left out. {"reason": why} when there is no
// source.
nlohmann::json gpu_state(const nlohmann::json& device);

// NVML's answers for the GPU at `pci_bus_id` ("0000:3b:00.0") from `library`
// (libnvidia-ml.so.1): {source: "nvml", sm_MHz, memory_MHz, sm_max_MHz,
// memory_max_MHz, sm_applications_MHz, memory_applications_MHz,
// power_limit_W, persistence_mode, ecc_enabled, ecc_errors {corrected,
// uncorrected} (aggregate over the board's life), clocks_event_ns {power,
// thermal, sync_boost, board_limit, low_utilization, reliability,
// below_applications_clocks, below_base_clocks} (cumulative), board_part_number,
// vbios_version}; null and why when the library or the device is missing.
nlohmann::json nvml_state(const std::string& library, const std::string& pci_bus_id,
                          std::string& why);
// `device_dir`: the GPU's directory, e.g. /sys/bus/pci/devices/0000:c1:00.0.
nlohmann::json amdgpu_state(const std::string& device_dir, std::string& why);

}  // namespace karma
