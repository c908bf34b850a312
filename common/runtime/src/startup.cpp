// run_main: a mini-app's life in order, from --version to the verdict.
#include "console.hpp"
#include "placement.hpp"

#include "karma/app.hpp"
#include "karma/output.hpp"
#include "karma/results_schema.hpp"

#include "karma/build_info.hpp"
#include "karma/comm.hpp"
#include "karma/energy.hpp"
#include "karma/failure.hpp"
#include "karma/profiling.hpp"
#include "karma/run_rules.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace karma {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The run section as the harness applied it, beside the app's problem and
// in its summary, unless the app records what it applied (microbench:
// Google Benchmark's repetitions).
void record_run(const RunSettings& run, Report& report) {
  if (report.problem.contains("repetitions")) return;
  record_run_settings(run, report.problem);
  report.summary += run_settings_summary(run);
}

// Decided before the run, so a bad --output costs no run time.
std::string choose_output(const std::string& app, const CommandLine& cli, const Deck& deck,
                          std::chrono::system_clock::time_point start) {
  if (!cli.output.empty()) {
    if (const std::string problem = output_path_problem("--output " + cli.output, cli.output);
        !problem.empty())
      throw InputError(problem);
    return cli.output;
  }
  const std::string dir = read_run_settings(deck).results_dir;
  if (const std::string problem = results_dir_problem(dir); !problem.empty())
    deck.fail("run.results_dir", problem);
  return default_output_name(dir, app, start);
}

nlohmann::json stats_json(const Stats& s) {
  return {{"count", s.count}, {"min", s.min}, {"median", s.median},
          {"mean", s.mean},   {"max", s.max}, {"stddev", s.stddev}};
}

// Each kernel's results, with its fractions of the devices' peaks.
nlohmann::json kernels_json(const App& app, const Report& report, const nlohmann::json& ranks) {
  // The devices' peaks, each device once; kernels report their fractions.
  std::set<std::string> seen;
  double peak_bandwidth = 0, peak_flops = 0;
  std::string no_bandwidth, no_flops;
  const std::string precision = report.problem.value("precision", "");
  for (const auto& r : ranks) {
    const nlohmann::json& d = r["device"];
    if (!seen.insert(r["host"].get<std::string>() + " " + d.value("pci_bus_id", "")).second)
      continue;
    if (d.contains("peak_memory_bandwidth_GBps"))
      peak_bandwidth += d["peak_memory_bandwidth_GBps"].get<double>();
    else
      no_bandwidth = d.value("peak_memory_bandwidth_from", "unknown");
    if (d.contains("peak_GFLOPs") && d["peak_GFLOPs"].contains(precision))
      peak_flops += d["peak_GFLOPs"][precision].get<double>();
    else
      no_flops = precision.empty() ? "the problem names no precision"
                                   : d.value("peak_GFLOPs_from", "unknown");
  }
  const auto efficiency = [&](const nlohmann::json& k) {
    nlohmann::json e = nlohmann::json::object();
    // The kernel's bandwidth: the harness's best, else a figure of merit in
    // GB/s (contact's statistics: effective bytes over all sweeps).
    const bool in_gbps = k["fom"].value("units", "") == "GB/s";
    if (k.contains("bandwidth_GBps") || in_gbps) {
      if (no_bandwidth.empty()) {
        const double gbps = k.contains("bandwidth_GBps") ? k["bandwidth_GBps"]["best"].get<double>()
                                                         : k["fom"]["value"].get<double>();
        e["peak_bandwidth_GBps"] = peak_bandwidth;
        e["fraction_of_peak_bandwidth"] = gbps / peak_bandwidth;
      } else {
        e["peak_bandwidth"] = no_bandwidth;
      }
    }
    if (k.contains("GFLOPs")) {
      if (no_flops.empty()) {
        e["peak_GFLOPs"] = peak_flops;
        e["fraction_of_peak_flops"] = k["GFLOPs"]["best"].get<double>() / peak_flops;
      } else {
        e["peak_flops"] = no_flops;
      }
    }
    return e;
  };

  auto kernels = nlohmann::json::array();
  for (const auto& k : report.kernels) {
    nlohmann::json j = {{"name", k.name},
                        {"implementation", k.implementation},
                        {"variant", k.variant},
                        {"bytes", k.bytes},
                        {"flops", k.flops},
                        {"time_s", stats_json(k.time)},
                        {"fom",
                         {{"value", k.fom},
                          {"units", k.fom_units},
                          {"higher_is_better", k.higher_is_better},
                          {"from", "minimum time"}}}};
    if (app.code && !k.code.empty()) {
      const CodeVersion v = code_version(*app.code, k.code, k.launch);
      j["code_version"] = v.version;
      j["code"] = {{"symbols", k.code},
                   {"source", v.source},
                   {"launch", k.launch},
                   {"scheme", code_version_scheme}};
    } else if (app.code) {
      throw std::logic_error("kernel '" + k.name + "' names no code: set Variant::code");
    }
    j.update(k.extra);
    if (const auto e = efficiency(j); !e.empty()) j["efficiency"] = e;
    kernels.push_back(j);
  }
  return kernels;
}

