// karma-validate-results PATH... [--app NAME] [--ranks N] [--result PASSED|FAILED]
// Checks karma results documents against results/SCHEMA.md and the
// expectations. A PATH is a file, or a directory: every *.json under it,
// recursively, except hidden files and directories and the JSON other karma
// tools write (Google Benchmark, karma-envcapture, karma-batch, karma-compare),
// which are named as skipped. A file named on the command line is always checked.
// Exit 0 when every file conforms, 1 when one does not (not JSON, or each
// problem on a line), 2 on bad usage or input that cannot be read (a missing
// path, an unreadable file or directory, a directory without *.json); 2 wins
// over 1, since a file that could not be read was not checked.
#include "karma/results_schema.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int exit_valid = 0, exit_invalid = 1, exit_usage = 2;

std::string usage() {
  std::string apps;
  for (const auto& a : karma::suite_apps()) apps += (apps.empty() ? "" : "|") + a;
  return "usage: karma-validate-results PATH... [--app " + apps +
         "] [--ranks N] [--result PASSED|FAILED]\n"
         "  PATH            a results JSON file, or a directory: every *.json under it,\n"
         "                  recursively (hidden files and directories, and other karma tools'\n"
         "                  JSON such as Google Benchmark files, are skipped and named)\n"
         "  --app NAME      the mini-app the results must come from\n"
         "  --ranks N       the number of MPI ranks they must report\n"
         "  --result R      the verdict they must carry\n"
         "exit codes: 0 every file valid, 1 a file not valid (its problems on stderr),\n"
         "2 bad usage or input that cannot be read (wins over 1)\n";
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "karma-validate-results: %s\n%s", message.c_str(), usage().c_str());
  std::exit(exit_usage);
}

// Messages may quote bytes of the file (a parser's "last read: ..."): keep
// the terminal's text printable and valid.
std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

struct Tally {
  int valid = 0, invalid = 0, unreadable = 0, skipped = 0;
};

void unreadable(Tally& tally, const std::string& path, const std::string& why) {
  std::fprintf(stderr, "karma-validate-results: %s: %s\n", printable(path).c_str(),
               printable(why).c_str());
  ++tally.unreadable;
}

// The whole file; false (errno set) when it cannot be read.
bool read_file(const std::string& path, std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char buffer[1 << 16];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  errno = err;
  return !failed;
}

// Which other karma tool wrote doc, if one did.
const char* other_tool(const json& doc) {
  if (!doc.is_object()) return nullptr;
  // Another program's figures in the results' shape (BabelStream's --csv,
  // read by karma-batch): no karma run stands behind them.
  if (doc.contains("schema_version") && doc.contains("reference") && doc["reference"].is_object())
    return "a reference result (another program's output, read by karma-batch)";
  if (doc.contains("schema_version")) return nullptr;
  if (doc.contains("context") && doc.contains("benchmarks"))
    return "Google Benchmark JSON (karma-microbench)";
  if (doc.contains("karma_environment")) return "karma-envcapture's environment.json";
  if (doc.contains("karma_batch_manifest")) return "karma-batch's manifest";
  if (doc.contains("karma_compare")) return "karma-compare's JSON";
  return nullptr;
}

void check_file(const std::string& path, bool found_in_directory,
                const karma::ResultsExpectation& expect, Tally& tally) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    unreadable(tally, path, "not a regular file");
    return;
  }
  std::string text;
  if (!read_file(path, text)) {
    unreadable(tally, path, std::string("cannot read: ") + std::strerror(errno));
    return;
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    std::fprintf(stderr, "%s: not JSON: %s\n", printable(path).c_str(),
                 printable(e.what()).c_str());
    ++tally.invalid;
    return;
  }
  if (found_in_directory) {
    if (const char* what = other_tool(doc)) {
      std::printf("%s: skipped: %s, not karma results\n", path.c_str(), what);
      ++tally.skipped;
      return;
    }
  }
  const auto problems = karma::validate_results(doc, expect);
  for (const auto& p : problems)
    std::fprintf(stderr, "%s: %s\n", printable(path).c_str(), printable(p).c_str());
  if (problems.empty()) {
    std::printf("%s: valid karma results\n", path.c_str());
    ++tally.valid;
  } else {
    ++tally.invalid;
  }
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

void check_directory(const std::string& dir, const karma::ResultsExpectation& expect,
                     Tally& tally) {
  std::vector<std::string> files;
  std::error_code ec;
  std::string last = dir;  // where a failure to go on most likely lies
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    last = it->path().string();
    std::error_code type_ec;
    const bool is_directory = it->is_directory(type_ec);
    if (hidden(it->path())) {
      if (is_directory) it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() == ".json" && !is_directory) files.push_back(last);
  }
  if (ec) unreadable(tally, last, "cannot read the directory: " + ec.message());
  if (files.empty() && !ec) unreadable(tally, dir, "no *.json files in this directory or under it");
  std::sort(files.begin(), files.end());  // the same order on every file system
  for (const auto& f : files) check_file(f, true, expect, tally);
}

int run(int argc, char* argv[]) {
  std::vector<std::string> paths;
  karma::ResultsExpectation expect;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (options_done || arg.empty() || arg[0] != '-' || arg == "-") {
      paths.push_back(arg);
    } else if (arg == "--") {
      options_done = true;
    } else if (arg == "--app") {
      expect.app = next();
      const auto& apps = karma::suite_apps();
      if (std::find(apps.begin(), apps.end(), *expect.app) == apps.end())
        usage_error("--app '" + printable(*expect.app) + "' is not a mini-app of the suite");
    } else if (arg == "--ranks") {
      const std::string value = next();
      errno = 0;
      char* rest = nullptr;
      const long long n = std::strtoll(value.c_str(), &rest, 10);
      if (value.empty() || *rest != '\0' || errno == ERANGE || n < 1 || n > INT_MAX)
        usage_error("--ranks '" + printable(value) + "' is not a whole number of ranks >= 1");
      expect.ranks = static_cast<int>(n);
    } else if (arg == "--result") {
      expect.result = next();
      if (*expect.result != "PASSED" && *expect.result != "FAILED")
        usage_error("--result '" + printable(*expect.result) + "': expected PASSED or FAILED");
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", usage().c_str());
      return exit_valid;
    } else {
      usage_error("unknown option '" + printable(arg) + "'");
    }
  }
  if (paths.empty()) usage_error("no file or directory given");

  Tally tally;
  for (const auto& path : paths) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found) {
      unreadable(tally, path, "no such file or directory");
    } else if (ec) {
      unreadable(tally, path, ec.message());
    } else if (fs::is_directory(status)) {
      check_directory(path, expect, tally);
    } else {
      check_file(path, false, expect, tally);
    }
  }
  const int files = tally.valid + tally.invalid + tally.unreadable + tally.skipped;
  if (files > 1)
    std::printf("karma-validate-results: %d valid, %d not valid, %d unreadable, %d skipped\n",
                tally.valid, tally.invalid, tally.unreadable, tally.skipped);
  if (tally.unreadable) return exit_usage;
  return tally.invalid ? exit_invalid : exit_valid;
}

}  // namespace

int main(int argc, char* argv[]) {
  // Nothing in the input may end the program other than with an exit code:
  // what is left (out of memory on a huge file) is a file that could not be read.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "karma-validate-results: error: %s\n", printable(e.what()).c_str());
  } catch (...) {
    std::fprintf(stderr, "karma-validate-results: error: unknown exception\n");
  }
  return exit_usage;
}
