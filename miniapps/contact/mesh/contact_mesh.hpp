// The two blocks of hexahedra: their nodes and the elements' inflated boxes.
#pragma once

#include "mesh/contact_hashes.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace karma::contact {

// --- the mesh -----------------------------------------------------------------

struct MeshShape {
  int n = 0;
  Index elements_a = 0, elements_b = 0, elements = 0;
  Index nodes_a = 0, nodes_b = 0, nodes = 0;
};

inline MeshShape mesh_shape(int n) {
  MeshShape s;
  s.n = n;
  const Index m = n;
  s.elements_a = m * m * m;
  s.elements_b = 4 * m * m * m;
  s.elements = s.elements_a + s.elements_b;
  s.nodes_a = (m + 1) * (m + 1) * (m + 1);
  s.nodes_b = (2 * m + 1) * (2 * m + 1) * (m + 1);
  s.nodes = s.nodes_a + s.nodes_b;
  return s;
}

// Block B's lowest nominal z at a step: 0.5 above A, 0.05 lower per step.
inline std::int64_t b_bottom(int n, std::int64_t step) {
  return static_cast<std::int64_t>(n) * h_a + start_gap - step * step_move;
}

// The nominal top of the scene with block B's bottom at b_z: A's top or B's.
inline std::int64_t scene_top(int n, std::int64_t b_z) {
  return std::max<std::int64_t>(std::int64_t(n) * h_a, b_z + std::int64_t(n) * h_b);
}

using Coords = Kokkos::View<int* [3], Memory>;  // node coordinates, block B at z = 0
using Boxes = Kokkos::View<int* [6], Memory>;   // min x y z, max x y z per element

// Nodes at their perturbed positions; block B's nodes relative to its bottom.
inline void make_nodes(const MeshShape& s, std::uint64_t seed, const Coords& xyz) {
  const int n = s.n;
  const Index nodes_a = s.nodes_a;
  Kokkos::parallel_for(
      "contact::nodes", Range(0, s.nodes), KOKKOS_LAMBDA(const Index v) {
        int base[3];
        int amplitude;
        if (v < nodes_a) {
          const Index m = n + 1;
          base[0] = static_cast<int>(v % m) * h_a;
          base[1] = static_cast<int>((v / m) % m) * h_a;
          base[2] = static_cast<int>(v / (m * m)) * h_a;
          amplitude = perturb_a;
        } else {
          const Index w = v - nodes_a;
          const Index m = 2 * n + 1;
          base[0] = static_cast<int>(w % m) * h_b;
          base[1] = static_cast<int>((w / m) % m) * h_b;
          base[2] = static_cast<int>(w / (m * m)) * h_b;
          amplitude = perturb_b;
        }
        for (int c = 0; c < 3; ++c) xyz(v, c) = base[c] + perturbation(seed, v, c, amplitude);
      });
}

// Element e's box over its 8 nodes, inflated, block B lifted to b_z: min x
// y z, max x y z. One function for every box of the run, so a rank of a
// partitioned run computes its own elements' boxes (and the checks any
// element's) bit for bit as the replicated run does.
KOKKOS_INLINE_FUNCTION void element_box(int n, Index elements_a, Index nodes_a, const Coords& xyz,
                                        int b_z, Index e, int box[6]) {
  Index corner, sx, sy;
  int lift;
  if (e < elements_a) {
    const Index x = e % n, y = (e / n) % n, z = e / (Index(n) * n);
    sx = n + 1;
    sy = sx * sx;
    corner = x + sx * y + sy * z;
    lift = 0;
  } else {
    const Index f = e - elements_a, m = 2 * n;
    const Index x = f % m, y = (f / m) % m, z = f / (m * m);
    sx = m + 1;
    sy = sx * sx;
    corner = nodes_a + x + sx * y + sy * z;
    lift = b_z;
  }
  int lo[3] = {INT_MAX, INT_MAX, INT_MAX};
  int hi[3] = {INT_MIN, INT_MIN, INT_MIN};
  for (int k = 0; k < 8; ++k) {
    const Index v = corner + (k & 1) + ((k >> 1) & 1) * sx + ((k >> 2) & 1) * sy;
    for (int c = 0; c < 3; ++c) {
      const int x = xyz(v, c) + (c == 2 ? lift : 0);
      lo[c] = x < lo[c] ? x : lo[c];
      hi[c] = x > hi[c] ? x : hi[c];
    }
  }
  for (int c = 0; c < 3; ++c) {
    box[c] = lo[c] - inflate;
    box[3 + c] = hi[c] + inflate;
  }
}

// Every element's box.
inline void make_boxes(const MeshShape& s, const Coords& xyz, int b_z, const Boxes& boxes) {
  const int n = s.n;
  const Index elements_a = s.elements_a, nodes_a = s.nodes_a;
  Kokkos::parallel_for(
      "contact::boxes", Range(0, s.elements), KOKKOS_LAMBDA(const Index e) {
        int box[6];
        element_box(n, elements_a, nodes_a, xyz, b_z, e, box);
        for (int d = 0; d < 6; ++d) boxes(e, d) = box[d];
      });
}

KOKKOS_INLINE_FUNCTION bool overlap(const int a[6], const int b[6]) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
         b[2] <= a[5];
}

}  // namespace karma::contact
