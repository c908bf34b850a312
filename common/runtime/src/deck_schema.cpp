// The schema of a deck: its keys with their types, defaults, ranges and
// rules, --help and the JSON Schema of --help=json (deck.cpp reads a deck
// with it).
#include "karma/deck.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace karma {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string last_component(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

}  // namespace

// --- Schema -----------------------------------------------------------------

Schema& Schema::add(KeySpec spec) {
  auto same = [&](const KeySpec& k) { return k.path == spec.path; };
  auto existing = std::find_if(keys_.begin(), keys_.end(), same);
  if (existing != keys_.end())
    *existing = std::move(spec);  // a mini-app may re-declare a shared key's default
  else
    keys_.push_back(std::move(spec));
  return *this;
}

Schema& Schema::integer(const std::string& path, std::int64_t def, const std::string& help,
                        std::optional<std::int64_t> min, std::optional<std::int64_t> max) {
  KeySpec s{path, KeyType::integer, help, def, {}, {}, {}, {}};
  if (min) s.min = static_cast<double>(*min);
  if (max) s.max = static_cast<double>(*max);
  return add(std::move(s));
}

Schema& Schema::number(const std::string& path, double def, const std::string& help,
                       std::optional<double> min, std::optional<double> max) {
  return add({path, KeyType::number, help, def, min, max, {}, {}});
}

Schema& Schema::boolean(const std::string& path, bool def, const std::string& help) {
  return add({path, KeyType::boolean, help, def, {}, {}, {}, {}});
}

Schema& Schema::string(const std::string& path, const std::string& def, const std::string& help) {
  return add({path, KeyType::string, help, def, {}, {}, {}, {}});
}

Schema& Schema::choice(const std::string& path, const std::string& def,
                       const std::vector<std::string>& choices, const std::string& help) {
  return add({path, KeyType::choice, help, def, {}, {}, choices, {}});
}

Schema& Schema::integer_list(const std::string& path, const std::vector<std::int64_t>& def,
                             const std::string& help, std::vector<std::size_t> lengths,
                             std::optional<std::int64_t> min) {
  KeySpec s{path, KeyType::integer_list, help, def, {}, {}, {}, std::move(lengths)};
  if (min) s.min = static_cast<double>(*min);
  return add(std::move(s));
}

Schema& Schema::choice_list(const std::string& path, const std::vector<std::string>& def,
                            const std::vector<std::string>& choices, const std::string& help) {
  return add({path, KeyType::choice_list, help, def, {}, {}, choices, {}});
}

Schema& Schema::run_section(std::int64_t repetitions, std::int64_t warmup) {
  integer("run.repetitions", repetitions, "timed repetitions of each kernel", 1);
  return stepped_run_section(warmup, "untimed repetitions before the timed ones");
}

Schema& Schema::stepped_run_section(std::int64_t warmup, const std::string& warmup_help) {
  integer("run.warmup", warmup, warmup_help, 0);
  string("run.results_dir", ".",
         "directory for the results JSON when --output is not given (created if missing)");
  energy_keys();
  comm_key();
  return rule(Rule::free, {"run.results_dir"});
}

Schema& Schema::comm_key() {
  choice("run.comm", "auto", {"auto", "host-staging", "gpu-aware-mpi", "nccl"},
         "how device data moves between ranks: host-staging (copies through page-locked host "
         "memory), gpu-aware-mpi (an MPI that reads device memory), nccl (NCCL on the device's "
         "stream), auto (NCCL where built, else a GPU-aware MPI, else host staging); the results "
         "record the path and why. A host backend's data is in host memory: MPI reads it there");
  return rule(Rule::tuning, {"run.comm"});
}

Schema& Schema::energy_keys() {
  choice("run.energy", "on", {"on", "off"},
         "energy of each kernel from the device's counter (NVML, ROCm SMI or RAPL) over a "
         "window of back-to-back executions after the timed ones; a counter that cannot be "
         "read is reported in the results, not an error");
  number("run.energy_window", 0.5,
         "seconds of back-to-back executions per kernel for its energy (at least 12 steps of "
         "the counter)",
         0.01, 3600.0);
  return rule(Rule::free, {"run.energy"});
}

Schema& Schema::faults(const std::vector<std::pair<std::string, std::string>>& faults) {
  std::vector<std::string> choices{"none"};
  std::string help = "for tests of the checks: a fault that verification must catch (exit 1)";
  for (const auto& [name, what] : faults) {
    choices.push_back(name);
    help += "; " + name + ": " + what;
  }
  return choice("run.inject_fault", "none", choices, help);
}

Schema& Schema::retired(const std::string& path, const std::string& instead,
                        nlohmann::json same_work) {
  retired_.push_back({path, instead, std::move(same_work)});
  return *this;
}

Schema& Schema::rule(Rule rule, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto it =
        std::find_if(keys_.begin(), keys_.end(), [&](const KeySpec& k) { return k.path == path; });
    if (it == keys_.end()) throw std::logic_error("Schema::rule: no key " + path);
    it->rule = rule;
  }
  return *this;
}

const char* rule_name(Rule rule) {
  switch (rule) {
    case Rule::axis:
      return "axis";
    case Rule::tuning:
      return "tuning";
    case Rule::free:
      return "free";
    case Rule::fixed:
      break;
  }
  return "fixed";
}

const std::string* Schema::retired_hint(const std::string& path) const {
  for (const auto& r : retired_)
    if (r.path == path) return &r.instead;
  return nullptr;
}

const KeySpec* Schema::find(const std::string& path) const {
  for (const auto& k : keys_)
    if (k.path == path) return &k;
  return nullptr;
}

bool Schema::is_section(const std::string& path) const {
  const std::string prefix = path + ".";
  return std::any_of(keys_.begin(), keys_.end(), [&](const KeySpec& k) {
    return k.path.compare(0, prefix.size(), prefix) == 0;
  });
}

