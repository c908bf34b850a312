// Whether a run is reportable under the run rules (docs/run-rules.md): the
// problem class its deck is, the tier its changes put it in, and why not.
#pragma once

#include "karma/deck.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace karma {

// Version of the rules the record applies (docs/run-rules.md says which).
inline constexpr const char* run_rules_version = "1";

struct RunFacts {
  std::string app;
  int ranks = 1;
  bool passed = false;         // every check passed
  std::string build_type;      // CMAKE_BUILD_TYPE
  std::string kokkos_version;  // "4.6.1"
};

// {rules, class, tier, reportable, reasons}: class small, medium, large or
// strong when the deck file is that class deck (by sha256), weak for the
// large deck on more than one rank (strong counts on any number, small and
// medium on one); tier baseline unless a tuning key was set, then
// optimized; null where a key no tier allows was set.
nlohmann::json reportable_record(const Schema& schema, const Deck& deck, const RunFacts& run);

}  // namespace karma
