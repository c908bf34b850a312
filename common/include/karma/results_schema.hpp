// The results document's schema (results/SCHEMA.md) as a checker.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace karma {

inline constexpr int results_schema_version = 1;

struct ResultsExpectation {
  std::optional<std::string> app;
  std::optional<int> ranks;
  std::optional<std::string> result;  // "PASSED" or "FAILED"
};

// Every way the document departs from the schema or the expectation, one
// line each; empty when it conforms.
std::vector<std::string> validate_results(const nlohmann::json& doc,
                                          const ResultsExpectation& expect = {});

}  // namespace karma
