#include "karma/kernel_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace karma {

namespace {

// The `{field}` names a pattern holds, each once, in order.
void placeholders_of(const std::string& pattern, std::vector<std::string>& out) {
  for (std::size_t open = pattern.find('{'); open != std::string::npos;
       open = pattern.find('{', open + 1)) {
    const std::size_t close = pattern.find('}', open);
    if (close == std::string::npos)
      throw std::logic_error("kernel table: '" + pattern + "' opens a field it does not close");
    const std::string field = pattern.substr(open + 1, close - open - 1);
    if (std::find(out.begin(), out.end(), field) == out.end()) out.push_back(field);
  }
}

std::string substitute(std::string pattern, const std::map<std::string, std::string>& values) {
  for (const auto& [field, value] : values) {
    const std::string key = "{" + field + "}";
    for (std::size_t at = pattern.find(key); at != std::string::npos;
         at = pattern.find(key, at + value.size()))
      pattern.replace(at, key.size(), value);
  }
  return pattern;
}

}  // namespace

std::vector<DeclaredKernel> KernelTable::expand() const {
  std::vector<DeclaredKernel> out;
  for (const auto& e : kernels) {
    std::vector<std::string> used;
    for (const auto& p : {e.name, e.variant, e.work}) placeholders_of(p, used);
    for (const auto& p : e.implementations) placeholders_of(p, used);
    for (const auto& f : used)
      if (fields.count(f) == 0)
        throw std::logic_error("kernel table: '" + e.name + "' names no field '" + f + "'");
    // Every combination of the used fields' values, the last fastest.
    std::vector<std::size_t> at(used.size(), 0);
    for (bool more = true; more;) {
      std::map<std::string, std::string> values;
      for (std::size_t i = 0; i < used.size(); ++i) values[used[i]] = fields.at(used[i])[at[i]];
      DeclaredKernel k{substitute(e.name, values),
                       substitute(e.variant, values),
                       substitute(e.work, values),
                       {},
                       &e};
      for (const auto& i : e.implementations) k.implementations.push_back(substitute(i, values));
      out.push_back(std::move(k));
      more = false;
      for (std::size_t i = used.size(); i-- > 0 && !more;) {
        more = ++at[i] < fields.at(used[i]).size();
        if (!more) at[i] = 0;
      }
    }
  }
  return out;
}

std::string disagreement(const std::vector<DeclaredKernel>& declared, const std::string& name,
                         const std::string& implementation, const std::string& variant,
                         const std::string& units, bool higher_is_better) {
  std::string why = "no entry of its name";
  for (const auto& k : declared) {
    if (k.name != name) continue;
    const KernelEntry& e = *k.entry;
    if (std::find(k.implementations.begin(), k.implementations.end(), implementation) ==
        k.implementations.end())
      why = "implementation '" + implementation + "' is not the table's";
    else if (k.variant != variant)
      why = "variant '" + variant + "', the table's '" + k.variant + "'";
    else if (e.units != units)
      why = "units '" + units + "', the table's '" + e.units + "'";
    else if (e.higher_is_better != higher_is_better)
      why = "higher_is_better differs from the table's";
    else
      return "";
  }
  return why;
}

nlohmann::json KernelTable::json() const {
  auto entries = nlohmann::json::array();
  for (const auto& e : kernels) {
    nlohmann::json j = {{"name", e.name},       {"implementation", e.implementations},
                        {"variant", e.variant}, {"work", e.work},
                        {"units", e.units},     {"per", e.per},
                        {"time", e.time},       {"higher_is_better", e.higher_is_better},
                        {"scored", e.scored}};
    if (!e.count.empty()) j["count"] = e.count;
    if (!e.repetitions.empty()) j["repetitions"] = e.repetitions;
    if (!e.figures.empty()) j["figures"] = e.figures;
    entries.push_back(j);
  }
  return {{"fields", fields}, {"kernels", entries}};
}

}  // namespace karma
