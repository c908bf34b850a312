// Partitioned runs: a rank's elements (its own, then this step's ghosts)
// and the exchange of ghosts with its peers over MPI, every step.
#pragma once

#include "partition/contact_decomposition.hpp"

#include "karma/comm.hpp"
#include "karma/device_comm.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace karma::contact {

// The elements a rank searches: its own [0, owned), with rows, then the
// ghosts [owned, count) of this step, without. ids: global element ids.
struct LocalElements {
  Boxes boxes;
  Kokkos::View<int*, Memory> ids;
  Index owned = 0, count = 0;
};

inline LocalElements make_local_elements(const Decomposition& d) {
  LocalElements l;
  l.owned = l.count = d.owned_count;
  // Room for ghosts of up to a quarter of the own elements; plan_ghosts
  // grows it (keeping the own ones) when more arrive.
  const Index room = d.owned_count + d.owned_count / 4 + 16;
  l.boxes = Boxes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::local_boxes"), room);
  l.ids = Kokkos::View<int*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::local_ids"), room);
  Kokkos::deep_copy(Kokkos::subview(l.ids, std::make_pair(Index(0), d.owned_count)), d.owned);
  return l;
}

// The boxes of the own elements at a step.
inline void own_boxes(const MeshShape& s, const Coords& xyz, int b_z, const LocalElements& l) {
  const int n = s.n;
  const Index elements_a = s.elements_a, nodes_a = s.nodes_a;
  const auto boxes = l.boxes;
  const auto ids = l.ids;
  Kokkos::parallel_for(
      "contact::own_boxes", Range(0, l.owned), KOKKOS_LAMBDA(const Index k) {
        int box[6];
        element_box(n, elements_a, nodes_a, xyz, b_z, ids(k), box);
        for (int d = 0; d < 6; ++d) boxes(k, d) = box[d];
      });
}

// One ghost on the wire: its global id and its box.
inline constexpr int ghost_ints = 7;

// How a rank exchanges ghosts, and what the last exchange moved. The plan
// (plan_ghosts, before the timed steps) lists the own elements each peer
// gets: the rule reads a box's x and y only, and block B moves along z
// only, so the same elements are ghosts at every step. Their boxes are
// sent again at every step.
struct Ghosts {
  std::vector<int> peers;
  std::vector<Region> peer_regions;
  Kokkos::View<Index*, Memory> send_list;              // own elements' slots, peer after peer
  std::vector<std::int64_t> send_counts, recv_counts;  // elements, per peer
  Kokkos::View<int*, Memory> send, recv;               // ghost_ints per element, by peer
  // How the buffers reach the peers (run.comm, karma/device_comm.hpp):
  // "host memory" (a host backend), "host staging", "gpu-aware MPI", "nccl".
  std::string mpi_path;
  std::string mpi_path_why;
  std::int64_t sent = 0, received = 0;  // elements, the last exchange
};

inline Ghosts make_ghosts(const Decomposition& d) {
  Ghosts g;
  g.peers = d.peers;
  for (int p : d.peers) g.peer_regions.push_back(d.regions[static_cast<std::size_t>(p)]);
  g.mpi_path = comm::path().name;
  g.mpi_path_why = comm::path().why;
  return g;
}

// Writes, from slot `base` of `list` on, the own elements whose box reaches
// region r (all of them when `list` is too short to hold them), and
// returns how many there are.
inline Index select_ghosts(const LocalElements& l, const Region r,
                           const Kokkos::View<Index*, Memory>& list, std::int64_t base) {
  const auto boxes = l.boxes;
  const std::int64_t room = static_cast<std::int64_t>(list.extent(0));
  Index total = 0;
  Kokkos::parallel_scan(
      "contact::ghosts::select", Range(0, l.owned),
      KOKKOS_LAMBDA(const Index e, Index& at, const bool final) {
        int box[6];
        for (int d = 0; d < 6; ++d) box[d] = boxes(e, d);
        if (!reaches(box, r.lo, r.hi, ghost_reach)) return;
        if (final && base + at < room) list(base + at) = e;
        ++at;
      },
      total);
  return total;
}

