#include "finish.hpp"
#include "console.hpp"
#include "results_document.hpp"

#include "karma/failure.hpp"
#include "karma/output.hpp"

#include <cstdio>

namespace karma::detail {

int finish_on_root(const RunStart& run, const App& app, const CommandLine& cli,
                   const Context& context, const Report& report, const Gathered& gathered,
                   int code) {
  const double duration =
      std::chrono::duration<double>(std::chrono::system_clock::now() - run.time).count();
  const nlohmann::json doc =
      results_json(app, cli, context, report, gathered.ranks, gathered.energy_ranks, run.command,
                   utc_stamp(run.time, "%Y-%m-%dT%H:%M:%SZ"), duration);
  const std::string output = results_path(run.output, cli, context.run);
  if (context.verbose()) {
    std::printf("%s\n", report.summary.c_str());
    print_table(run.executable, report);
  }
  try {
    inject_failure_at("output");
    write_file_atomically(output, doc.dump(2) + "\n");
    if (context.verbose()) std::printf("results: %s\n", output.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", run.executable.c_str(), e.what());
    code = e.code();
  }
  print_fom_lines(app, report);
  print_verdict(report, code);
  std::fflush(stdout);
  return code;
}

}  // namespace karma::detail