nlohmann::json results_json(const App& app, const CommandLine& cli, const Context& context,
                            const Report& report, const nlohmann::json& ranks,
                            const nlohmann::json& energy_ranks, const std::string& command,
                            const std::string& started, double duration_s) {
  const Deck& deck = context.deck;
  nlohmann::json doc;
  doc["schema_version"] = results_schema_version;
  doc["app"] = app.name;
  doc["suite"] = {{"name", "karma"},
                  {"version", build_info::version},
                  {"git_describe", build_info::git_describe},
                  {"git_dirty", build_info::git_dirty}};
  doc["date"] = started;
  doc["duration_s"] = duration_s;
  doc["command_line"] = command;
  // The schema travels with the results: a key that an older result lacks
  // is read at the default declared here, so the tools need no executable.
  doc["deck"] = {{"path", deck.source()},
                 {"sha256", deck.sha256()},
                 {"overrides", cli.overrides},
                 {"resolved", deck.resolved()},
                 {"schema", app.schema.json_schema("karma-" + app.name + " deck")}};
  doc["job"] = describe_job();

  std::vector<std::string> hosts;
  int ranks_per_node = 0;
  for (const auto& r : ranks) {
    const std::string h = r["host"];
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
    ranks_per_node = std::max(ranks_per_node, r["local_size"].get<int>());
  }
  doc["hosts"] = hosts;
  nlohmann::json comm_path = {{"path", comm::path().name},
                              {"requested", comm::path().requested},
                              {"why", comm::path().why}};
  if (!comm::path().small_sums.empty()) comm_path["small_sums"] = comm::path().small_sums;
  doc["mpi"] = {{"enabled", build_info::mpi_enabled},
                {"library_version", comm::library_version()},
                {"ranks", comm::size()},
                {"nodes", comm::node_count()},
                {"ranks_per_node", ranks_per_node},
                {"comm", comm_path},
                {"shared_devices", detail::shared_devices(ranks)}};
  doc["ranks"] = ranks;
  doc["kokkos"] = describe_kokkos();
  doc["build"] = {{"type", build_info::build_type},
                  {"compiler", build_info::compiler},
                  {"cxx_flags", build_info::cxx_flags},
                  {"cuda_flags", build_info::cuda_flags}};
  doc["problem"] = report.problem;

  doc["kernels"] = kernels_json(app, report, ranks);
  doc["energy"] = {{"window_s", context.run.energy_window}, {"ranks", energy_ranks}};

  auto checks = nlohmann::json::array();
  for (const auto& c : report.checks)
    checks.push_back({{"name", c.name},
                      {"measure", c.measure},
                      {"error", c.error},
                      {"tolerance", c.tolerance},
                      {"passed", c.passed()}});
  doc["verification"] = {{"passed", report.passed()}, {"checks", checks}};
  doc["result"] = report.passed() ? "PASSED" : "FAILED";
  doc["reportable"] =
      reportable_record(app.schema, deck,
                        {app.name, comm::size(), report.passed(), build_info::build_type,
                         doc["kokkos"].value("version", "")});
  return doc;
}

// What the end of a run needs to know of its start.
struct RunStart {
  std::string executable, command, output;
  std::chrono::system_clock::time_point time;
};
struct Gathered {
  nlohmann::json ranks, energy_ranks;
};

