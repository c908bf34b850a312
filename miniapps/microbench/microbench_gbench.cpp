#include "microbench_gbench.hpp"

#include "karma/error.hpp"
#include "karma/profiling.hpp"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <set>

#ifndef KARMA_BENCHMARK_VERSION
#define KARMA_BENCHMARK_VERSION "unknown"
#endif
#ifndef KARMA_BENCHMARK_MINOR
#define KARMA_BENCHMARK_MINOR 7
#endif

namespace karma::microbench {
namespace {

std::vector<std::string>& stored_flags() {
  static std::vector<std::string> flags;
  return flags;
}

enum class Kind { boolean, number, time, count, text, choice };

// Google Benchmark 1.8 and later read --benchmark_min_time as seconds with
// an 's' ("0.5s") or calls with an 'x' ("100x"), and still a bare number.
constexpr bool min_time_with_units = KARMA_BENCHMARK_MINOR >= 8;

// A number 0 or more, as Google Benchmark's flags read seconds.
bool is_seconds(const std::string& v) {
  static const std::regex bare("[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?");
  return std::regex_match(v, bare);
}

bool is_min_time(const std::string& v) {
  static const std::regex units("([0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?s|[0-9]+x)");
  return is_seconds(v) || (min_time_with_units && std::regex_match(v, units));
}

// A count 1 or more that an int holds (Google Benchmark reads an int32).
bool is_count(const std::string& v) {
  static const std::regex count("[1-9][0-9]{0,8}");
  return std::regex_match(v, count);
}

// A run's failure, as Google Benchmark 1.7 (error_occurred) or 1.8 and
// later (skipped) reports it: empty where it ran.
template <class Run>
auto failure_of(const Run& r, int) -> decltype(r.skip_message, std::string()) {
  return r.skipped ? (r.skip_message.empty() ? "skipped" : r.skip_message) : "";
}
template <class Run>
std::string failure_of(const Run& r, long) {
  return r.error_occurred ? (r.error_message.empty() ? "failed" : r.error_message) : "";
}

struct Known {
  Kind kind;
  std::vector<std::string> choices;  // Kind::choice
};

// Google Benchmark 1.7.1's flags, but --benchmark_list_tests (refused).
const std::map<std::string, Known>& known_flags() {
  static const std::map<std::string, Known> known = {
      {"filter", {Kind::text, {}}},
      {"min_time", {Kind::time, {}}},
      {"min_warmup_time", {Kind::number, {}}},
      {"repetitions", {Kind::count, {}}},
      {"enable_random_interleaving", {Kind::boolean, {}}},
      {"report_aggregates_only", {Kind::boolean, {}}},
      {"display_aggregates_only", {Kind::boolean, {}}},
      {"format", {Kind::choice, {"console", "json", "csv"}}},
      {"out", {Kind::text, {}}},
      {"out_format", {Kind::choice, {"console", "json", "csv"}}},
      {"color", {Kind::choice, {"auto", "true", "false", "yes", "no", "1", "0"}}},
      {"counters_tabular", {Kind::boolean, {}}},
      {"context", {Kind::text, {}}},
      {"time_unit", {Kind::choice, {"ns", "us", "ms", "s"}}},
      {"perf_counters", {Kind::text, {}}},
  };
  return known;
}

bool truthy(const std::string& v) { return v.empty() || v == "true" || v == "yes" || v == "1"; }

// The value of flag `name` checked against its kind.
void check_value(const std::string& flag, const Known& k, bool has_value,
                 const std::string& value) {
  const auto bad = [&](const std::string& what) {
    return InputError(flag + ": " + what + " (Google Benchmark " + KARMA_BENCHMARK_VERSION + ")");
  };
  if (k.kind != Kind::boolean && (!has_value || value.empty()))
    throw bad("needs a value, written " + flag + "=VALUE");
  switch (k.kind) {
    case Kind::boolean:
      if (has_value && value != "true" && value != "false" && value != "yes" && value != "no" &&
          value != "1" && value != "0")
        throw bad("'" + value + "' is none of true, false, yes, no, 1, 0");
      break;
    case Kind::number:
      if (!is_seconds(value)) throw bad("'" + value + "' is not a number of seconds, 0 or more");
      break;
    case Kind::time:
      if (!is_min_time(value))
        throw bad("'" + value + "' is not a number of seconds" +
                  (min_time_with_units ? " (0.5, 0.5s) or of calls (100x)" : ""));
      break;
    case Kind::count:
      if (!is_count(value)) throw bad("'" + value + "' is not a whole number from 1 to 999999999");
      break;
    case Kind::choice:
      if (std::find(k.choices.begin(), k.choices.end(), value) == k.choices.end())
        throw bad("'" + value + "' is not one of its values");
      break;
    case Kind::text:
      break;
  }
}

// The flag's value where the suite acts on it itself.
void keep_value(BenchmarkFlags& f, const std::string& name, const std::string& value) {
  if (name == "filter") {
    f.filter = value;
    try {
      std::regex(value[0] == '-' ? value.substr(1) : value, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw InputError("--benchmark_filter=" + value + ": not a regular expression (" + e.what() +
                       ")");
    }
  } else if (name == "min_time") {
    f.min_time = value;
  } else if (name == "repetitions") {
    f.repetitions = std::stoll(value);
  } else if (name == "enable_random_interleaving") {
    f.interleave = truthy(value);
  } else if (name == "report_aggregates_only") {
    f.report_aggregates_only = truthy(value);
  } else if (name == "display_aggregates_only") {
    f.display_aggregates_only = truthy(value);
  } else if (name == "format") {
    f.format = value;
  } else if (name == "out") {
    f.out = value;
  } else if (name == "out_format") {
    f.out_format = value;
  } else if (name == "color") {
    f.color = value;
  } else if (name == "counters_tabular") {
    f.tabular = truthy(value);
  }
}

// The flags whose outputs the suite makes itself (one report over all the
// benchmarks, every repetition kept): Google Benchmark does not see them.
bool suite_handles(const std::string& name) {
  static const std::set<std::string> ours = {"format",
                                             "out",
                                             "out_format",
                                             "color",
                                             "counters_tabular",
                                             "report_aggregates_only",
                                             "display_aggregates_only"};
  return ours.count(name) > 0;
}

std::unique_ptr<benchmark::BenchmarkReporter> reporter_for(
    const std::string& format, benchmark::ConsoleReporter::OutputOptions console) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
    // Google Benchmark 1.7.1 marks its CSV reporter deprecated, yet still
    // writes --benchmark_format=csv with it: so does the suite.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  return std::make_unique<benchmark::ConsoleReporter>(console);
}

}  // namespace

const char* benchmark_version() { return KARMA_BENCHMARK_VERSION; }

void take_benchmark_flags(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_", 12) == 0)
      stored_flags().emplace_back(argv[i]);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
}

const std::vector<std::string>& flags_given() { return stored_flags(); }

BenchmarkFlags check_benchmark_flags(const std::vector<std::string>& given) {
  BenchmarkFlags f;
  f.given = given;
  std::set<std::string> seen;
  for (const std::string& arg : given) {
    const auto equals = arg.find('=');
    const std::string flag = arg.substr(0, equals);
    const std::string name = flag.substr(12);  // after --benchmark_
    const std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (name == "list_tests")
      throw InputError(flag +
                       ": not for karma-microbench, whose benchmarks follow from the "
                       "deck; --benchmark_filter=REGEX chooses among them");
    const auto known = known_flags().find(name);
    if (known == known_flags().end())
      throw InputError("unknown Google Benchmark flag " + flag + " (Google Benchmark " +
                       KARMA_BENCHMARK_VERSION + "; see karma-microbench's README)");
    if (!seen.insert(name).second) throw InputError(flag + " is given twice");
    check_value(flag, known->second, equals != std::string::npos, value);
    keep_value(f, name, value);
    if (!suite_handles(name)) f.passed.push_back(arg);
  }
  return f;
}

std::pair<std::string, std::int64_t> start_benchmark(const BenchmarkFlags& flags, double min_time,
                                                     std::int64_t repetitions) {
  static std::vector<std::string> args;
  args = {"karma-microbench",
          "--benchmark_min_time=" + std::to_string(min_time) + (min_time_with_units ? "s" : ""),
          "--benchmark_repetitions=" + std::to_string(repetitions),
          "--benchmark_enable_random_interleaving=true"};
  args.insert(args.end(), flags.passed.begin(), flags.passed.end());
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  benchmark::Initialize(&argc, argv.data());
  return {flags.min_time.value_or(std::to_string(min_time) + "s"),
          flags.repetitions.value_or(repetitions)};
}

Collector::Collector(const BenchmarkFlags& flags, bool first_rank, bool show) : flags_(flags) {
  SetErrorStream(&messages_);
  if (show) {
    const bool color = flags.color == "auto" ? isatty(STDOUT_FILENO) != 0 : truthy(flags.color);
    int options = benchmark::ConsoleReporter::OO_None;
    if (color) options |= benchmark::ConsoleReporter::OO_Color;
    if (flags.tabular) options |= benchmark::ConsoleReporter::OO_Tabular;
    display_ =
        reporter_for(flags.format, static_cast<benchmark::ConsoleReporter::OutputOptions>(options));
  }
  if (!flags.out.empty() && first_rank) {
    file_.open(flags.out);
    if (!file_)
      throw InputError("--benchmark_out=" + flags.out + ": cannot be written (" +
                       std::strerror(errno) + ")");
    to_file_ = reporter_for(flags.out_format, benchmark::ConsoleReporter::OO_None);
    to_file_->SetOutputStream(&file_);
    to_file_->SetErrorStream(&file_);
  }
}

bool Collector::ReportContext(const Context& context) {
  if (opened_) return true;
  opened_ = true;
  if (display_) display_->ReportContext(context);
  if (to_file_) to_file_->ReportContext(context);
  return true;
}

void Collector::ReportRuns(const std::vector<Run>& runs) {
  bool aggregates = false;
  for (const Run& run : runs) {
    if (run.run_type == Run::RT_Aggregate) {
      aggregates = true;
      continue;
    }
    Samples& s = samples_[run.run_name.function_name];
    if (const std::string failed = failure_of(run, 0); !failed.empty()) {
      s.error = failed;
      continue;
    }
    const double calls =
        static_cast<double>(std::max<benchmark::IterationCount>(run.iterations, 1));
    s.seconds_per_call.push_back(run.real_accumulated_time / calls);
    s.iterations = run.iterations;
  }
  // Google Benchmark hands the repetitions and their aggregates over apart.
  if (display_ && !(flags_.display_aggregates_only && !aggregates)) display_->ReportRuns(runs);
  if (to_file_ && !(flags_.report_aggregates_only && !aggregates)) to_file_->ReportRuns(runs);
}

void Collector::finish() {
  if (display_ && opened_) display_->Finalize();
  if (to_file_ && opened_) to_file_->Finalize();
  std::fflush(stdout);
  if (file_.is_open()) file_.close();
}

std::string Collector::take_messages() {
  std::istringstream all(messages_.str());
  messages_.str("");
  std::string kept, line;
  while (std::getline(all, line))
    if (line.rfind("Failed to match any benchmarks", 0) != 0) kept += line + "\n";
  return kept;
}

std::size_t run_arms(const Benchmark& b, std::vector<Arm>& arms, Collector& collector,
                     std::int64_t warmup) {
  for (Arm& arm : arms) {
    benchmark::RegisterBenchmark(
        (b.name() + "/" + arm.implementation).c_str(),
        [&arm, warmup, warm = std::make_shared<bool>(false),
         region =
             profiling::region_name(b.name() + "/" + arm.implementation)](benchmark::State& state) {
          for (std::int64_t w = 0; w < warmup && !*warm; ++w) {
            arm.run(1);
            if (arm.after_each) arm.after_each();
          }
          *warm = true;
          // A check between chunks of calls, untimed, as often as the arm
          // needs it (TinyMatrixSum's sums must stay within int).
          constexpr std::int64_t chunk = std::int64_t{1} << 22;
          const std::int64_t calls = state.max_iterations;
          {
            // A Kokkos Tools region per run, as the core's harness opens one.
            const profiling::Region timed(region);
            while (state.KeepRunningBatch(calls)) {
              for (std::int64_t done = 0; done < calls;) {
                const std::int64_t now = std::min(calls - done, chunk);
                arm.run(now);
                done += now;
                if (done == calls || !arm.after_each) continue;
                state.PauseTiming();
                arm.after_each();
                state.ResumeTiming();
              }
            }
          }
          if (arm.after_each) arm.after_each();
          if (arm.after_turn) arm.after_turn();
        })
        ->UseRealTime();
  }
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  return ran;
}

}  // namespace karma::microbench
