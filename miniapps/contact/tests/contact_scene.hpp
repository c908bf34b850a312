// A scene of the contact tests at one step: nodes, boxes and cell lists,
// shared by the kernel tests and the ArborX tests.
#pragma once

#include "search/contact_cells.hpp"

#include <cstdint>

namespace karma_test_contact {

struct Scene {
  karma::contact::MeshShape shape;
  karma::contact::Coords xyz;
  karma::contact::Boxes boxes;
  karma::contact::CellLists cells;
  std::int64_t bz = 0;  // block B's nominal bottom
};

inline Scene make_scene(int n, std::int64_t step, int cell = karma::contact::unit,
                        std::uint64_t seed = 7) {
  using namespace karma::contact;
  Scene s;
  s.shape = mesh_shape(n);
  s.xyz = Coords("xyz", s.shape.nodes);
  make_nodes(s.shape, seed, s.xyz);
  s.boxes = Boxes("boxes", s.shape.elements);
  s.bz = b_bottom(n, step);
  make_boxes(s.shape, s.xyz, static_cast<int>(s.bz), s.boxes);
  bin(s.boxes, make_grid(n, s.bz, cell), s.cells);
  return s;
}

}  // namespace karma_test_contact
