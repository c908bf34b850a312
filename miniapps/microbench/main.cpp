// karma-microbench: karma's arrays against raw pointers, the mdspan paper's
// five benchmarks, with Google Benchmark. See README.md.
#include "benchmarks.hpp"

#include "karma/app.hpp"
#include "karma/build_info.hpp"
#include "karma/error.hpp"
#include "karma/output.hpp"
#include "karma/profiling.hpp"
#include "karma/system.hpp"

#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace karma::microbench;

// The suite's exit codes (karma/error.hpp), in the words of a benchmark run.
constexpr int exit_verified = karma::exit_ok;
constexpr int exit_wrong_answer = karma::exit_verification_failed;
constexpr int exit_usage = karma::exit_bad_input;
constexpr int exit_resource = karma::exit_runtime_error;

void print_usage(const char* exe) {
  std::cout
      << "usage: " << exe
      << " [--sizes=standard|tiny] [--raw-twin] [--benchmark_*=...] [--kokkos-*=...]\n"
      << "       [--help[=json]] [--version]\n"
      << "\n"
      << "karma's arrays against raw pointers and hand-written indexing: Sum3D, Stencil3D,\n"
      << "TinyMatrixSum, Subspan3D and MatVec (Hollman et al. 2019), LayoutRight and\n"
      << "LayoutLeft, static / mixed / dynamic extents, serial host loops and parallel\n"
      << "kernels on Kokkos' default execution space. Names:\n"
      << "  Family/serial|parallel/right|left/static|mixed|dynamic/shape/karma|raw\n"
      << "\n"
      << "  --sizes=standard   the measured sizes (default)\n"
      << "  --sizes=tiny       every variant on a few elements (tests)\n"
      << "  --version          the suite's version, Kokkos, compiler and MPI of this build\n"
      << "  --raw-twin         also each raw benchmark a second time, named .../raw_twin: the\n"
      << "                     same code, so raw_twin / raw is the machine's own spread\n"
      << "                     (karma-microbench-ratios FILE.json --check raw_twin)\n"
      << "  --benchmark_out=FILE\n"
      << "                     Google Benchmark JSON (default: a time-stamped file in results/)\n"
      << "  --benchmark_filter=REGEX, --benchmark_repetitions=N, --benchmark_min_time=SECONDS,\n"
      << "  --benchmark_enable_random_interleaving=true, ...: Google Benchmark's flags\n"
      << "  --kokkos-*         Kokkos' flags; one this Kokkos does not read is an error (exit 2).\n"
      << "                     Threads: --kokkos-threads=N (Kokkos before 3.7) or\n"
      << "                     --kokkos-num-threads=N (3.7 on); device: --kokkos-device-id=N\n"
      << "\n"
      << "Every benchmark checks its answer. Exit codes: 0 all answers right, 1 a wrong answer,\n"
      << "2 bad usage, 3 a benchmark could not run (memory). Ratios: "
         "karma-microbench-ratios FILE.json\n";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// results/karma-microbench_<host>_<UTC time>.json, created if need be, never
// overwriting a file.
std::string default_output() {
  std::error_code ec;
  fs::create_directories("results", ec);
  return karma::unique_path(
      karma::default_output_name("results", "microbench", std::chrono::system_clock::now()));
}

std::string join(const nlohmann::json& list) {
  std::string s;
  for (const auto& item : list) s += (s.empty() ? "" : ",") + item.get<std::string>();
  return s.empty() ? "none" : s;
}

// One line (Google Benchmark prints the context above its table): the
// lines, trimmed, joined by "; ".
std::string one_line(const std::string& text) {
  std::string s, line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t");
    s += (s.empty() ? "" : "; ") + line.substr(first, last - first + 1);
  }
  return s;
}

