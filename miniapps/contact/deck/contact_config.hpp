// What a karma-contact run does, as read from its deck (main.cpp reads it);
// the run section (warm-up steps, the fault to inject) is the core's
// RunSettings, beside it.
#pragma once

#include "storages/contact_storages.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace karma::contact {

struct Config {
  int n = 0;
  MeshShape shape;
  std::int64_t steps = 0, sweeps = 0, capacity = 0;
  std::uint64_t seed = 0;
  int cell = unit;
  std::vector<Storage> storages;
  bool dynamic_left = false;
  int lanes = 1;
  std::int64_t brute_force_max = 0, sample_rows = 0;
  bool overflow_check = true;
  bool pairs = true;
  // contact.decomposition: partitioned (one mesh split over the ranks, ghosts
  // exchanged every step) or replicated (every rank its own copy).
  bool partitioned = false;
  int list_stripes = 1;
  // dynamic-ragged: a row past capacity grows every row to at least this
  // factor times the capacity (contact.growth_factor; 1: to the longest row).
  double growth_factor = 1.5;
  // contact.step_timing whole: each storage's step is also run and timed as
  // one (its .step kernel); kernels: a step is the sum of its kernels' means.
  bool whole_steps = true;
};

// The timed steps: 1 .. steps, or the start position alone when steps is 0.
inline std::int64_t first_step(const Config& c) { return c.steps == 0 ? 0 : 1; }
inline std::int64_t last_step(const Config& c) { return c.steps; }

// Whether float holds every box coordinate of the run exactly (integers up
// to 2^24): the highest is block B's top at the start (warm-up) position,
// plus the perturbation and inflation. The arborx storage's coordinates.
inline bool arborx_float_exact(const Config& c) {
  return scene_top(c.n, b_bottom(c.n, 0)) + perturb_a + inflate < (std::int64_t{1} << 24);
}

// Whether the run builds storage s.
inline bool has_storage(const Config& c, Storage s) {
  return std::find(c.storages.begin(), c.storages.end(), s) != c.storages.end();
}

}  // namespace karma::contact