std::string Schema::suggest(const std::string& unknown) const {
  // Candidates are keys and sections; a typo in the leaf is judged against
  // the leaves of the same section, anything else against full paths.
  std::set<std::string> candidates;
  for (const auto& k : keys_) {
    for (std::string p = k.path; !p.empty(); p = parent_of(p)) candidates.insert(p);
  }
  const std::string section = parent_of(unknown);
  const std::string leaf = last_component(unknown);
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    // Never the name itself, nor the section it is in ("run.N": not 'run').
    if (c == unknown || (is_section(c) && unknown.compare(0, c.size() + 1, c + ".") == 0)) continue;
    const std::size_t d = parent_of(c) == section ? edit_distance(leaf, last_component(c))
                                                  : edit_distance(unknown, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, leaf.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string Schema::help_text() const {
  std::ostringstream out;
  std::string section;
  for (const auto& k : keys_) {
    const std::string s = parent_of(k.path);
    if (s != section) {
      out << s << ":\n";
      section = s;
    }
    out << "  " << last_component(k.path) << "  (" << describe_type(k)
        << "; default: " << k.default_value.dump() << ")\n      " << k.help << "\n";
  }
  return out.str();
}

namespace {

// One key's JSON Schema, from the KeySpec help_text describes.
nlohmann::json key_schema(const KeySpec& k) {
  using nlohmann::json;
  json range = json::object();
  if (k.min)
    range["minimum"] = k.type == KeyType::number ? json(*k.min) : json(std::int64_t(*k.min));
  if (k.max)
    range["maximum"] = k.type == KeyType::number ? json(*k.max) : json(std::int64_t(*k.max));
  json s = json::object();
  switch (k.type) {
    case KeyType::integer:
    case KeyType::number:
      s = range;
      s["type"] = k.type == KeyType::integer ? "integer" : "number";
      break;
    case KeyType::boolean:
      s["type"] = "boolean";
      break;
    case KeyType::string:
      s["type"] = "string";
      break;
    case KeyType::choice:
      s["type"] = "string";
      s["enum"] = k.choices;
      break;
    case KeyType::integer_list:
    case KeyType::choice_list: {
      json items = k.type == KeyType::integer_list ? range : json{{"enum", k.choices}};
      items["type"] = k.type == KeyType::integer_list ? "integer" : "string";
      s = {{"type", "array"}, {"items", items}, {"minItems", 1}};
      if (k.type == KeyType::choice_list) s["uniqueItems"] = true;
      if (k.lengths.size() == 1) {
        s["minItems"] = s["maxItems"] = k.lengths[0];
      } else if (!k.lengths.empty()) {
        // Lengths such as 1 or 3, not a range.
        json any = json::array();
        for (auto n : k.lengths) any.push_back({{"minItems", n}, {"maxItems", n}});
        s["anyOf"] = any;
      }
      break;
    }
  }
  s["default"] = k.default_value;
  s["description"] = k.help;
  s["x-karma-type"] = describe_type(k);  // the words of the reader's messages
  return s;
}

// What JSON Schema cannot say of a deck: how the reader (deck.cpp) reads a
// YAML scalar's text into the value a key's schema describes. A tool that
// checks or resolves deck values applies this rather than a copy of its own
// (python/src/karma_tools/campaign/deck.py).
nlohmann::json yaml_grammar() {
  using nlohmann::json;
  return {
      {"description",
       "How a deck's YAML text is read into the values above. An integer, number or boolean is "
       "a plain scalar (quotes make it a string) whose text matches its pattern: an integer is "
       "decimal, or base^exponent (2^28) with group 1 the base and group 2 the exponent, and "
       "must fit in minimum..maximum (base and exponent too); a number is what strtod reads, "
       "finite; a boolean one of the spellings listed."},
      {"integer",
       {{"pattern", "^([-+]?[0-9]+)(?:\\^\\+?([0-9]+))?$"},
        {"minimum", std::numeric_limits<std::int64_t>::min()},
        {"maximum", std::numeric_limits<std::int64_t>::max()},
        {"what", "an integer"}}},
      {"number",
       {{"pattern",
         "^[-+]?(?:(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][-+]?[0-9]+)?|"
         "0[xX](?:[0-9a-fA-F]+\\.?[0-9a-fA-F]*|\\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?)$"},
        {"what", "a number"}}},
      {"boolean",
       {{"true", {"true", "True", "TRUE"}},
        {"false", {"false", "False", "FALSE"}},
        {"what", "true or false"}}},
  };
}

}  // namespace

nlohmann::json Schema::json_schema(const std::string& title) const {
  using nlohmann::json;
  const auto section = [] {
    return json{
        {"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};
  };
  json root = section();
  root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  root["title"] = title;
  root["description"] =
      "The deck's keys as resolved (deck.resolved in the results): integers written base^exponent "
      "in the YAML (2^28) are integers here. Every key is optional; its default applies.";
  for (const auto& k : keys_) {
    json* node = &root;
    std::string rest = k.path;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      json& child = (*node)["properties"][rest.substr(0, dot)];
      if (child.is_null()) child = section();
      node = &child;
      rest = rest.substr(dot + 1);
    }
    (*node)["properties"][rest] = key_schema(k);
    (*node)["properties"][rest]["x-rules"] = rule_name(k.rule);
  }
  // Not properties: a deck that names them is refused.
  json retired = json::object();
  for (const auto& r : retired_)
    retired[r.path] = {{"instead", r.instead}, {"same_work", r.same_work}};
  if (!retired.empty()) root["x-retired"] = retired;
  root["x-karma-yaml"] = yaml_grammar();
  return root;
}

}  // namespace karma