void add_context(Sizes sizes) {
  namespace info = karma::build_info;
  benchmark::AddCustomContext("karma_version", info::version);
  benchmark::AddCustomContext("karma_git", info::git_describe);
  benchmark::AddCustomContext("karma_build_type", info::build_type);
  benchmark::AddCustomContext("compiler", info::compiler);
  benchmark::AddCustomContext("cxx_flags", info::cxx_flags);
  if (*info::cuda_flags) benchmark::AddCustomContext("cuda_flags", info::cuda_flags);
  if (const auto loading = karma::describe_module_loading(); !loading.is_null()) {
    benchmark::AddCustomContext("cuda_module_loading", loading["mode"].get<std::string>());
    benchmark::AddCustomContext("cuda_module_loading_set_by", loading["set_by"].get<std::string>());
  }
  const nlohmann::json kokkos = karma::describe_kokkos();
  benchmark::AddCustomContext("kokkos_version", kokkos["version"].get<std::string>());
  benchmark::AddCustomContext("kokkos_backends", join(kokkos["backends"]));
  benchmark::AddCustomContext("kokkos_view", kokkos["view"].get<std::string>());
  benchmark::AddCustomContext("kokkos_architecture", join(kokkos["architecture"]));
  benchmark::AddCustomContext("kokkos_default_execution_space",
                              kokkos["default_execution_space"].get<std::string>());
  benchmark::AddCustomContext("kokkos_concurrency",
                              std::to_string(kokkos["concurrency"].get<int>()));
  benchmark::AddCustomContext("kokkos_configuration",
                              one_line(kokkos["configuration"].get<std::string>()));
  const nlohmann::json device = karma::describe_device();
  benchmark::AddCustomContext("device", device.value("name", std::string("unknown")));
  benchmark::AddCustomContext("device_json", device.dump());
  benchmark::AddCustomContext("microbench_sizes", sizes == Sizes::tiny ? "tiny" : "standard");
  benchmark::AddCustomContext("microbench_element_types",
                              "int: Sum3D, Stencil3D, TinyMatrixSum, Subspan3D; double: MatVec");
  benchmark::AddCustomContext("microbench_bytes",
                              "per execution, each input element read once and each output "
                              "element written once (TinyMatrixSum's out: read and written)");
}

// What the command line asks for (read_command_line).
struct Options {
  Sizes sizes = Sizes::standard;
  std::vector<std::string> args;  // for Kokkos and Google Benchmark
  bool has_out = false, has_format = false, listing = false, version = false;
  std::string out_path;
};

// The command line: karma-microbench's own flags read into `opt`, Google
// Benchmark's and Kokkos' kept in opt.args; an exit code where it ends the
// run here (--help, --help=json, a bad --sizes).
std::optional<int> read_command_line(int argc, char* argv[], Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_usage(argv[0]);
      return exit_verified;
    }
    if (arg == "--help=json") {
      // It reads no deck: the schema of one with no keys, so that tools
      // asking every mini-app for its deck keys get an answer here too.
      std::cout << karma::Schema().json_schema("karma-microbench deck (it reads none)").dump(2)
                << "\n";
      return exit_verified;
    }
    if (starts_with(arg, "--sizes=")) {
      const std::string value = arg.substr(8);
      if (value != "standard" && value != "tiny") {
        std::cerr << "karma-microbench: " << arg << ": expected --sizes=standard or --sizes=tiny\n";
        return exit_usage;
      }
      opt.sizes = value == "tiny" ? Sizes::tiny : Sizes::standard;
      continue;
    }
    if (arg == "--raw-twin") {
      raw_twins() = true;
      continue;
    }
    if (arg == "--version") {
      opt.version = true;
      continue;
    }
    if (starts_with(arg, "--benchmark_out=")) {
      opt.has_out = true;
      opt.out_path = arg.substr(16);
    }
    if (starts_with(arg, "--benchmark_out_format=")) opt.has_format = true;
    if (arg == "--benchmark_list_tests" || arg == "--benchmark_list_tests=true") opt.listing = true;
    opt.args.push_back(arg);
  }
  return std::nullopt;
}

