// The root's end of a run (finish.cpp): the results document written, and
// the summary, table, FOM lines and verdict printed around it in their order.
#pragma once

#include "karma/app.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace karma::detail {

// What the end of a run needs to know of its start.
struct RunStart {
  std::string executable, command, output;  // output: choose_output()
  std::chrono::system_clock::time_point time;
};
// Collected from every rank before the end.
struct Gathered {
  nlohmann::json ranks, energy_ranks;
};

// Returns `code` (the run's exit code so far), or a failed write's.
int finish_on_root(const RunStart& run, const App& app, const CommandLine& cli,
                   const Context& context, const Report& report, const Gathered& gathered,
                   int code);

}  // namespace karma::detail
