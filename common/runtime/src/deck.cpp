#include "karma/deck.hpp"

#include "karma/error.hpp"
#include "karma/sha256.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#if __has_include(<yaml-cpp/depthguard.h>)  // yaml-cpp 0.7 and later
#include <yaml-cpp/depthguard.h>
#define KARMA_YAML_DEPTH_GUARD 1
#endif

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
#include <stdexcept>

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

// --- the text itself, before YAML sees it ---------------------------------------
//
// yaml-cpp 0.7 is lenient where a deck must not be: it reads a lone CR as no
// line break at all (a CR-only deck becomes one long comment line and every
// default runs), NEL and U+2028 as line breaks, and NUL or other control bytes
// in comments without a word. A deck is therefore UTF-8 text whose line breaks
// are LF, or CRLF throughout (what Windows editors write, which yaml-cpp reads
// correctly); a lone CR or a mixture is refused, since either means the file
// is not what its author sees. Control characters (C0 except tab, LF and CR;
// DEL; C1), U+2028/U+2029, noncharacters and invalid UTF-8 are refused; a
// UTF-8 byte order mark is allowed only as the first character.

struct TextProblem {
  std::size_t offset;
  std::string message;
};

std::string hex_code_point(std::uint32_t cp) {
  std::ostringstream s;
  s << "U+" << std::uppercase << std::hex << std::setw(4) << std::setfill('0') << cp;
  return s.str();
}

// The next UTF-8 character at text[i]: its code point and length, or a length
// of 0 for invalid UTF-8 (overlong forms and surrogates included).
std::pair<std::uint32_t, std::size_t> decode_utf8(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return {b, 1};
  std::size_t n = 0;
  std::uint32_t cp = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3, cp = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4, cp = b & 0x07;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return {0, 0};
  }
  if (i + n > text.size()) return {0, 0};
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char c = byte(i + k);
    if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return {0, 0};
    cp = (cp << 6) | (c & 0x3F);
  }
  return {cp, n};
}

// `breaks`: the whole deck, where tab, LF and CRLF are allowed; otherwise one
// value (a --set, a string after YAML's escapes), where no control is.
std::optional<TextProblem> text_problem(const std::string& text, bool breaks) {
  std::optional<bool> crlf;  // how the first line ended
  std::size_t first_break_line = 0, line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, n] = decode_utf8(text, i);
    if (n == 0) {
      std::ostringstream s;
      s << "invalid UTF-8 (byte 0x" << std::uppercase << std::hex << std::setw(2)
        << std::setfill('0') << static_cast<int>(static_cast<unsigned char>(text[i]))
        << "): a deck is UTF-8 text";
      return TextProblem{i, s.str()};
    }
    if (breaks && (cp == '\n' || cp == '\r')) {
      const bool is_crlf = cp == '\r';
      if (is_crlf && (i + 1 >= text.size() || text[i + 1] != '\n'))
        return TextProblem{i,
                           "carriage return (CR) without a line feed: line breaks must be LF, "
                           "or CRLF throughout (a file with classic Mac line endings?)"};
      if (!crlf) {
        crlf = is_crlf;
        first_break_line = line;
      } else if (*crlf != is_crlf) {
        return TextProblem{i, std::string("line ends with ") + (is_crlf ? "CRLF" : "LF") +
                                  " but line " + std::to_string(first_break_line) + " ends with " +
                                  (is_crlf ? "LF" : "CRLF") +
                                  ": use one kind of line break throughout"};
      }
      ++line;
      i += is_crlf ? 2 : 1;
      continue;
    }
    if (cp == 0)
      return TextProblem{i, breaks ? "NUL byte: a deck is UTF-8 text (is this a binary or UTF-16 "
                                     "file?)"
                                   : "NUL byte is not allowed"};
    if ((cp < 0x20 && !(breaks && cp == '\t')) || (cp >= 0x7F && cp <= 0x9F))
      return TextProblem{i, "control character " + hex_code_point(cp) + " is not allowed"};
    if (cp == 0x2028 || cp == 0x2029)
      return TextProblem{i, "Unicode line separator " + hex_code_point(cp) +
                                " is not allowed (YAML would read a line break)"};
    if (cp == 0xFEFF && !(breaks && i == 0))
      return TextProblem{i, "byte order mark U+FEFF is allowed only at the start of a deck"};
    if ((cp & 0xFFFE) == 0xFFFE || (cp >= 0xFDD0 && cp <= 0xFDEF))
      return TextProblem{i, "noncharacter " + hex_code_point(cp) + " is not allowed"};
    i += n;
  }
  return std::nullopt;
}

