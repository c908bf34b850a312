// What a partitioned run records of its split, its ghosts and each rank's
// time (README "Partitioned runs"), and the line it prints.
#pragma once

#include "report/contact_report.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/timing.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace karma::contact {

// Collective: one value of every rank, in rank order.
inline std::vector<double> per_rank(double v) {
  return allgather_json(v).get<std::vector<double>>();
}

// Collective: a step's ghosts, over the ranks (payload: id and box, 28 B a ghost).
inline nlohmann::json ghost_step_json(const Ghosts& g) {
  const std::int64_t received = g.received;
  const std::int64_t total = comm::sum(received);
  return {{"received_total", total},
          {"received_min", comm::min(received)},
          {"received_max", comm::max(received)},
          {"bytes", total * ghost_ints * static_cast<std::int64_t>(sizeof(int))}};
}

// Collective: what a partitioned run records of its split, its ghosts and
// each rank's own time, from which scaling efficiencies are computed
// (README "Partitioned runs").
inline nlohmann::json decomposition_json(const Partition& p, const KernelTimer& phases,
                                         const std::vector<NeighbourStorage>& storages,
                                         const Tallies& tally, double steps) {
  auto own_total = [&](const std::string& name) {
    const auto& v = phases.samples(name);
    return std::accumulate(v.begin(), v.end(), 0.0);
  };
  // Each rank's own time of each phase per step, named as in the rebuild
  // kernels' `phases`.
  double build = 0;
  std::vector<double> exchange;
  nlohmann::json phase_per_rank = nlohmann::json::object();
  for (const auto& st : storages) {
    for (const PhaseName& name : phase_names(st, true)) {
      const double own = own_total(st.name + "." + name.timed);
      build += own;
      phase_per_rank[st.name][name.shown] = per_rank(own / steps);
    }
    const std::vector<double> e = slowest(phases, st.name + ".ghost_exchange");
    exchange.insert(exchange.end(), e.begin(), e.end());
  }
  const std::vector<double> build_per_rank = per_rank(build);
  std::vector<double> step_per_rank;
  for (double b : build_per_rank) step_per_rank.push_back(b / steps);
  const double received = std::accumulate(p.received.begin(), p.received.end(), 0.0);
  const std::vector<double> received_per_rank = per_rank(received / steps);
  const double bytes_per_step =
      comm::sum(received) / steps * ghost_ints * static_cast<double>(sizeof(int));
  auto regions = nlohmann::json::array();
  for (const Region& r : p.split.regions)
    regions.push_back(
        {{"x", {static_cast<double>(r.lo[0]) / unit, static_cast<double>(r.hi[0]) / unit}},
         {"y", {static_cast<double>(r.lo[1]) / unit, static_cast<double>(r.hi[1]) / unit}}});
  const auto minmax = [](const std::vector<double>& v) {
    return nlohmann::json{{"min", *std::min_element(v.begin(), v.end())},
                          {"max", *std::max_element(v.begin(), v.end())}};
  };
  return {
      {"mode", "partitioned"},
      {"ranks", p.split.ranks},
      {"method",
       "recursive bisection of the x-y plane at whole elements of A, the longer side cut in "
       "proportion to the ranks on either side; an element belongs to the region holding its "
       "nominal cube's lower x-y corner (fixed for the run: B moves along z only)"},
      {"regions", regions},
      {"owned_elements", per_rank(static_cast<double>(p.split.owned_count))},
      {"peers", per_rank(static_cast<double>(p.split.peers.size()))},
      {"owner_rule",
       "a row belongs to its element's owner; a pair is counted once, by the owner of its lower "
       "global id; a pair across ranks is held by both owners, each in its own element's row"},
      {"ghost_rule",
       "every step each rank sends each peer the id and box of every own element whose box "
       "reaches the peer's region widened by 0.25 (node perturbation and inflation of A)"},
      {"mpi_path", p.ghosts.mpi_path},
      {"gpu_aware_query", p.ghosts.mpi_path_why},
      {"ghost_bytes_per_ghost", ghost_ints * static_cast<int>(sizeof(int))},
      {"ghost_bytes_per_step", bytes_per_step},
      {"ghosts_received_per_step_per_rank", received_per_rank},
      {"ghosts_received_per_step", minmax(received_per_rank)},
      {"crossing_pairs_per_step", static_cast<double>(tally.cross_pairs) / steps},
      {"ghost_exchange", phase_json(exchange)},
      {"build_s_per_rank", build_per_rank},
      {"step_s_per_rank", step_per_rank},
      {"step_s", minmax(step_per_rank)},
      {"phase_s_per_rank", phase_per_rank},
      {"step_s_from",
       "each rank's own rebuilds of every storage (ghost exchange, binning, search and fill), "
       "per timed step (phases start together: the timer synchronises the ranks before each)"}};
}

inline void print_decomposition(const nlohmann::json& d) {
  if (!comm::is_root()) return;
  std::printf(
      "partitioned over %d rank(s): ghosts received per rank and step %.0f to %.0f, %.0f B a "
      "step in all (%s); ghost exchange %.3f ms (one per storage and step); rebuilds of every "
      "storage %.3f to %.3f ms a step per rank\n",
      d["ranks"].get<int>(), d["ghosts_received_per_step"]["min"].get<double>(),
      d["ghosts_received_per_step"]["max"].get<double>(), d["ghost_bytes_per_step"].get<double>(),
      d["mpi_path"].get<std::string>().c_str(), 1e3 * d["ghost_exchange"]["mean_s"].get<double>(),
      1e3 * d["step_s"]["min"].get<double>(), 1e3 * d["step_s"]["max"].get<double>());
}

}  // namespace karma::contact
