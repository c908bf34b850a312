// Code versions (python/src/karma_tools/codeversion.py): each kernel names
// the definitions its launch runs, and the build hashes their source and
// everything they name. A kernel's code version is that hash with its launch
// shape (karma/harness.hpp, Variant::launch), so two results of the same
// code pair, whatever the run's sizes, threads or ranks, and a change shows.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace karma {

// The rules that make code versions (codeversion.py's SCHEME, in step):
// versions of two schemes do not compare. Results record it as code.scheme.
inline constexpr int code_version_scheme = 2;

// Qualified name -> source hash, generated per mini-app at build time.
using CodeTable = std::map<std::string, std::string>;

struct CodeVersion {
  std::string source;   // the hash of the named definitions' source hashes
  std::string version;  // that and the launch choices
};

// Throws std::logic_error naming a definition the table lacks: a kernel
// that names code the build did not find is a bug of the mini-app.
CodeVersion code_version(const CodeTable& table, const std::vector<std::string>& symbols,
                         const nlohmann::json& launch);

}  // namespace karma
