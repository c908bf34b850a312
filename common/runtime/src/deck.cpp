#include "karma/deck.hpp"

#include "karma/error.hpp"
#include "karma/output.hpp"
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

}  // namespace

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

namespace {

// One --set key.path=value, checked as the deck's own values are: the key
// and its value.
std::pair<std::string, nlohmann::json> parse_override(const std::string& assignment,
                                                      const Schema& schema) {
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
    return {path, convert(value, *spec, value_source)};
  } catch (const ValueProblem& p) {
    throw InputError(origin + ": " + path + ": " + p.message);
  }
}

}  // namespace

// --- Deck -------------------------------------------------------------------

Deck Deck::load(const std::string& path, const Schema& schema,
                const std::vector<std::string>& overrides) {
  return parse(read_deck_text(path), path, schema, overrides);
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
    auto [path, value] = parse_override(assignment, schema);
    deck.values_[path] = {std::move(value), "--set " + printable(assignment)};
  }

  for (const auto& k : schema.keys())
    if (!deck.values_.count(k.path)) deck.values_[k.path] = {k.default_value, "default"};
  return deck;
}

}  // namespace karma
