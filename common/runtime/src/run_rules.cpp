#include "karma/run_rules.hpp"

#include "karma/build_info.hpp"

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace karma {
namespace {

std::string class_of(const std::string& app, const std::string& sha256) {
  for (std::size_t i = 0; i < build_info::class_deck_count; ++i) {
    const auto& d = build_info::class_decks[i];
    if (app == d.app && sha256 == d.sha256) return d.problem_class;
  }
  return "";
}

// "small|medium|large", with "|strong" for an app that has that deck.
std::string classes_of(const std::string& app) {
  std::string names;
  for (std::size_t i = 0; i < build_info::class_deck_count; ++i) {
    const auto& d = build_info::class_decks[i];
    if (app == d.app) names += (names.empty() ? "" : "|") + std::string(d.problem_class);
  }
  return names.empty() ? "<class>" : names;
}

// "4.6.01" and "4.6.1" alike; a part that is not a number reads as 0.
std::tuple<int, int, int> version_of(const std::string& text) {
  int major = 0, minor = 0, patch = 0;
  std::sscanf(text.c_str(), "%d.%d.%d", &major, &minor, &patch);
  return {major, minor, patch};
}

bool set_on_command_line(const Deck& deck, const std::string& path) {
  return deck.origin(path).rfind("--set", 0) == 0;
}

}  // namespace

nlohmann::json reportable_record(const Schema& schema, const Deck& deck, const RunFacts& run) {
  std::vector<std::string> reasons;
  std::string problem_class = class_of(run.app, deck.sha256());
  if (problem_class.empty())
    reasons.push_back("the deck " + deck.source() + " is not one of karma-" + run.app +
                      "'s class decks (inputs/" + run.app + "/" + classes_of(run.app) +
                      ".yaml as shipped)");
  else if (run.ranks > 1 && problem_class == "large")
    problem_class = "weak";
  else if (run.ranks > 1 && problem_class != "strong")  // strong: one problem over any ranks
    reasons.push_back("class " + problem_class +
                      " runs on one rank (on several: the strong deck, or the large deck as "
                      "the weak class)");

  bool tuned = false, fixed_changed = false;
  for (const auto& key : schema.keys()) {
    if (!set_on_command_line(deck, key.path)) continue;
    if (key.rule == Rule::tuning) tuned = true;
    if (key.rule != Rule::fixed) continue;
    fixed_changed = true;
    reasons.push_back(key.path + " was set by --set: no tier lets a run change it");
  }
  if (!run.passed) reasons.push_back("a check failed");
  if (run.build_type != "Release")
    reasons.push_back("built as '" + run.build_type + "' (the rules ask for Release)");
  if (version_of(run.kokkos_version) < version_of(build_info::kokkos_pinned))
    reasons.push_back("Kokkos " + run.kokkos_version + " is older than the pinned " +
                      build_info::kokkos_pinned);
  if (deck.string("run.energy") != "on")
    reasons.push_back("run.energy is off (the rules ask for every kernel's energy)");

  nlohmann::json record = {{"rules", run_rules_version},
                           {"class", nullptr},
                           {"tier", nullptr},
                           {"reportable", reasons.empty()},
                           {"reasons", reasons}};
  if (!problem_class.empty()) record["class"] = problem_class;
  if (!fixed_changed) record["tier"] = tuned ? "optimized" : "baseline";
  return record;
}

}  // namespace karma