// The exit code of a run of `ran` benchmarks, with its RESULT line: a wrong
// answer, a benchmark that could not run, or none that matched the filter.
int verdict(std::size_t ran, bool listing, const std::string& out_path) {
  if (listing) return ran == 0 ? exit_usage : exit_verified;
  if (ran == 0) {
    std::cerr << "karma-microbench: no benchmark matches the filter\n";
    // Google Benchmark has opened the file and written nothing.
    std::error_code ec;
    if (fs::is_regular_file(out_path, ec) && fs::file_size(out_path, ec) == 0)
      fs::remove(out_path, ec);
    return exit_usage;
  }
  const Outcome& o = outcome();
  if (o.wrong_answers > 0) {
    std::cout << "RESULT: FAILED: " << o.wrong_answers << " benchmark run(s) computed a wrong "
              << "answer\n";
    return exit_wrong_answer;
  }
  if (o.resource_errors > 0) {
    std::cout << "RESULT: ERROR: " << o.resource_errors << " benchmark run(s) could not run\n";
    return exit_resource;
  }
  std::cout << "RESULT: PASSED\n";
  return exit_verified;
}

}  // namespace

int main(int argc, char* argv[]) {
  Options opt;
  if (const auto code = read_command_line(argc, argv, opt)) return *code;
  try {
    karma::check_kokkos_flags(opt.args);
  } catch (const karma::InputError& e) {
    std::cerr << "karma-microbench: " << e.what() << "\n";
    return exit_usage;
  }
  if (opt.version) {
    std::cout << karma::version_line("karma-microbench") << "\n";
    return exit_verified;
  }
  if (!opt.has_out) {
    opt.out_path = default_output();
    opt.args.push_back("--benchmark_out=" + opt.out_path);
  }
  if (!opt.has_format) opt.args.push_back("--benchmark_out_format=json");
  if (const std::string problem =
          karma::output_path_problem("--benchmark_out=" + opt.out_path, opt.out_path);
      !problem.empty()) {
    std::cerr << "karma-microbench: " << problem << "\n";
    return exit_usage;
  }

  std::vector<char*> arg_pointers{argv[0]};
  for (auto& a : opt.args) arg_pointers.push_back(a.data());
  arg_pointers.push_back(nullptr);
  int count = static_cast<int>(arg_pointers.size()) - 1;

  karma::choose_module_loading();
  Kokkos::initialize(count, arg_pointers.data());
  try {
    karma::check_kokkos_flags_consumed(count, arg_pointers.data());
  } catch (const karma::InputError& e) {
    std::cerr << "karma-microbench: " << e.what() << "\n";
    Kokkos::finalize();
    return exit_usage;
  }
  int code = exit_verified;
  {
    // Kokkos has read its flags; Google Benchmark must not see them.
    std::vector<char*> rest;
    for (int i = 0; i < count; ++i)
      if (!starts_with(arg_pointers[i], "--kokkos-")) rest.push_back(arg_pointers[i]);
    rest.push_back(nullptr);
    int rest_count = static_cast<int>(rest.size()) - 1;
    benchmark::Initialize(&rest_count, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) {
      code = exit_usage;
    } else {
      add_context(opt.sizes);
      std::string command = "karma-microbench";
      for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
      karma::profiling::declare_run(
          "microbench", {{"karma.command_line", command},
                         {"karma.sizes", opt.sizes == Sizes::tiny ? "tiny" : "standard"},
                         {"karma.benchmark_out", opt.out_path}});
      register_all(opt.sizes);
      const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
      code = verdict(ran, opt.listing, opt.out_path);
      if (!opt.listing && ran > 0) std::cout << "results: " << opt.out_path << "\n";
    }
    benchmark::Shutdown();
  }
  Kokkos::finalize();
  return code;
}
