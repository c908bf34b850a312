// The results document (results_document.cpp): the JSON that rank 0 writes
// at the end of a run, each kernel's efficiency against the devices' peaks,
// and the path it goes to, chosen before the run.
#pragma once

#include "karma/app.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace karma::detail {

// --output, else a time-stamped name in run.results_dir: checked before the
// run, so a bad --output or results_dir costs no run time.
std::string choose_output(const std::string& app, const CommandLine& cli, const Deck& deck,
                          std::chrono::system_clock::time_point start);

// The path to write at the end of the run: `chosen` (choose_output) under
// --output, else in run.results_dir, made again, under a name no file has.
std::string results_path(const std::string& chosen, const CommandLine& cli, const RunSettings& run);

// The run section as the harness applied it, in the report's problem and
// summary, unless the app records what it applied itself (microbench:
// Google Benchmark's repetitions).
void record_run(const RunSettings& run, Report& report);

// The whole document: `ranks` (gather_ranks(), placement.hpp) and
// `energy_ranks` (every rank's energy::describe()), the command line as
// given, the start in UTC (ISO 8601) and the run's duration.
nlohmann::json results_json(const App& app, const CommandLine& cli, const Context& context,
                            const Report& report, const nlohmann::json& ranks,
                            const nlohmann::json& energy_ranks, const std::string& command,
                            const std::string& started, double duration_s);

}  // namespace karma::detail
