#include "karma/deck.hpp"

#include "karma/error.hpp"
#include "karma/sha256.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

namespace karma {

namespace {

// A problem with one value, before we know which key it belongs to.
struct ValueProblem {
  std::string message;
  YAML::Mark mark;
};

std::string where(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// [+-]digits, nothing else.
bool is_decimal(const std::string& s) {
  const std::size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  return s.size() > start && s.find_first_not_of("0123456789", start) == std::string::npos;
}

// Strict decimal integer, or base^exponent (decks often size things in
// powers of two: `shape: [2^28]`). Nothing else: "12abc", "1.5" and "1e6" fail.
std::optional<std::int64_t> parse_integer(const std::string& text) {
  auto decimal = [](const std::string& s) -> std::optional<std::int64_t> {
    if (!is_decimal(s)) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE || *end != '\0') return std::nullopt;
    return static_cast<std::int64_t>(v);
  };
  const auto caret = text.find('^');
  if (caret == std::string::npos) return decimal(text);
  const auto base = decimal(text.substr(0, caret));
  const auto exponent = decimal(text.substr(caret + 1));
  if (!base || !exponent || *exponent < 0) return std::nullopt;
  // |base| <= 1 never overflows, so it must not loop 2^63 times either.
  if (*base == 0) return *exponent == 0 ? 1 : 0;
  if (*base == 1) return 1;
  if (*base == -1) return *exponent % 2 ? -1 : 1;
  std::int64_t result = 1;  // any other base overflows within 63 steps
  for (std::int64_t k = 0; k < *exponent; ++k)
    if (__builtin_mul_overflow(result, *base, &result)) return std::nullopt;
  return result;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Integers exactly (1234567, not 1.23457e+06); other numbers as they come.
std::string format_bound(double v) {
  if (v == std::floor(v) && std::abs(v) < 9.2e18)
    return std::to_string(static_cast<std::int64_t>(v));
  std::ostringstream s;
  s << std::setprecision(17) << v;
  return s.str();
}

// Text that is an integer in form, though maybe too large: [+-]digits or
// [+-]digits^digits.
bool looks_like_integer(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) return is_decimal(text);
  const std::string exponent = text.substr(caret + 1);
  return is_decimal(text.substr(0, caret)) && is_decimal(exponent) && std::isdigit(exponent[0]);
}

void check_range(const KeySpec& spec, double v, const YAML::Mark& mark) {
  if (spec.min && v < *spec.min)
    throw ValueProblem{"must be >= " + format_bound(*spec.min) + ", got " + format_bound(v), mark};
  if (spec.max && v > *spec.max)
    throw ValueProblem{"must be <= " + format_bound(*spec.max) + ", got " + format_bound(v), mark};
}

const std::string& scalar_of(const YAML::Node& node, const KeySpec& spec) {
  if (!node.IsScalar())
    throw ValueProblem{"expected " + describe_type(spec) + ", got " +
                           (node.IsSequence() ? "a list"
                            : node.IsMap()    ? "a mapping"
                                              : "nothing"),
                       node.Mark()};
  return node.Scalar();
}

std::int64_t integer_value(const YAML::Node& node, const KeySpec& spec) {
  const std::string& text = scalar_of(node, spec);
  const auto v = parse_integer(text);
  if (!v)
    throw ValueProblem{quoted(text) + (looks_like_integer(text) ? " does not fit a 64-bit integer"
                                                                : " is not an integer"),
                       node.Mark()};
  check_range(spec, static_cast<double>(*v), node.Mark());
  return *v;
}

std::string choice_value(const YAML::Node& node, const KeySpec& spec) {
  const std::string& text = scalar_of(node, spec);
  if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
    throw ValueProblem{quoted(text) + " is not one of: " + join(spec.choices, ", "), node.Mark()};
  return text;
}

const YAML::Node& list_of(const YAML::Node& node, const KeySpec& spec) {
  if (!node.IsSequence())
    throw ValueProblem{"expected " + describe_type(spec) + ", got " +
                           (node.IsScalar() ? quoted(node.Scalar()) : std::string("a mapping")),
                       node.Mark()};
  const std::size_t n = node.size();
  const bool length_ok = spec.lengths.empty() ? n >= 1
                                              : std::find(spec.lengths.begin(), spec.lengths.end(),
                                                          n) != spec.lengths.end();
  if (!length_ok)
    throw ValueProblem{"has " + std::to_string(n) + " entries; expected " + describe_type(spec),
                       node.Mark()};
  return node;
}

nlohmann::json convert(const YAML::Node& node, const KeySpec& spec) {
  switch (spec.type) {
    case KeyType::integer:
      return integer_value(node, spec);
    case KeyType::number: {
      const std::string& text = scalar_of(node, spec);
      const auto v = parse_number(text);
      if (!v) throw ValueProblem{quoted(text) + " is not a finite number", node.Mark()};
      check_range(spec, *v, node.Mark());
      return *v;
    }
    case KeyType::boolean: {
      const std::string& text = scalar_of(node, spec);
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      throw ValueProblem{quoted(text) + " is not true or false", node.Mark()};
    }
    case KeyType::string:
      return scalar_of(node, spec);
    case KeyType::choice:
      return choice_value(node, spec);
    case KeyType::integer_list: {
      auto out = nlohmann::json::array();
      for (const auto& item : list_of(node, spec)) out.push_back(integer_value(item, spec));
      return out;
    }
    case KeyType::choice_list: {
      auto out = nlohmann::json::array();
      std::set<std::string> seen;
      for (const auto& item : list_of(node, spec)) {
        const std::string v = choice_value(item, spec);
        if (!seen.insert(v).second) throw ValueProblem{quoted(v) + " is listed twice", item.Mark()};
        out.push_back(v);
      }
      return out;
    }
  }
  throw ValueProblem{"unsupported key type", node.Mark()};
}

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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw InputError("cannot open deck " + quoted(path) + ": " + std::strerror(err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read deck " + quoted(path));
  return text.str();
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
  integer("run.warmup", warmup, "untimed repetitions before the timed ones", 0);
  string("run.results_dir", ".",
         "directory for the results JSON when --output is not given (created if missing)");
  return *this;
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
    if (c == unknown) continue;
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

std::string describe_type(const KeySpec& spec) {
  auto range = [&] {
    std::string r;
    if (spec.min) r += " >= " + format_bound(*spec.min);
    if (spec.max) r += (r.empty() ? " " : ",") + std::string(" <= ") + format_bound(*spec.max);
    return r;
  };
  auto lengths = [&] {  // "a list of" or "a list of 1 or 3"
    if (spec.lengths.empty()) return std::string("a list of");
    std::vector<std::string> l;
    for (auto n : spec.lengths) l.push_back(std::to_string(n));
    return "a list of " + join(l, " or ");
  };
  switch (spec.type) {
    case KeyType::integer:
      return "an integer" + range();
    case KeyType::number:
      return "a number" + range();
    case KeyType::boolean:
      return "true or false";
    case KeyType::string:
      return "a string";
    case KeyType::choice:
      return "one of " + join(spec.choices, "|");
    case KeyType::integer_list:
      return lengths() + " integers" + range();
    case KeyType::choice_list:
      return lengths() + (spec.lengths.empty() ? " " : " of ") + join(spec.choices, "|");
  }
  return "?";
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

// --- Deck -------------------------------------------------------------------

Deck Deck::load(const std::string& path, const Schema& schema,
                const std::vector<std::string>& overrides) {
  return parse(read_file(path), path, schema, overrides);
}

Deck Deck::parse(const std::string& text, const std::string& name, const Schema& schema,
                 const std::vector<std::string>& overrides) {
  Deck deck;
  deck.source_ = name;
  deck.sha256_ = sha256_hex(text);

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(where(name, e.mark) + ": YAML syntax error: " + e.msg);
  }

  // Walk the deck: every key must be a known section or a known value.
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& map,
                                                                        const std::string& prefix) {
    if (!map.IsMap())
      throw InputError(where(name, map.Mark()) + ": " + (prefix.empty() ? "deck" : prefix) +
                       ": expected a mapping of keys");
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const YAML::Node& key = entry.first;
      const YAML::Node& value = entry.second;
      if (!key.IsScalar())
        throw InputError(where(name, key.Mark()) + ": " + prefix + ": a key must be a name");
      const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
      if (!seen.insert(key.Scalar()).second)
        throw InputError(where(name, key.Mark()) + ": " + path + ": duplicate key");
      if (const KeySpec* spec = schema.find(path)) {
        // An empty value (`key:` and nothing) is placed by yaml-cpp at the
        // next token, often on another line: name the key's place instead.
        const bool empty =
            value.IsNull() && (value.Mark().is_null() || value.Mark().line != key.Mark().line);
        const YAML::Mark mark = empty ? key.Mark() : value.Mark();
        try {
          deck.values_[path] = {convert(value, *spec), where(name, mark)};
        } catch (const ValueProblem& p) {
          throw InputError(where(name, empty || p.mark.is_null() ? mark : p.mark) + ": " + path +
                           ": " + p.message);
        }
      } else if (schema.is_section(path)) {
        if (!value.IsNull()) walk(value, path);
      } else {
        const std::string hint = schema.suggest(path);
        throw InputError(where(name, key.Mark()) + ": " + path + ": unknown key" +
                         (hint.empty() ? "" : " (did you mean " + quoted(hint) + "?)"));
      }
    }
  };
  if (!root.IsNull()) walk(root, "");

  for (const auto& assignment : overrides) {
    const std::string origin = "--set " + assignment;
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(origin + ": expected --set key.path=value");
    const std::string path = assignment.substr(0, eq);
    const KeySpec* spec = schema.find(path);
    if (!spec && schema.is_section(path))
      throw InputError(origin + ": " + path + ": is a section; --set names one of its keys");
    if (!spec) {
      const std::string hint = schema.suggest(path);
      throw InputError(origin + ": " + path + ": unknown key" +
                       (hint.empty() ? "" : " (did you mean " + quoted(hint) + "?)"));
    }
    YAML::Node value;
    try {
      value = YAML::Load(assignment.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
      throw InputError(origin + ": " + path + ": cannot parse value: " + e.msg);
    }
    try {
      deck.values_[path] = {convert(value, *spec), origin};
    } catch (const ValueProblem& p) {
      throw InputError(origin + ": " + path + ": " + p.message);
    }
  }

  for (const auto& k : schema.keys())
    if (!deck.values_.count(k.path)) deck.values_[k.path] = {k.default_value, "default"};
  return deck;
}

const Deck::Value& Deck::at(const std::string& path) const {
  const auto it = values_.find(path);
  // A mini-app asking for a key its schema lacks is a programming error.
  if (it == values_.end()) throw Error(exit_runtime_error, "internal: no deck key " + path);
  return it->second;
}

std::int64_t Deck::integer(const std::string& path) const {
  return at(path).value.get<std::int64_t>();
}
double Deck::number(const std::string& path) const { return at(path).value.get<double>(); }
bool Deck::boolean(const std::string& path) const { return at(path).value.get<bool>(); }
std::string Deck::string(const std::string& path) const {
  return at(path).value.get<std::string>();
}
std::vector<std::int64_t> Deck::integer_list(const std::string& path) const {
  return at(path).value.get<std::vector<std::int64_t>>();
}
std::vector<std::string> Deck::string_list(const std::string& path) const {
  return at(path).value.get<std::vector<std::string>>();
}

std::string Deck::origin(const std::string& path) const {
  const std::string& o = at(path).origin;
  return o == "default" ? source_ + " (default value)" : o;
}

void Deck::fail(const std::string& path, const std::string& message) const {
  throw InputError(origin(path) + ": " + path + ": " + message);
}

nlohmann::json Deck::resolved() const {
  nlohmann::json out = nlohmann::json::object();
  // No lambda over the binding: C++17 cannot capture one (clang refuses).
  for (const auto& [path, v] : values_) {
    std::string pointer = "/" + path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    out[nlohmann::json::json_pointer(pointer)] = v.value;
  }
  return out;
}

}  // namespace karma
