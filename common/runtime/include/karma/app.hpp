// What every mini-app shares: its command line, start-up and shutdown of
// MPI and Kokkos, the memory check, and the results (JSON + table).
//
// A mini-app is an App: a name, a deck schema and a run function that turns
// the resolved deck into a Report. run_main() does everything else.
#pragma once

#include "karma/code_version.hpp"
#include "karma/deck.hpp"
#include "karma/error.hpp"
#include "karma/kernel_table.hpp"
#include "karma/timing.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace karma {

struct CommandLine {
  std::string deck_path;
  std::vector<std::string> overrides;  // --set key=value, in order
  std::string output;                  // empty: a time-stamped file in run.results_dir
  bool quiet = false;
  bool help = false;
  bool help_json = false;  // --help=json: the deck's JSON Schema, with the kernel table
  bool version = false;    // --version: version_line (karma/system.hpp)
};

// `args` holds the arguments after the program name, --kokkos-* removed.
CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage(const std::string& executable);
// Where the arguments (--kokkos-* aside) hold --version: the exit code after
// printing version_line (karma/system.hpp), or after refusing a bad argument;
// before MPI or the device is started. nullopt otherwise.
std::optional<int> answer_version(const std::string& executable, int argc, char** argv);

// Kokkos ignores a --kokkos-* flag it does not know (3.4 silently), so these
// make one an InputError naming it and, where it has one, this Kokkos'
// spelling. Before Kokkos::initialize, on the --kokkos-* flags among `args`:
// a flag only another Kokkos version reads, or one of this Kokkos' flags that
// takes a value given without "=VALUE" (Kokkos reads no separate value).
void check_kokkos_flags(const std::vector<std::string>& args);
// After Kokkos::initialize(argc, argv), which removes from argv every flag it
// reads (3.4 to 4.6): a --kokkos-* flag left there.
void check_kokkos_flags_consumed(int argc, char* argv[]);

struct KernelResult {
  std::string name;
  std::string implementation;  // "kokkos", "native-cuda", "cublas", ... (karma/harness.hpp)
  std::string variant;         // how the implementation does it
  double bytes = 0;            // moved by one execution, all ranks together
  double flops = 0;            // done by one execution, all ranks together
  Stats time;                  // seconds; each repetition is the slowest rank's
  // The definitions this kernel's launch runs and the launch's choices
  // (karma/code_version.hpp): its code version in the results.
  std::vector<std::string> code;
  nlohmann::json launch = nlohmann::json::object();
  double fom = 0;  // figure of merit, from the best (minimum) time
  std::string fom_units;
  double fom_count = 0;  // a count rate's items per execution (FigureOfMerit::count)
  bool higher_is_better = true;
  nlohmann::json extra = nlohmann::json::object();
};

// Bandwidth in GB/s (1e9 bytes per second), as STREAM and BabelStream count it.
inline double gigabytes_per_second(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
}

struct Check {
  std::string name;
  std::string measure;  // e.g. "max relative error"
  double error = 0;
  double tolerance = 0;
  bool passed() const { return error <= tolerance; }  // NaN never passes
};

// What the results record of the run section beside the mini-app's own
// problem: the warm-ups, and the repetitions where there are any.
void record_run_settings(const RunSettings& run, nlohmann::json& problem);

// "; 100 repetitions after 2 warm-up(s)": how the summary line of a run
// with repetitions ends; empty without.
std::string run_settings_summary(const RunSettings& run);

struct Report {
  std::string summary;  // one line describing the problem, for the table
  nlohmann::json problem = nlohmann::json::object();
  std::vector<KernelResult> kernels;
  std::vector<Check> checks;  // global: already reduced over ranks
  bool passed() const;
};

struct Context {
  const Deck& deck;
  const CommandLine& command_line;
  int device_id = -1;  // -1: the host
  // The deck's run section, read by the core: the harness applies it and
  // the results record it; a mini-app reads here what its own work needs.
  RunSettings run;

  // Collective: refuses, before anything is allocated, a problem that does
  // not fit the memory of the device each rank runs on (exit 3, all ranks).
  void require_memory(std::uint64_t bytes_per_rank, const std::string& what) const;
  // Whether rank 0 should print progress and tables.
  bool verbose() const;
};

struct App {
  std::string name;     // "stream" builds karma-stream
  std::string summary;  // one line for --help
  Schema schema;
  std::function<Report(const Context&)> run;
  // The source hashes of the mini-app's code (its generated
  // karma_code_table.hpp): every kernel's code version comes from them.
  const CodeTable* code = nullptr;
  // Every kernel it can measure (karma/kernel_table.hpp): --help=json and
  // the results carry it, and a kernel measured outside it is refused.
  KernelTable kernels;
};

// The whole life of a mini-app; returns the process exit code.
int run_main(int argc, char** argv, const App& app);

// Writes text to path through a temporary file and a rename, so a reader
// never sees half a file. Throws Error(exit_runtime_error) on failure.
void write_file_atomically(const std::string& path, const std::string& text);

std::string format_bytes(double bytes);

// Collective: every rank's value, on every rank, as a JSON array in rank order.
nlohmann::json allgather_json(const nlohmann::json& value);

}  // namespace karma