// The root's end of a run: its results file, its summary, table, figure of
// merit lines and verdict; returns `code`, or a failed write's.
int finish_on_root(const RunStart& run, const App& app, const CommandLine& cli,
                   const Context& context, const Report& report, const Gathered& gathered,
                   int code) {
  const double duration =
      std::chrono::duration<double>(std::chrono::system_clock::now() - run.time).count();
  const nlohmann::json doc =
      results_json(app, cli, context, report, gathered.ranks, gathered.energy_ranks, run.command,
                   utc_stamp(run.time, "%Y-%m-%dT%H:%M:%SZ"), duration);
  std::string output = run.output;
  if (cli.output.empty()) {
    std::error_code ec;
    fs::create_directories(context.run.results_dir, ec);
    output = unique_path(output);
  }
  if (context.verbose()) {
    std::printf("%s\n", report.summary.c_str());
    detail::print_table(run.executable, report);
  }
  try {
    inject_failure_at("output");
    write_file_atomically(output, doc.dump(2) + "\n");
    if (context.verbose()) std::printf("results: %s\n", output.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", run.executable.c_str(), e.what());
    code = e.code();
  }
  detail::print_fom_lines(app, report);
  detail::print_verdict(report, code);
  std::fflush(stdout);
  return code;
}

// Kokkos' argv: the program, the --kokkos-* flags (`args`, which must
// outlive it), a null. --quiet silences Kokkos' start-up warnings too (four
// lines where OMP_PROC_BIND is unset).
std::vector<char*> kokkos_command_line(char* program, std::vector<std::string>& args, bool quiet) {
  if (quiet) args.emplace_back("--kokkos-disable-warnings");
  std::vector<char*> argv = {program};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

}  // namespace

int run_main(int argc, char** argv, const App& app) {
  const std::string executable = "karma-" + app.name;
  const auto start = std::chrono::system_clock::now();
  if (const auto code = answer_version(executable, argc, argv)) return *code;
  choose_module_loading();  // before MPI, which may start the CUDA runtime
  comm::init(&argc, &argv);

  std::string command = executable;
  std::vector<std::string> ours;
  std::vector<std::string> kokkos_args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    command += " " + arg;
    (starts_with(arg, "--kokkos-") ? kokkos_args : ours).push_back(arg);
  }

  install_interrupt_handlers(executable);

  CommandLine cli;
  std::optional<Deck> deck;
  std::string output;
  std::optional<Error> failure;
  try {
    // First: the value of a `--kokkos-x v` would be taken for the deck.
    check_kokkos_flags(kokkos_args);
    cli = parse_command_line(ours);
    if (!cli.help) {
      deck = Deck::load(cli.deck_path, app.schema, cli.overrides);
      output = choose_output(app.name, cli, *deck, start);
    }
  } catch (const Error& e) {
    failure = e;
  }
  // The first collective: an input error on any one rank ends them all here.
  const int settled =
      settle_start(executable, failure ? &*failure : nullptr, deck ? &*deck : nullptr);
  if (settled != exit_ok) {
    comm::finalize();
    return settled;
  }
  if (detail::print_help(executable, app, cli)) {
    comm::finalize();
    return exit_ok;
  }

  detail::choose_device(kokkos_args);
  std::vector<char*> kokkos_argv = kokkos_command_line(argv[0], kokkos_args, cli.quiet);
  int kokkos_argc = static_cast<int>(kokkos_argv.size()) - 1;
  Kokkos::initialize(kokkos_argc, kokkos_argv.data());

  const int device_id = current_device_id();

  int code = exit_ok;
  try {
    // Alike on every rank (one argv), so all leave together.
    check_kokkos_flags_consumed(kokkos_argc, kokkos_argv.data());
    inject_failure_at("start");
    // What ties a tool's profile to this run and its results JSON.
    profiling::declare_run(app.name, {{"karma.command_line", command},
                                      {"karma.deck", deck->source()},
                                      {"karma.deck_sha256", deck->sha256()},
                                      {"karma.overrides", nlohmann::json(cli.overrides).dump()},
                                      {"karma.ranks", std::to_string(comm::size())},
                                      {"karma.rank", std::to_string(comm::rank())}});
    const Context context{*deck, cli, device_id, read_run_settings(*deck)};
    const nlohmann::json ranks = detail::gather_ranks();
    if (context.verbose()) detail::print_ranks(executable, ranks);
    const nlohmann::json shared = detail::shared_devices(ranks);
    detail::choose_comm_path(context, !shared.empty());
    detail::warn_shared_devices(executable, shared);

    energy::start(context.run.energy, context.run.energy_window,
                  ranks[static_cast<std::size_t>(comm::rank())]["device"], hostname());
    Report report = app.run(context);
    energy::finish();
    record_run(context.run, report);
    const nlohmann::json energy_ranks = allgather_json(energy::describe());
    inject_failure_at("verification");
    // Results are written only once every rank has its report: a rank that
    // failed instead never reaches this, and its abort ends rank 0 here.
    comm::barrier();
    code = report.passed() ? exit_ok : exit_verification_failed;

    if (comm::is_root())
      code = finish_on_root({executable, command, output, start}, app, cli, context, report,
                            {ranks, energy_ranks}, code);
  } catch (const Error& e) {
    code = settle_error(executable, e);
  } catch (const std::exception& e) {
    code = settle_error(executable, Error(exit_runtime_error, e.what()));
  }
  if (code != exit_ok) leaving_with(code);

  Kokkos::finalize();
  comm::finalize();
  return code;
}

}  // namespace karma
