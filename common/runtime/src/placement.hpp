// Where each rank runs and how ranks exchange device data (placement.cpp):
// run_main's choices between the command line and the mini-app's run.
#pragma once

#include "karma/app.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace karma::detail {

// One rank per device: appends --kokkos-device-id for the node-local rank to
// `kokkos_args`, unless the user chose a device through Kokkos' own flags.
void choose_device(std::vector<std::string>& kokkos_args);

// Collective: every rank's host and device, the same on every rank.
nlohmann::json gather_ranks();

// Collective: each GPU's state after the run (gpu_state.hpp) as its
// device's `state_at_end` in `ranks`, beside `state_at_start`, so that the
// tools see what the run's clock events and ECC errors grew by.
void record_state_at_end(nlohmann::json& ranks);

// GPUs that more than one rank runs on: [{host, uuid, ranks}], of `ranks`
// (gather_ranks()).
nlohmann::json shared_devices(const nlohmann::json& ranks);

// Collective: the path of device data between ranks (run.comm), after the
// device is chosen; a path the machine lacks is the deck's error.
void choose_comm_path(const Context& context, bool devices_shared);

}  // namespace karma::detail
