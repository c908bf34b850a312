// run_main: a mini-app's life in order, read top to bottom here: --version,
// MPI, the command line, the deck, settle_start, the device, Kokkos, the
// run, then the root's end. What each step does at length is elsewhere:
// placement.cpp (device, comm path), results_document.cpp, console.cpp and
// finish.cpp.
#include "console.hpp"
#include "finish.hpp"
#include "placement.hpp"
#include "results_document.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/energy.hpp"
#include "karma/failure.hpp"
#include "karma/profiling.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace karma {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

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
      output = detail::choose_output(app.name, cli, *deck, start);
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
    nlohmann::json ranks = detail::gather_ranks();
    if (context.verbose()) detail::print_ranks(executable, ranks);
    const nlohmann::json shared = detail::shared_devices(ranks);
    detail::choose_comm_path(context, !shared.empty());
    detail::warn_shared_devices(executable, shared);

    energy::start(context.run.energy, context.run.energy_window,
                  ranks[static_cast<std::size_t>(comm::rank())]["device"], hostname());
    Report report = app.run(context);
    require_declared(app.name, app.kernels, report.kernels);
    energy::finish();
    detail::record_state_at_end(ranks);
    detail::record_run(context.run, report);
    const nlohmann::json energy_ranks = allgather_json(energy::describe());
    inject_failure_at("verification");
    // Results are written only once every rank has its report: a rank that
    // failed instead never reaches this, and its abort ends rank 0 here.
    comm::barrier();
    code = report.passed() ? exit_ok : exit_verification_failed;

    if (comm::is_root())
      code = detail::finish_on_root({executable, command, output, start}, app, cli, context, report,
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
