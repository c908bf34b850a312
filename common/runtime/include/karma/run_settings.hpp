// The deck's `run:` section (Schema::run_section), read once by the core.
// run_main reads it after the deck, the harness applies its repetitions and
// warm-ups, and run_main records them in the results; a mini-app reads from
// it (Context::run) only what its own work needs: the fault to inject, a
// check of its own on the counts (stream's bound on iterations, matvec's
// rounds), contact's warm-up sweeps.
#pragma once

#include "karma/deck.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace karma {

struct RunSettings {
  // run.repetitions; 0 where the schema declares none (contact's timed
  // work is its steps).
  std::int64_t repetitions = 0;
  std::int64_t warmup = 0;            // run.warmup
  std::string inject_fault = "none";  // run.inject_fault: "none" or one of the app's faults
  std::string results_dir = ".";      // run.results_dir
  bool energy = false;                // run.energy: on
  double energy_window = 0.5;         // run.energy_window, seconds
  std::string comm = "auto";          // run.comm, the path asked for
};

// The run section of a resolved deck; a key the schema does not declare
// keeps the default above.
RunSettings read_run_settings(const Deck& deck);

// What the results record of the run section beside the mini-app's own
// problem: the warm-ups, and the repetitions where there are any.
void record_run_settings(const RunSettings& run, nlohmann::json& problem);

// "; 100 repetitions after 2 warm-up(s)": how the summary line of a run
// with repetitions ends; empty without.
std::string run_settings_summary(const RunSettings& run);

}  // namespace karma