// Control characters and invalid UTF-8 never reach a message as they are.
std::string printable(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, n] = decode_utf8(s, i);
    if (n > 0 && cp >= 0x20 && !(cp >= 0x7F && cp <= 0x9F)) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[i + k]));
      out += buf;
    }
    i += std::max<std::size_t>(n, 1);
  }
  return out;
}

// Where a YAML mark is in the text: yaml-cpp counts lines by LF and columns in
// bytes, but not a leading byte order mark.
class SourceMap {
 public:
  explicit SourceMap(const std::string& text) : text_(text) {
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) bom_ = 3;
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }
  const std::string& text() const { return text_; }
  std::optional<std::size_t> offset(const YAML::Mark& mark) const {
    if (mark.is_null() || mark.line < 0 || mark.column < 0 ||
        static_cast<std::size_t>(mark.line) >= starts_.size())
      return std::nullopt;
    const std::size_t at = starts_[mark.line] + (mark.line == 0 ? bom_ : 0) + mark.column;
    if (at >= text_.size()) return std::nullopt;
    return at;
  }
  YAML::Mark mark(std::size_t offset) const {
    const auto line =
        std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin() - 1;
    YAML::Mark m;
    m.pos = static_cast<int>(offset);
    m.line = static_cast<int>(line);
    const std::size_t skip = line == 0 && offset >= bom_ ? bom_ : 0;
    m.column = static_cast<int>(offset - starts_[line] - skip);
    return m;
  }

 private:
  const std::string& text_;
  std::size_t bom_ = 0;
  std::vector<std::size_t> starts_;
};

// A quoted, block or tagged scalar, judged by the text it came from: a quote
// must close on its own line (an unclosed quote would swallow the lines after
// it, up to the end of the file, into one value), and block scalars (| >) and
// tags have no place in a deck.
std::optional<std::string> source_problem(const YAML::Node& node, const SourceMap& source) {
  if (!node.IsScalar() || node.Tag() != "!") return std::nullopt;  // plain
  const auto at = source.offset(node.Mark());
  if (!at) return std::nullopt;
  const std::string& t = source.text();
  const char open = t[*at];
  if (open == '"' || open == '\'') {
    for (std::size_t i = *at + 1; i < t.size(); ++i) {
      const char c = t[i];
      if (c == '\n' || c == '\r') break;
      if (open == '"' && c == '\\') {
        ++i;  // an escaped character; an escaped line break continues the line
        if (i < t.size() && (t[i] == '\n' || t[i] == '\r')) break;
        continue;
      }
      if (c == open) {
        if (open == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
          ++i;  // '' is a quote inside single quotes
          continue;
        }
        return std::nullopt;
      }
    }
    return std::string("the ") + (open == '"' ? "double" : "single") +
           " quote opened here is not closed on its line";
  }
  if (open == '|' || open == '>')
    return std::string("a block scalar ('") + open +
           "') is not allowed; write the value on one line";
  if (open == '!') return std::string("YAML tags are not allowed in a deck");
  return std::nullopt;
}

// Document-level YAML that a deck has no use for, seen as parser events: a
// second document (after '---' or '...'), anchors and aliases (an alias
// carries the anchor's position, so messages would point elsewhere) and tags.
struct StructureScan : YAML::EventHandler {
  int documents = 0;
  std::optional<ValueProblem> problem;
  void note(const YAML::Mark& mark, const std::string& message) {
    if (!problem) problem = ValueProblem{message, mark};
  }
  void node(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, bool scalar) {
    if (anchor != YAML::NullAnchor) note(mark, "YAML anchors (&name) are not allowed in a deck");
    // "?": plain; "!": a quoted scalar (an explicit '!' is caught at its text).
    if (!tag.empty() && tag != "?" && !(scalar && tag == "!"))
      note(mark, "YAML tag " + quoted(tag) + " is not allowed in a deck");
  }
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2)
      note(mark,
           "a second YAML document starts here (after '---' or '...'); a deck is one "
           "document");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node(mark, "", anchor, true);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    note(mark, "YAML aliases (*name) are not allowed in a deck");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string&) override {
    node(mark, tag, anchor, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    node(mark, tag, anchor, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    node(mark, tag, anchor, false);
  }
  void OnMapEnd() override {}
  void OnAnchor(const YAML::Mark& mark, const std::string&) override {
    note(mark, "YAML anchors (&name) are not allowed in a deck");
  }
};

// Parses the one document of `text`; throws ValueProblem for a syntax error
// (its message after `syntax`) or for anything StructureScan refuses.
YAML::Node load_one_document(const std::string& text, const std::string& syntax) {
  // yaml-cpp 0.7 calls lists nested too deep a "bad file".
  auto problem = [&](const YAML::Exception& e) {
#ifdef KARMA_YAML_DEPTH_GUARD
    if (dynamic_cast<const YAML::DeepRecursion*>(&e))
      return ValueProblem{syntax + "lists or mappings nested too deep", e.mark};
#endif
    return ValueProblem{syntax + e.msg, e.mark};
  };
  StructureScan scan;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (!scan.problem && parser.HandleNextDocument(scan)) {
    }
  } catch (const YAML::Exception& e) {
    throw problem(e);
  }
  if (scan.problem) throw *scan.problem;
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw problem(e);
  }
}

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

