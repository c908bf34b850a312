// karma-validate-results FILE.json [--app NAME] [--ranks N] [--result PASSED|FAILED]
// Exit 0 when the file conforms to results/SCHEMA.md and the expectations,
// 1 when it does not (each problem on a line), 2 on bad usage or unreadable input.
#include "karma/results_schema.hpp"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char* argv[]) {
  std::string file;
  karma::ResultsExpectation expect;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "karma-validate-results: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--app") {
      expect.app = next();
    } else if (arg == "--ranks") {
      expect.ranks = std::stoi(next());
    } else if (arg == "--result") {
      expect.result = next();
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: karma-validate-results FILE.json [--app NAME] [--ranks N] "
                  "[--result PASSED|FAILED]\n");
      return 0;
    } else if (file.empty()) {
      file = arg;
    } else {
      std::fprintf(stderr, "karma-validate-results: unexpected argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "usage: karma-validate-results FILE.json [--app NAME] [--ranks N] "
                         "[--result PASSED|FAILED]\n");
    return 2;
  }
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "karma-validate-results: cannot open '%s'\n", file.c_str());
    return 2;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "karma-validate-results: %s: not JSON: %s\n", file.c_str(), e.what());
    return 1;
  }
  const auto problems = karma::validate_results(doc, expect);
  for (const auto& p : problems) std::fprintf(stderr, "%s: %s\n", file.c_str(), p.c_str());
  if (problems.empty()) std::printf("%s: valid karma results\n", file.c_str());
  return problems.empty() ? 0 : 1;
}