// The send half of the plan from the own boxes of any step: g.send_list and
// g.send_counts, and a send buffer that holds them.
inline void plan_sends(Ghosts& g, const LocalElements& l) {
  g.send_counts.assign(g.peers.size(), 0);
  std::int64_t total = 0;
  for (std::size_t k = 0; k < g.peers.size(); ++k) {
    g.send_counts[k] = select_ghosts(l, g.peer_regions[k], g.send_list, 0);
    total += g.send_counts[k];
  }
  g.send_list = Kokkos::View<Index*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::ghosts::send_list"), total);
  std::int64_t base = 0;
  for (std::size_t k = 0; k < g.peers.size(); ++k) {
    select_ghosts(l, g.peer_regions[k], g.send_list, base);
    base += g.send_counts[k];
  }
  g.send = Kokkos::View<int*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::ghosts::send"), total * ghost_ints);
}

// Collective over the peers, once: the whole plan (the own boxes of any
// step in l), the buffers of every exchange, and room for the ghosts.
inline void plan_ghosts(Ghosts& g, LocalElements& l) {
  plan_sends(g, l);
  g.recv_counts = comm::exchange_counts(g.peers, g.send_counts);
  std::int64_t receives = 0;
  for (auto c : g.recv_counts) receives += c;
  g.recv = Kokkos::View<int*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "contact::ghosts::recv"),
      receives * ghost_ints);
  if (static_cast<Index>(l.boxes.extent(0)) < l.owned + receives) {
    Kokkos::resize(l.boxes, l.owned + receives);  // keeps the own elements
    Kokkos::resize(l.ids, l.owned + receives);
  }
}

// This step's boxes of the planned ghosts, with their ids, into g.send.
inline void pack_ghosts(const Ghosts& g, const LocalElements& l) {
  const auto list = g.send_list;
  const auto boxes = l.boxes;
  const auto ids = l.ids;
  const auto send = g.send;
  Kokkos::parallel_for(
      "contact::ghosts::pack", Range(0, static_cast<Index>(list.extent(0))),
      KOKKOS_LAMBDA(const Index k) {
        const Index e = list(k);
        const std::int64_t w = k * ghost_ints;
        send(w) = ids(e);
        for (int d = 0; d < 6; ++d) send(w + 1 + d) = boxes(e, d);
      });
}

// Where each peer's part lies on the wire, in ints: `skip` leaves out each
// non-empty part's first element; `packed`: parts keep their planned
// places (the send buffer), else they follow each other (the receive one).
struct WireParts {
  std::vector<std::int64_t> offsets, counts;
  std::int64_t total = 0;  // ints
};

inline WireParts wire_parts(const std::vector<std::int64_t>& elements, bool skip, bool packed) {
  WireParts w;
  std::int64_t planned = 0;
  for (const std::int64_t c : elements) {
    const std::int64_t s = skip && c > 0 ? 1 : 0;
    w.offsets.push_back((packed ? planned + s : w.total / ghost_ints) * ghost_ints);
    w.counts.push_back((c - s) * ghost_ints);
    w.total += (c - s) * ghost_ints;
    planned += c;
  }
  return w;
}

// This step's ghosts: the planned own elements go to each peer with this
// step's boxes; the peers' arrive as local elements [owned, count).
// `fault` (inject_fault: ghost, the same step on every rank) leaves out the
// first ghost sent to each peer, a broken exchange the checks must catch.
inline void exchange_ghosts(Ghosts& g, LocalElements& l, bool fault) {
  pack_ghosts(g, l);
  const WireParts out = wire_parts(g.send_counts, fault, true);
  const WireParts in = wire_parts(g.recv_counts, fault, false);
  exchange_with_peers(g.peers, g.send.data(), out.offsets, out.counts, g.recv.data(), in.offsets,
                      in.counts);
  const Index ghosts = in.total / ghost_ints;
  g.sent = out.total / ghost_ints;
  g.received = ghosts;
  l.count = l.owned + ghosts;
  const auto recv = g.recv;
  const auto local_boxes = l.boxes;
  const auto local_ids = l.ids;
  const Index owned = l.owned;
  Kokkos::parallel_for(
      "contact::ghosts::unpack", Range(0, ghosts), KOKKOS_LAMBDA(const Index k) {
        const std::int64_t r = k * ghost_ints;
        local_ids(owned + k) = recv(r);
        for (int d = 0; d < 6; ++d) local_boxes(owned + k, d) = recv(r + 1 + d);
      });
}

}  // namespace karma::contact