// The checks every scalar, key or value, passes before its text is used: its
// quotes close on its line, and YAML's escapes ("\0", "\n") have not put a
// control character into it.
void check_scalar(const YAML::Node& node, const SourceMap& source) {
  if (!node.IsScalar()) return;
  if (const auto problem = source_problem(node, source)) throw ValueProblem{*problem, node.Mark()};
  if (const auto problem = text_problem(node.Scalar(), false))
    throw ValueProblem{
        "in the value as YAML reads it (escapes such as \\n applied): " + problem->message,
        node.Mark()};
}

const std::string& scalar_of(const YAML::Node& node, const KeySpec& spec, const SourceMap& source) {
  if (!node.IsScalar())
    throw ValueProblem{"expected " + describe_type(spec) + ", got " +
                           (node.IsSequence() ? "a list"
                            : node.IsMap()    ? "a mapping"
                                              : "nothing"),
                       node.Mark()};
  check_scalar(node, source);
  return node.Scalar();
}

// A number, integer or boolean must be a plain scalar: '1003' in quotes is a
// string in YAML, and taking it for a number would hide a mistake.
const std::string& plain_scalar_of(const YAML::Node& node, const KeySpec& spec,
                                   const SourceMap& source, const char* what) {
  const std::string& text = scalar_of(node, spec, source);
  if (node.Tag() != "?")
    throw ValueProblem{
        quoted(text) + " is in quotes, which make it a string; write " + what + " without them",
        node.Mark()};
  return text;
}

std::int64_t integer_value(const YAML::Node& node, const KeySpec& spec, const SourceMap& source) {
  const std::string& text = plain_scalar_of(node, spec, source, "an integer");
  const auto v = parse_integer(text);
  if (!v)
    throw ValueProblem{quoted(text) + (looks_like_integer(text) ? " does not fit a 64-bit integer"
                                                                : " is not an integer"),
                       node.Mark()};
  check_range(spec, static_cast<double>(*v), node.Mark());
  return *v;
}

std::string choice_value(const YAML::Node& node, const KeySpec& spec, const SourceMap& source) {
  const std::string& text = scalar_of(node, spec, source);
  if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
    throw ValueProblem{quoted(text) + " is not one of: " + join(spec.choices, ", "), node.Mark()};
  return text;
}

