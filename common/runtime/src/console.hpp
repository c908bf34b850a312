// What run_main prints on the console (console.cpp): help, the version and
// ranks lines, the table, the FOM lines and the RESULT line that harvesting
// tools parse (scripts/harvest), so their formats are fixed.
#pragma once

#include "karma/app.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace karma::detail {

// --help=json and --help, printed by the root; false when neither was asked.
bool print_help(const std::string& executable, const App& app, const CommandLine& cli);

// The version line and each rank's host and device (`ranks`: gather_ranks(),
// placement.hpp), flushed so they come before the run's own output.
void print_ranks(const std::string& executable, const nlohmann::json& ranks);

// On the root, to stderr: a warning for each GPU that ranks share (`shared`:
// shared_devices(), placement.hpp).
void warn_shared_devices(const std::string& executable, const nlohmann::json& shared);

// The kernels' times and figures of merit, the checks and the verdict word.
void print_table(const std::string& executable, const Report& report);

// One FOM: line per kernel, and its FOM_PER_WATT: line where energy was measured.
void print_fom_lines(const App& app, const Report& report);

// The last line a run prints: RESULT: PASSED, or why it failed (`code`, the exit code).
void print_verdict(const Report& report, int code);

}  // namespace karma::detail
