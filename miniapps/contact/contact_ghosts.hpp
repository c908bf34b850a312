// Partitioned runs: a rank's elements (its own, then this step's ghosts)
// and the exchange of ghosts with its peers over MPI, every step.
#pragma once

#include "contact_decomposition.hpp"

#include "karma/comm.hpp"
#include "karma/pinned.hpp"

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
  // Room for ghosts of up to a quarter of the own elements first; grown
  // (keeping the own ones) when a step needs more.
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

// How a rank exchanges ghosts, and what the last exchange moved.
struct Ghosts {
  std::vector<int> peers;
  std::vector<Region> peer_regions;
  Kokkos::View<int*, Memory> send, recv;  // ghost_ints per element, by peer
  // Host staging, page-locked: the copies to and from the device run at the
  // link's speed.
  Kokkos::View<int*, PinnedHostSpace> send_host, recv_host;
  // How MPI reaches the buffers: "host memory" (a host backend), "gpu-aware"
  // (MPI reads device memory), "host staging" (copies through the host).
  std::string mpi_path;
  std::string mpi_path_why;
  std::int64_t sent = 0, received = 0;  // elements, the last exchange
};

inline Ghosts make_ghosts(const Decomposition& d) {
  Ghosts g;
  g.peers = d.peers;
  g.send = decltype(g.send)("contact::ghosts::send", 0);  // grown by pack_peers
  for (int p : d.peers) g.peer_regions.push_back(d.regions[static_cast<std::size_t>(p)]);
  g.mpi_path_why = comm::gpu_aware_how();
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)
    g.mpi_path = "host memory";
  else
    g.mpi_path = comm::gpu_aware() ? "gpu-aware" : "host staging";
  return g;
}

template <class V>
void ensure_room(V& v, std::int64_t size, const std::string& label) {
  if (static_cast<std::int64_t>(v.extent(0)) >= size) return;
  v = V();
  v = V(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), size);
}

// Packs into g.send, from element slot `base` on, every own element whose
// box reaches region r, and returns how many there are. Only those that fit
// are written: the caller grows g.send and packs again when they do not, so
// one pass over the own elements both counts and packs.
inline Index pack_ghosts(const Ghosts& g, const LocalElements& l, const Region r,
                         std::int64_t base) {
  const auto boxes = l.boxes;
  const auto ids = l.ids;
  const auto send = g.send;
  const std::int64_t room = static_cast<std::int64_t>(send.extent(0)) / ghost_ints;
  Index total = 0;
  Kokkos::parallel_scan(
      "contact::ghosts::pack", Range(0, l.owned),
      KOKKOS_LAMBDA(const Index e, Index& at, const bool final) {
        int box[6];
        for (int d = 0; d < 6; ++d) box[d] = boxes(e, d);
        if (!reaches(box, r.lo, r.hi, ghost_reach)) return;
        if (final && base + at < room) {
          const std::int64_t w = (base + at) * ghost_ints;
          send(w) = ids(e);
          for (int d = 0; d < 6; ++d) send(w + 1 + d) = box[d];
        }
        ++at;
      },
      total);
  return total;
}

// Packs every peer's ghosts into g.send, peer after peer, and returns how
// many each peer gets (element slots; a peer's start is the sum of those
// before it).
inline std::vector<std::int64_t> pack_peers(Ghosts& g, const LocalElements& l) {
  std::vector<std::int64_t> counts(g.peers.size(), 0);
  std::int64_t base = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    Index c = pack_ghosts(g, l, g.peer_regions[k], base);
    const std::int64_t need = base + c;
    if (need * ghost_ints > static_cast<std::int64_t>(g.send.extent(0))) {
      // A quarter more than this step needs, so that the next steps, whose
      // ghosts differ a little as B moves, pack once. resize keeps the
      // earlier peers' ghosts.
      Kokkos::resize(g.send, (need + need / 4 + 16) * ghost_ints);
      c = pack_ghosts(g, l, g.peer_regions[k], base);
    }
    counts[k] = c;
    base += c;
  }
  return counts;
}

// This step's ghosts: every own element whose box reaches a peer's region
// widened by ghost_reach goes to that peer (a box of the peer's can meet it
// only there); the peers' arrive as local elements [owned, count).
// `fault` (inject_fault: ghost) leaves out the first ghost sent to each
// peer, a broken exchange the checks must catch.
inline void exchange_ghosts(Ghosts& g, LocalElements& l, bool fault) {
  const std::size_t peers = g.peers.size();
  const std::vector<std::int64_t> counts = pack_peers(g, l);
  std::vector<std::int64_t> offsets(peers + 1, 0);
  for (std::size_t k = 0; k < peers; ++k) offsets[k + 1] = offsets[k] + counts[k];
  // Counted in ints from here.
  std::vector<std::int64_t> send_offsets(peers), send_counts(peers);
  for (std::size_t k = 0; k < peers; ++k) {
    const std::int64_t skip = fault && counts[k] > 0 ? 1 : 0;
    send_offsets[k] = (offsets[k] + skip) * ghost_ints;
    send_counts[k] = (counts[k] - skip) * ghost_ints;
  }
  const std::vector<std::int64_t> recv_counts = comm::exchange_counts(g.peers, send_counts);
  std::vector<std::int64_t> recv_offsets(peers, 0);
  std::int64_t received = 0;
  for (std::size_t k = 0; k < peers; ++k) {
    recv_offsets[k] = received;
    received += recv_counts[k];
  }
  ensure_room(g.recv, received, "contact::ghosts::recv");
  if (g.mpi_path == "host staging") {
    ensure_room(g.send_host, offsets[peers] * ghost_ints, "contact::ghosts::send_host");
    ensure_room(g.recv_host, received, "contact::ghosts::recv_host");
    const auto used = std::make_pair(std::int64_t{0}, offsets[peers] * ghost_ints);
    Kokkos::deep_copy(Kokkos::subview(g.send_host, used), Kokkos::subview(g.send, used));
    comm::exchange(g.peers, g.send_host.data(), send_offsets, send_counts, g.recv_host.data(),
                   recv_offsets, recv_counts);
    const auto got = std::make_pair(std::int64_t{0}, received);
    Kokkos::deep_copy(Kokkos::subview(g.recv, got), Kokkos::subview(g.recv_host, got));
  } else {
    Kokkos::fence();  // the packing kernels wrote what MPI reads
    comm::exchange(g.peers, g.send.data(), send_offsets, send_counts, g.recv.data(), recv_offsets,
                   recv_counts);
  }
  const Index ghosts = received / ghost_ints;
  g.sent = 0;
  for (auto c : send_counts) g.sent += c / ghost_ints;
  g.received = ghosts;
  if (static_cast<Index>(l.boxes.extent(0)) < l.owned + ghosts) {
    const Index room = l.owned + ghosts + ghosts / 4 + 16;
    Kokkos::resize(l.boxes, room);  // keeps the own elements
    Kokkos::resize(l.ids, room);
  }
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