const YAML::Node& list_of(const YAML::Node& node, const KeySpec& spec, const SourceMap& source) {
  check_scalar(node, source);
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

nlohmann::json convert(const YAML::Node& node, const KeySpec& spec, const SourceMap& source) {
  switch (spec.type) {
    case KeyType::integer:
      return integer_value(node, spec, source);
    case KeyType::number: {
      const std::string& text = plain_scalar_of(node, spec, source, "a number");
      const auto v = parse_number(text);
      if (!v) throw ValueProblem{quoted(text) + " is not a finite number", node.Mark()};
      check_range(spec, *v, node.Mark());
      return *v;
    }
    case KeyType::boolean: {
      const std::string& text = plain_scalar_of(node, spec, source, "true or false");
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      throw ValueProblem{quoted(text) + " is not true or false", node.Mark()};
    }
    case KeyType::string:
      return scalar_of(node, spec, source);
    case KeyType::choice:
      return choice_value(node, spec, source);
    case KeyType::integer_list: {
      auto out = nlohmann::json::array();
      for (const auto& item : list_of(node, spec, source))
        out.push_back(integer_value(item, spec, source));
      return out;
    }
    case KeyType::choice_list: {
      auto out = nlohmann::json::array();
      std::set<std::string> seen;
      for (const auto& item : list_of(node, spec, source)) {
        const std::string v = choice_value(item, spec, source);
        if (!seen.insert(v).second) throw ValueProblem{quoted(v) + " is listed twice", item.Mark()};
        out.push_back(v);
      }
      return out;
    }
  }
  throw ValueProblem{"unsupported key type", node.Mark()};
}

// "has no value; remove the line to use the default 64"
std::string no_value(const KeySpec& spec, const std::string& remedy) {
  return "has no value; " + remedy + " to use the default " + spec.default_value.dump();
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
  return s;
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
  return root;
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

  const SourceMap source(text);
  if (const auto problem = text_problem(text, true))
    throw InputError(where(name, source.mark(problem->offset)) + ": " + problem->message);

  YAML::Node root;
  try {
    root = load_one_document(text, "YAML syntax error: ");
  } catch (const ValueProblem& p) {
    throw InputError(where(name, p.mark) + ": " + p.message);
  }

  // Walk the deck: every key must be a known section or a known value.
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& map,
                                                                        const std::string& prefix) {
    const std::string what = prefix.empty() ? "deck" : prefix;
    if (!map.IsMap()) {
      try {
        check_scalar(map, source);
      } catch (const ValueProblem& p) {
        throw InputError(where(name, p.mark) + ": " + what + ": " + p.message);
      }
      throw InputError(where(name, map.Mark()) + ": " + what + ": expected a mapping of keys" +
                       (map.IsNull() ? ", got nothing" : ""));
    }
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const YAML::Node& key = entry.first;
      const YAML::Node& value = entry.second;
      if (!key.IsScalar())
        throw InputError(where(name, key.Mark()) + ": " + what + ": a key must be a name");
      try {
        check_scalar(key, source);
      } catch (const ValueProblem& p) {
        throw InputError(where(name, p.mark) + ": " + what + ": " + p.message);
      }
      const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
      if (!seen.insert(key.Scalar()).second)
        throw InputError(where(name, key.Mark()) + ": " + path + ": duplicate key");
      if (const KeySpec* spec = schema.find(path)) {
        // An empty value (`key:` and nothing) is placed by yaml-cpp at the
        // next token, often on another line: name the key's place instead.
        // (At the end of the text it is put at the start of the key's line.)
        const bool empty =
            value.IsNull() && (value.Mark().is_null() || value.Mark().line != key.Mark().line ||
                               value.Mark().column <= key.Mark().column);
        const YAML::Mark mark = empty ? key.Mark() : value.Mark();
        // `key:` or `key: ~` is not "the default": that is a line left
        // out, and a null here is more likely a value lost in editing.
        if (value.IsNull())
          throw InputError(where(name, mark) + ": " + path + ": " +
                           no_value(*spec, "remove the line"));
        try {
          deck.values_[path] = {convert(value, *spec, source), where(name, mark)};
        } catch (const ValueProblem& p) {
          throw InputError(where(name, p.mark.is_null() ? mark : p.mark) + ": " + path + ": " +
                           p.message);
        }
      } else if (schema.is_section(path)) {
        // An empty section (`run: ~`, or `run:` with every key commented
        // out) is more likely keys lost in editing than a wish for defaults.
        if (value.IsNull())
          throw InputError(where(name, key.Mark()) + ": " + path +
                           ": a section with no keys; remove the line to use its defaults");
        walk(value, path);
      } else if (const std::string* instead = schema.retired_hint(path)) {
        throw InputError(where(name, key.Mark()) + ": " + path + ": no longer read; " + *instead);
      } else {
        const std::string hint = schema.suggest(path);
        throw InputError(where(name, key.Mark()) + ": " + path + ": unknown key" +
                         (hint.empty() ? "" : " (did you mean " + quoted(hint) + "?)"));
      }
    }
  };
  // No document at all (empty, or only comments): every default. A document
  // that is null (`~`, or only '---') is refused like any other non-mapping.
  if (!root.IsNull() || !root.Mark().is_null()) walk(root, "");

  for (const auto& assignment : overrides) {
    const std::string origin = "--set " + printable(assignment);
    // The same text rules as the deck's, stricter: one line, no tabs.
    if (const auto problem = text_problem(assignment, false))
      throw InputError(origin + ": " + problem->message);
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(origin + ": expected --set key.path=value");
    const std::string path = assignment.substr(0, eq);
    const KeySpec* spec = schema.find(path);
    if (!spec && schema.is_section(path))
      throw InputError(origin + ": " + path + ": is a section; --set names one of its keys");
    if (const std::string* instead = spec ? nullptr : schema.retired_hint(path))
      throw InputError(origin + ": " + path + ": no longer read; " + *instead);
    if (!spec) {
      const std::string hint = schema.suggest(path);
      throw InputError(origin + ": " + path + ": unknown key" +
                       (hint.empty() ? "" : " (did you mean " + quoted(hint) + "?)"));
    }
    const std::string value_text = assignment.substr(eq + 1);
    const SourceMap value_source(value_text);
    try {
      const YAML::Node value = load_one_document(value_text, "cannot parse value: ");
      if (value.IsNull()) throw ValueProblem{no_value(*spec, "leave out the --set"), {}};
      deck.values_[path] = {convert(value, *spec, value_source), origin};
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

bool Deck::is_default(const std::string& path) const { return at(path).origin == "default"; }

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
