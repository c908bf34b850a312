// karma-microbench measures with Google Benchmark: its flags, checked before
// anything is measured; the reporter of the suite's that keeps every
// repetition of every arm for the results document while it passes the runs
// on to the display and the file Google Benchmark's flags ask for; and the
// run of one benchmark's arms, their repetitions interleaved.
//
// The deck gives Google Benchmark's defaults (microbench.min_time,
// run.repetitions); a --benchmark_* flag on the command line overrides one
// for that run, with Google Benchmark's own meaning.
#pragma once

#include "benchmarks.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace karma::microbench {

// Google Benchmark's flags, taken off the command line before the suite
// reads the rest, and the values of those the suite acts on itself.
struct BenchmarkFlags {
  std::vector<std::string> given;   // as written, in order
  std::vector<std::string> passed;  // what Google Benchmark itself reads
  std::string filter;               // --benchmark_filter (empty: every benchmark)
  std::string format = "console", out_format = "json", out, color = "auto", time_unit;
  std::optional<std::string> min_time;  // as given: 0.5 (1.8 and later: also 0.5s, 100x)
  std::optional<std::int64_t> repetitions;
  bool interleave = true, report_aggregates_only = false, display_aggregates_only = false;
  bool tabular = false;
};

// Moves every --benchmark_* argument of argv into flags_given() (argc
// shrinks): the suite's own command line never sees them.
void take_benchmark_flags(int& argc, char** argv);
const std::vector<std::string>& flags_given();

// The flags checked, each bad one an InputError (exit 2) naming it: unknown
// names, a value missing or of the wrong kind, a flag given twice, a filter
// that is no regular expression, --benchmark_list_tests (the benchmarks
// follow from the deck: --benchmark_filter chooses among them).
BenchmarkFlags check_benchmark_flags(const std::vector<std::string>& given);

// Google Benchmark started with the deck's values as defaults: the given
// flags, read after them, win. Returns the minimum time (as Google
// Benchmark reads it: "0.05s", "100x") and the repetitions in force.
std::pair<std::string, std::int64_t> start_benchmark(const BenchmarkFlags& flags, double min_time,
                                                     std::int64_t repetitions);

// Every repetition of every arm run, by the arm's benchmark name
// (Family/where/layout/extents/shape/implementation), and the display and
// file outputs, made once for all the benchmarks of a run: they read as one
// report. On ranks other than the first, and with --quiet, nothing is shown.
class Collector : public benchmark::BenchmarkReporter {
 public:
  // Opens --benchmark_out first (on the first rank): a file that cannot be
  // written is refused (InputError) before anything is measured. `show`:
  // the display on stdout.
  Collector(const BenchmarkFlags& flags, bool first_rank, bool show);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override {}  // finish() ends the report, after the last benchmark
  void finish();

  struct Samples {
    std::vector<double> seconds_per_call;  // a sample a repetition
    std::int64_t iterations = 0;           // calls in the last repetition
    std::string error;                     // Google Benchmark's, if the run failed
  };
  const std::map<std::string, Samples>& samples() const { return samples_; }
  // Google Benchmark's messages other than a filter matching none of one
  // benchmark's arms (the filter is over all of them).
  std::string take_messages();

 private:
  const BenchmarkFlags& flags_;
  std::ofstream file_;
  std::ostream null_{nullptr};
  std::ostringstream messages_;
  std::unique_ptr<benchmark::BenchmarkReporter> display_, to_file_;
  bool opened_ = false;
  std::map<std::string, Samples> samples_;
};

// Runs the arms of benchmark `b` under Google Benchmark, named
// b.name()/implementation; their repetitions land in `collector`. Untimed:
// `warmup` calls before an arm's first run, and the arm's checks after each
// run. Returns how many arms ran (the filter may leave some out).
std::size_t run_arms(const Benchmark& b, std::vector<Arm>& arms, Collector& collector,
                     std::int64_t warmup);

// The Google Benchmark this was built with ("1.7.1").
const char* benchmark_version();

}  // namespace karma::microbench
