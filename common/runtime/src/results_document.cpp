#include "results_document.hpp"
#include "placement.hpp"

#include "karma/build_info.hpp"
#include "karma/comm.hpp"
#include "karma/failure.hpp"
#include "karma/output.hpp"
#include "karma/results_schema.hpp"
#include "karma/run_rules.hpp"
#include "karma/system.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace karma {

namespace {

nlohmann::json stats_json(const Stats& s) {
  return {{"count", s.count}, {"min", s.min}, {"median", s.median},
          {"mean", s.mean},   {"max", s.max}, {"stddev", s.stddev}};
}

// The devices' peaks, summed over the devices each counted once, or why
// one is unknown.
struct DevicePeaks {
  double bandwidth_GBps = 0, GFLOPs = 0;
  std::string no_bandwidth, no_flops;  // empty where the peak is known
};

// `precision`: the problem's ("double", ...), the key of peak_GFLOPs.
DevicePeaks device_peaks(const nlohmann::json& ranks, const std::string& precision) {
  DevicePeaks peaks;
  std::set<std::string> seen;
  for (const auto& r : ranks) {
    const nlohmann::json& d = r["device"];
    if (!seen.insert(r["host"].get<std::string>() + " " + d.value("pci_bus_id", "")).second)
      continue;
    if (d.contains("peak_memory_bandwidth_GBps"))
      peaks.bandwidth_GBps += d["peak_memory_bandwidth_GBps"].get<double>();
    else
      peaks.no_bandwidth = d.value("peak_memory_bandwidth_from", "unknown");
    if (d.contains("peak_GFLOPs") && d["peak_GFLOPs"].contains(precision))
      peaks.GFLOPs += d["peak_GFLOPs"][precision].get<double>();
    else
      peaks.no_flops = precision.empty() ? "the problem names no precision"
                                         : d.value("peak_GFLOPs_from", "unknown");
  }
  return peaks;
}

// A kernel's fractions of the peaks (`k`: its results); empty where it
// reports neither bandwidth nor flops.
nlohmann::json efficiency_json(const nlohmann::json& k, const DevicePeaks& peaks) {
  nlohmann::json e = nlohmann::json::object();
  // The kernel's bandwidth: the harness's best, else a figure of merit in
  // GB/s (contact's statistics: effective bytes over all sweeps).
  const bool in_gbps = k["fom"].value("units", "") == "GB/s";
  if (k.contains("bandwidth_GBps") || in_gbps) {
    if (peaks.no_bandwidth.empty()) {
      const double gbps = k.contains("bandwidth_GBps") ? k["bandwidth_GBps"]["best"].get<double>()
                                                       : k["fom"]["value"].get<double>();
      e["peak_bandwidth_GBps"] = peaks.bandwidth_GBps;
      e["fraction_of_peak_bandwidth"] = gbps / peaks.bandwidth_GBps;
    } else {
      e["peak_bandwidth"] = peaks.no_bandwidth;
    }
  }
  if (k.contains("GFLOPs")) {
    if (peaks.no_flops.empty()) {
      e["peak_GFLOPs"] = peaks.GFLOPs;
      e["fraction_of_peak_flops"] = k["GFLOPs"]["best"].get<double>() / peaks.GFLOPs;
    } else {
      e["peak_flops"] = peaks.no_flops;
    }
  }
  return e;
}

// Each kernel's results, with its fractions of the devices' peaks.
nlohmann::json kernels_json(const App& app, const Report& report, const nlohmann::json& ranks) {
  const DevicePeaks peaks = device_peaks(ranks, report.problem.value("precision", ""));
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
    if (k.fom_count > 0) j["fom"]["count"] = k.fom_count;  // what the rate counts, per execution
    if (const auto e = efficiency_json(j, peaks); !e.empty()) j["efficiency"] = e;
    kernels.push_back(j);
  }
  return kernels;
}

}  // namespace

void record_run_settings(const RunSettings& run, nlohmann::json& problem) {
  if (run.repetitions > 0) problem["repetitions"] = run.repetitions;
  problem["warmup"] = run.warmup;
}

std::string run_settings_summary(const RunSettings& run) {
  if (run.repetitions == 0) return "";
  return "; " + std::to_string(run.repetitions) + " repetitions after " +
         std::to_string(run.warmup) + " warm-up(s)";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  set_file_to_remove_on_interrupt(temporary);
  auto failure = [&](const std::string& what) {
    const int err = errno;
    unlink(temporary.c_str());
    return Error(exit_runtime_error, what + ": " + std::strerror(err));
  };
  // POSIX calls, not a stream, for fsync: without it a crash of the node
  // after the rename could leave the name on an empty or partial file.
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw failure("cannot write '" + temporary + "'");
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Error e = failure("cannot write '" + temporary + "'");
      close(fd);
      throw e;
    }
    done += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) {
    const Error e = failure("cannot write '" + temporary + "' to disk (fsync)");
    close(fd);
    throw e;
  }
  if (close(fd) != 0) throw failure("cannot write '" + temporary + "'");
  if (rename(temporary.c_str(), path.c_str()) != 0)
    throw failure("cannot rename results into '" + path + "'");
  set_file_to_remove_on_interrupt("");
  // The rename itself is durable only once the directory is synced.
  const fs::path parent = fs::path(path).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  const int dir = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    throw Error(exit_runtime_error, "cannot open directory '" + directory + "' to sync '" + path +
                                        "': " + std::strerror(errno));
  // EINVAL: a file system that cannot sync directories (some network ones);
  // there is nothing more to do there.
  if (fsync(dir) != 0 && errno != EINVAL) {
    const int err = errno;
    close(dir);
    throw Error(exit_runtime_error, "cannot sync directory '" + directory + "' after writing '" +
                                        path + "': " + std::strerror(err));
  }
  close(dir);
}

namespace detail {

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

std::string results_path(const std::string& chosen, const CommandLine& cli,
                         const RunSettings& run) {
  if (!cli.output.empty()) return chosen;
  // Errors are left to the write, which names the file it could not write.
  std::error_code ec;
  fs::create_directories(run.results_dir, ec);
  return unique_path(chosen);
}

void record_run(const RunSettings& run, Report& report) {
  if (report.problem.contains("repetitions")) return;
  record_run_settings(run, report.problem);
  report.summary += run_settings_summary(run);
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
                {"shared_devices", shared_devices(ranks)}};
  doc["ranks"] = ranks;
  doc["kokkos"] = describe_kokkos();
  doc["build"] = {{"type", build_info::build_type},
                  {"compiler", build_info::compiler},
                  {"cxx_flags", build_info::cxx_flags},
                  {"cuda_flags", build_info::cuda_flags}};
  doc["problem"] = report.problem;

  doc["kernel_table"] = app.kernels.json();
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

}  // namespace detail

}  // namespace karma
