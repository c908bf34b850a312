#include "console.hpp"

#include "karma/build_info.hpp"
#include "karma/comm.hpp"
#include "karma/failure.hpp"
#include "karma/system.hpp"

#include <cstdio>

namespace karma::detail {

bool print_help(const std::string& executable, const App& app, const CommandLine& cli) {
  if (cli.help_json) {
    nlohmann::json schema = app.schema.json_schema(executable + " deck");
    schema["x-karma-kernels"] = app.kernels.json();  // an extension key: schema readers skip it
    if (comm::is_root()) std::printf("%s\n", schema.dump(2).c_str());
    return true;
  }
  if (cli.help) {
    if (comm::is_root())
      std::printf("%s: %s\n%s\ndeck keys:\n%s", executable.c_str(), app.summary.c_str(),
                  usage(executable).c_str(), app.schema.help_text().c_str());
    return true;
  }
  return false;
}

void print_ranks(const std::string& executable, const nlohmann::json& ranks) {
  std::printf("%s %s (%s), Kokkos %s, %d rank(s) on %d node(s)\n", executable.c_str(),
              build_info::version, build_info::git_describe,
              describe_kokkos()["version"].get<std::string>().c_str(), comm::size(),
              comm::node_count());
  for (const auto& r : ranks)
    std::printf("  rank %d on %s: %s (%s)\n", r["rank"].get<int>(),
                r["host"].get<std::string>().c_str(),
                r["device"]["name"].get<std::string>().c_str(),
                r["device"]["execution_space"].get<std::string>().c_str());
  std::fflush(stdout);
}

void warn_shared_devices(const std::string& executable, const nlohmann::json& shared) {
  if (!comm::is_root()) return;
  for (const auto& s : shared)
    std::fprintf(stderr,
                 "%s: warning: ranks %s share the GPU %s on %s (more ranks than visible GPUs): "
                 "their figures are not one rank a device\n",
                 executable.c_str(), s["ranks"].dump().c_str(),
                 s["uuid"].get<std::string>().c_str(), s["host"].get<std::string>().c_str());
}

void print_table(const std::string& executable, const Report& report) {
  std::printf("\n%-12s %14s %8s %12s %12s %12s %9s\n", "kernel", "FOM (best)", "units", "min ms",
              "median ms", "max ms", "stddev%");
  for (const auto& k : report.kernels) {
    std::printf("%-12s %14.1f %8s %12.4f %12.4f %12.4f %9.2f\n", k.name.c_str(), k.fom,
                k.fom_units.c_str(), k.time.min * 1e3, k.time.median * 1e3, k.time.max * 1e3,
                k.time.mean > 0 ? 100.0 * k.time.stddev / k.time.mean : 0.0);
  }
  std::printf("\nverification:\n");
  for (const auto& c : report.checks) {
    std::printf("  %-14s %s %.3e (tolerance %.3e) %s\n", c.name.c_str(), c.measure.c_str(), c.error,
                c.tolerance, c.passed() ? "ok" : "FAILED");
  }
  std::printf("%s: %s\n\n", executable.c_str(), report.passed() ? "verified" : "WRONG ANSWER");
}

void print_fom_lines(const App& app, const Report& report) {
  for (const auto& k : report.kernels) {
    std::printf("FOM: app=%s kernel=%s value=%.6g units=%s higher_is_better=%d ranks=%d\n",
                app.name.c_str(), k.name.c_str(), k.fom, k.fom_units.c_str(),
                k.higher_is_better ? 1 : 0, comm::size());
    // The per-watt companion, when the kernel's energy was measured.
    const auto e = k.extra.find("energy");
    if (e != k.extra.end() && e->value("status", "") == "measured")
      std::printf("FOM_PER_WATT: app=%s kernel=%s value=%.6g units=%s/W watts=%.6g ranks=%d\n",
                  app.name.c_str(), k.name.c_str(), (*e)["fom_per_watt"]["value"].get<double>(),
                  k.fom_units.c_str(), (*e)["average_power_W"].get<double>(), comm::size());
  }
}

void print_verdict(const Report& report, int code) {
  if (code == exit_ok)
    std::printf("RESULT: PASSED\n");
  else if (code == exit_verification_failed) {
    std::string failed;
    for (const auto& c : report.checks)
      if (!c.passed()) failed += (failed.empty() ? "" : ",") + c.name;
    std::printf("RESULT: FAILED reason=verification checks=%s\n", failed.c_str());
  } else
    std::printf("RESULT: FAILED reason=%s\n", failure_reason(code));
}

}  // namespace karma::detail
