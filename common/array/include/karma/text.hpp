// A list as text, for the summaries and messages of the mini-apps: one join
// for every list of names or sizes.
#pragma once

#include <string>
#include <type_traits>

// In karma::text, not karma: code versions (karma/code_version.hpp) look a
// name up as C++ does, and a kernel's reduction member join() would take a
// karma::join for its own, so the kernel's code version would change.
namespace karma::text {

// The items, numbers as std::to_string writes them, with `separator`
// between them: join({2, 3}, " x ") is "2 x 3".
template <class Items>
std::string join(const Items& items, const std::string& separator = ", ") {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    first = false;
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(item)>>)
      out += std::to_string(item);
    else
      out += item;
  }
  return out;
}

}  // namespace karma::text
