#include "placement.hpp"

#include "karma/comm.hpp"
#include "karma/gpu_state.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <map>

namespace karma::detail {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

// The --kokkos-device-id added here would override a choice made through
// Kokkos' own flags (Kokkos before 4.3 also reads --kokkos-device and
// --kokkos-num-devices or --kokkos-ndevices).
void choose_device(std::vector<std::string>& kokkos_args) {
  const int devices = visible_device_count();
  bool user_chose_device = false;
  for (const auto& a : kokkos_args)
    user_chose_device |=
        starts_with(a, "--kokkos-device") || starts_with(a, "--kokkos-map-device-id-by") ||
        starts_with(a, "--kokkos-num-devices") || starts_with(a, "--kokkos-ndevices");
  if (devices > 0 && !user_chose_device)
    kokkos_args.push_back("--kokkos-device-id=" + std::to_string(comm::local_rank() % devices));
}

nlohmann::json gather_ranks() {
  nlohmann::json me = {{"rank", comm::rank()},
                       {"host", hostname()},
                       {"local_rank", comm::local_rank()},
                       {"local_size", comm::local_size()},
                       {"device", describe_device()}};
  return allgather_json(me);
}

void record_state_at_end(nlohmann::json& ranks) {
  const nlohmann::json& mine = ranks[static_cast<std::size_t>(comm::rank())]["device"];
  const nlohmann::json state = mine.value("kind", "") == "gpu" ? gpu_state(mine) : nlohmann::json();
  const nlohmann::json all = allgather_json(state);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].is_null()) ranks[r]["device"]["state_at_end"] = all[r];
}

// The suite's rule is one rank a device; more ranks than devices on a node
// share them.
nlohmann::json shared_devices(const nlohmann::json& ranks) {
  std::map<std::string, nlohmann::json> on;
  for (const auto& r : ranks) {
    const nlohmann::json& d = r["device"];
    if (d.value("kind", "") != "gpu") continue;
    const std::string id =
        d.value("uuid", d.value("pci_bus_id", std::to_string(d.value("id", -1))));
    auto& entry = on[r["host"].get<std::string>() + " " + id];
    if (entry.is_null())
      entry = {{"host", r["host"]}, {"uuid", id}, {"ranks", nlohmann::json::array()}};
    entry["ranks"].push_back(r["rank"]);
  }
  auto shared = nlohmann::json::array();
  for (const auto& [key, entry] : on)
    if (entry["ranks"].size() > 1) shared.push_back(entry);
  return shared;
}

void choose_comm_path(const Context& context, bool devices_shared) {
  constexpr bool device_memory =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                  Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  void* stream = nullptr;
#if defined(KOKKOS_ENABLE_CUDA)
  stream = Kokkos::DefaultExecutionSpace().cuda_stream();
#endif
  const comm::PathChoice c =
      comm::choose_path(context.run.comm, device_memory, devices_shared, stream);
  if (!c.available) context.deck.fail("run.comm", c.why);
  if (context.verbose() && comm::size() > 1)
    std::printf("  data between ranks: %s (%s)\n", c.name.c_str(), c.why.c_str());
}

}  // namespace karma::detail
