// A mini-app's command line: parsing it, --help's usage, --version before
// anything starts, and the --kokkos-* flags this Kokkos does not read.
#include "karma/app.hpp"

#include "karma/error.hpp"
#include "karma/system.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace karma {

// --- command line ------------------------------------------------------------

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// This Kokkos' spelling of a flag that only other Kokkos versions read, or
// null: Kokkos 3.7 renamed or replaced these and 4.3 dropped the old names
// (parse_command_line_arguments of Kokkos 3.4.01, 3.7.00 and 4.6.01).
const char* spelling_here(const std::string& flag) {
  static const std::vector<std::pair<std::string, const char*>> spellings = {
#if KOKKOS_VERSION < 30700
    {"--kokkos-num-threads", "--kokkos-threads=N"},
    {"--kokkos-map-device-id-by", "--kokkos-num-devices=N"},
    {"--kokkos-tools-libs", "--kokkos-tools-library=LIB"},
#elif KOKKOS_VERSION >= 40300
    {"--kokkos-threads", "--kokkos-num-threads=N"},
    {"--kokkos-device", "--kokkos-device-id=N"},
    {"--kokkos-num-devices", "--kokkos-map-device-id-by=mpi_rank"},
    {"--kokkos-ndevices", "--kokkos-map-device-id-by=mpi_rank"},
#endif
  };
  for (const auto& [other, here] : spellings)
    if (flag == other) return here;
  return nullptr;
}

// This Kokkos' flags that take a value, which it reads only after '='
// (without one Kokkos 3.4 reads past the argument's end and 4.x aborts).
bool takes_value(const std::string& flag) {
  static const std::vector<std::string> flags = {
    "--kokkos-device-id",
    "--kokkos-tools-library",
    "--kokkos-tools-args",
#if KOKKOS_VERSION < 40300
    "--kokkos-threads",
    "--kokkos-numa",
    "--kokkos-device",
    "--kokkos-num-devices",
    "--kokkos-ndevices",
#endif
#if KOKKOS_VERSION >= 30700
    "--kokkos-num-threads",
    "--kokkos-map-device-id-by",
    "--kokkos-tools-libs",
#endif
  };
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

InputError unknown_kokkos_flag(const std::string& arg) {
  const char* here = spelling_here(arg.substr(0, arg.find('=')));
  return InputError("unknown Kokkos flag '" + arg + "': Kokkos " + kokkos_version_string() +
                    (here ? std::string(" spells it ") + here : " has no such flag"));
}

}  // namespace

std::string usage(const std::string& executable) {
  return "usage: " + executable +
         " DECK.yaml [--set key=value ...] [--output FILE.json] [--quiet] [--help] [--version]"
         " [--kokkos-...]\n"
         "  --set key=value   override a deck key (repeatable, each key once), e.g.\n"
         "                    --set run.repetitions=10\n"
         "  --output FILE     write the results JSON to FILE (default: a time-stamped file in\n"
         "                    run.results_dir)\n"
         "  --quiet           print only the FOM and RESULT lines\n"
         "  --help            this text and every deck key\n"
         "  --help=json       the deck's keys as a JSON Schema (types, defaults, ranges,\n"
         "                    choices, meanings)\n"
         "  --version         the suite's version, Kokkos, compiler and MPI of this build\n"
         "  (an option's value may not be another option; --output=--name if it must)\n"
         "  --kokkos-...      Kokkos' flags; one this Kokkos (" +
         kokkos_version_string() +
         ") does not read is an error\n"
         "                    (threads: --kokkos-threads=4 before Kokkos 3.7,\n"
         "                    --kokkos-num-threads=4 from 3.7 on)\n"
         "exit codes: 0 ok, 1 verification failed, 2 bad input or usage, 3 resource or run-time "
         "error\n";
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cli;
  auto value_of = [&](std::size_t& i, const std::string& option) {
    const std::string& arg = args[i];
    if (arg.size() > option.size() && arg[option.size()] == '=')
      return arg.substr(option.size() + 1);
    if (i + 1 >= args.size()) throw InputError(option + " needs a value");
    // A forgotten value must not take the next option: `--output --quiet`
    // would write a file named --quiet. `--output=--quiet` is still possible.
    const std::string& next = args[i + 1];
    if (starts_with(next, "--") || next == "-h" || next == "-q")
      throw InputError(option + " needs a value, and '" + next + "' is an option (" + option + "=" +
                       next + " if it is meant as the value)");
    return args[++i];
  };
  auto is = [](const std::string& arg, const std::string& option) {
    return arg == option || arg.rfind(option + "=", 0) == 0;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      cli.help = true;
    } else if (arg == "--version") {
      cli.version = true;
    } else if (arg == "--help=json") {
      cli.help = cli.help_json = true;
    } else if (arg == "--quiet" || arg == "-q") {
      cli.quiet = true;
    } else if (is(arg, "--set")) {
      const std::string set = value_of(i, "--set");
      const std::string key = set.substr(0, set.find('='));
      for (const auto& earlier : cli.overrides)  // the last winning in silence hid typos
        if (earlier.substr(0, earlier.find('=')) == key)
          throw InputError("--set " + key + " given twice: '" + earlier + "' and '" + set + "'");
      cli.overrides.push_back(set);
    } else if (is(arg, "--output")) {
      const std::string output = value_of(i, "--output");
      if (!cli.output.empty())
        throw InputError("--output given twice: '" + cli.output + "' and '" + output + "'");
      cli.output = output;
      if (cli.output.empty()) throw InputError("--output needs a file name");
    } else if (!arg.empty() && arg[0] == '-') {
      throw InputError("unknown option '" + arg + "' (see --help)");
    } else if (cli.deck_path.empty()) {
      cli.deck_path = arg;
    } else {
      throw InputError("more than one deck given: '" + cli.deck_path + "' and '" + arg + "'");
    }
  }
  if (!cli.help && !cli.version && cli.deck_path.empty())
    throw InputError("no deck given (see --help)");
  return cli;
}

void check_kokkos_flags(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (!starts_with(arg, "--kokkos-")) continue;
    const auto equals = arg.find('=');
    const std::string flag = arg.substr(0, equals);
    if (spelling_here(flag)) throw unknown_kokkos_flag(arg);
    if (takes_value(flag) && (equals == std::string::npos || equals + 1 == arg.size()))
      throw InputError(flag + " needs a value, written " + flag + "=VALUE (Kokkos reads no " +
                       "separate value)");
  }
}

void check_kokkos_flags_consumed(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i)
    if (starts_with(argv[i], "--kokkos-")) throw unknown_kokkos_flag(argv[i]);
}

std::optional<int> answer_version(const std::string& executable, int argc, char** argv) {
  std::vector<std::string> ours;
  for (int i = 1; i < argc; ++i)
    if (!starts_with(argv[i], "--kokkos-")) ours.emplace_back(argv[i]);
  if (std::find(ours.begin(), ours.end(), "--version") == ours.end()) return std::nullopt;
  // The rest of the line is still read: a bad option is no more ignored here.
  try {
    parse_command_line(ours);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", executable.c_str(), e.what());
    return e.code();
  }
  std::printf("%s\n", version_line(executable).c_str());
  return exit_ok;
}

}  // namespace karma
