#include "karma/code_version.hpp"

#include "karma/sha256.hpp"

#include <stdexcept>

namespace karma {

CodeVersion code_version(const CodeTable& table, const std::vector<std::string>& symbols,
                         const nlohmann::json& launch) {
  // As karma_tools.codeversion.combine: the hashes one a line, then the
  // source hash and the launch choices as canonical JSON (sorted keys).
  std::string hashes;
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const auto found = table.find(symbols[i]);
    if (found == table.end())
      throw std::logic_error("a kernel names code '" + symbols[i] +
                             "' that the build's code table does not define");
    hashes += (i ? "\n" : "") + found->second;
  }
  CodeVersion v;
  v.source = sha256_hex(hashes).substr(0, 16);
  v.version = sha256_hex(v.source + "\n" + launch.dump()).substr(0, 16);
  return v;
}

}  // namespace karma
