// The results document's schema (results/SCHEMA.md) as a checker.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace karma {

// Version 2 added kernels[].implementation and kernels[].variant; the
// checker reads version 1 documents too (without them).
inline constexpr int results_schema_version = 2;
inline constexpr int results_schema_oldest_version = 1;

struct ResultsExpectation {
  std::optional<std::string> app;
  std::optional<int> ranks;
  std::optional<std::string> result;  // "PASSED" or "FAILED"
};

// The mini-apps that write results documents, as `app` names them
// (karma-microbench writes Google Benchmark JSON instead).
const std::vector<std::string>& suite_apps();

// `date` as the schema wants it: YYYY-MM-DDTHH:MM:SS, an optional fraction,
// then Z or +00:00; a real calendar date and time of day.
bool is_utc_date_time(const std::string& text);

// Every way the document departs from the schema or the expectation, one
// line each; empty when it conforms.
std::vector<std::string> validate_results(const nlohmann::json& doc,
                                          const ResultsExpectation& expect = {});

}  // namespace karma
