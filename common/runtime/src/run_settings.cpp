#include "karma/run_settings.hpp"

#include <string>

namespace karma {

RunSettings read_run_settings(const Deck& deck) {
  RunSettings run;
  if (deck.has("run.repetitions")) run.repetitions = deck.integer("run.repetitions");
  if (deck.has("run.warmup")) run.warmup = deck.integer("run.warmup");
  if (deck.has("run.inject_fault")) run.inject_fault = deck.string("run.inject_fault");
  if (deck.has("run.results_dir")) run.results_dir = deck.string("run.results_dir");
  if (deck.has("run.energy")) run.energy = deck.string("run.energy") == "on";
  if (deck.has("run.energy_window")) run.energy_window = deck.number("run.energy_window");
  if (deck.has("run.comm")) run.comm = deck.string("run.comm");
  return run;
}

void record_run_settings(const RunSettings& run, nlohmann::json& problem) {
  if (run.repetitions > 0) problem["repetitions"] = run.repetitions;
  problem["warmup"] = run.warmup;
}

std::string run_settings_summary(const RunSettings& run) {
  if (run.repetitions == 0) return "";
  return "; " + std::to_string(run.repetitions) + " repetitions after " +
         std::to_string(run.warmup) + " warm-up(s)";
}

}  // namespace karma
