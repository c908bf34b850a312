// Decks as text: line breaks, bytes, documents and quotes, each refusal
// naming the place.
#include "deck_test.hpp"

#include <string>
#include <vector>

namespace karma_test_deck {

// --- the text itself: line breaks, bytes, documents, quotes ------------------------
//
// Each refusal names the place: "deck.yaml:LINE:COL: ...", and the key where
// the problem is inside one value.

std::string crlf(std::string text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

// The bug that started it: yaml-cpp reads a lone CR as nothing, so a deck
// saved with CR line breaks was one long comment and ran every default.
TEST(DeckText, CarriageReturnsAloneAreRefused) {
  EXPECT_EQ(error_of("# a comment first\rgrid:\r  cells: 3\r"),
            "deck.yaml:1:18: carriage return (CR) without a line feed: line breaks must be LF, "
            "or CRLF throughout (a file with classic Mac line endings?)");
  EXPECT_EQ(error_of("grid:\r  cells: 3\r"), error_of("grid:\r  cells: 3\r"));
  EXPECT_TRUE(starts_with(error_of("grid:\r  cells: 3\r"), "deck.yaml:1:6: carriage return"));
  // One stray CR in an otherwise CRLF deck, and one at the very end.
  EXPECT_TRUE(starts_with(error_of("grid:\r\n  cells: 3\r  layout: left\r\n"),
                          "deck.yaml:2:11: carriage return (CR) without a line feed"));
  EXPECT_TRUE(starts_with(error_of("grid:\n  cells: 3\r"),
                          "deck.yaml:2:11: carriage return (CR) without a line feed"));
}

TEST(DeckText, MixedLineBreaksAreRefused) {
  EXPECT_EQ(error_of("grid:\r\n  cells: 3\n  layout: left\r\n"),
            "deck.yaml:2:11: line ends with LF but line 1 ends with CRLF: use one kind of line "
            "break throughout");
  EXPECT_EQ(error_of("# c\ngrid:\n  cells: 3\r\n"),
            "deck.yaml:3:11: line ends with CRLF but line 1 ends with LF: use one kind of line "
            "break throughout");
}

// CRLF throughout (what Windows editors write) reads exactly as LF does.
TEST(DeckText, CrlfThroughoutLoadsLikeLf) {
  const Deck lf = parse(full_deck);
  const Deck windows = parse(crlf(full_deck));
  EXPECT_EQ(windows.resolved(), lf.resolved());
  for (const auto& key : {"grid.cells", "grid.shape", "grid.kernels", "solver.count"})
    EXPECT_EQ(windows.origin(key), lf.origin(key)) << key;
  EXPECT_EQ(windows.string("grid.name"), "channel");  // no CR left at the end of a string
  // Without a line break after the last line, and with errors at the same place.
  EXPECT_EQ(parse("grid:\r\n  name: x y").string("grid.name"), "x y");
  EXPECT_EQ(error_of(crlf("grid:\n  cells: 3\n  layout: up\n")),
            "deck.yaml:3:11: grid.layout: 'up' is not one of: left, right");
  EXPECT_EQ(error_of(crlf("grid:\n  cells:\n")),
            "deck.yaml:2:3: grid.cells: has no value; remove the line to use the default 64");
}

TEST(DeckText, NulAndControlCharactersAreRefused) {
  EXPECT_EQ(error_of(std::string("# a\0comment\ngrid:\n  cells: 3\n", 27)),
            "deck.yaml:1:4: NUL byte: a deck is UTF-8 text (is this a binary or UTF-16 file?)");
  EXPECT_EQ(error_of("grid:\n  cells: 3  # bell\a\n"),
            "deck.yaml:2:19: control character U+0007 is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: a\x1b[1mb\n"),
            "deck.yaml:2:10: control character U+001B is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: ab\x7f\n"),
            "deck.yaml:2:11: control character U+007F is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: a\xc2\x85z\n"),  // NEL, which yaml-cpp takes for a break
            "deck.yaml:2:10: control character U+0085 is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: a\xe2\x80\xa8z\n"),
            "deck.yaml:2:10: Unicode line separator U+2028 is not allowed (YAML would read a "
            "line break)");
  // A tab is text (YAML itself refuses one in indentation).
  EXPECT_EQ(parse("grid:\n  cells: 3\t# tab\n").integer("grid.cells"), 3);
}

TEST(DeckText, InvalidUtf8IsRefusedAndALeadingByteOrderMarkIsNot) {
  EXPECT_EQ(error_of("grid:\n  name: caf\xe9\n"),  // Latin-1
            "deck.yaml:2:12: invalid UTF-8 (byte 0xE9): a deck is UTF-8 text");
  EXPECT_TRUE(starts_with(error_of("grid:\n  name: \xc0\xaf\n"),  // overlong '/'
                          "deck.yaml:2:9: invalid UTF-8 (byte 0xC0)"));
  EXPECT_TRUE(starts_with(error_of("grid:\n  name: \xed\xa0\x80\n"),  // a surrogate
                          "deck.yaml:2:9: invalid UTF-8 (byte 0xED)"));
  EXPECT_TRUE(starts_with(error_of("\xff\xfeg\0r\0"), "deck.yaml:1:1: invalid UTF-8 (byte 0xFF)"));
  EXPECT_EQ(parse("grid:\n  name: caf\xc3\xa9\n").string("grid.name"), "caf\xc3\xa9");
  // A UTF-8 byte order mark only at the start; columns on line 1 do not count it.
  EXPECT_EQ(parse("\xef\xbb\xbfgrid:\n  cells: 3\n").integer("grid.cells"), 3);
  EXPECT_EQ(error_of("\xef\xbb\xbfgrid: {cells: 0}\n"),
            "deck.yaml:1:15: grid.cells: must be >= 1, got 0");
  EXPECT_EQ(error_of("\xef\xbb\xbfgrid: \x01\n"),
            "deck.yaml:1:7: control character U+0001 is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: a\xef\xbb\xbf\n"),
            "deck.yaml:2:10: byte order mark U+FEFF is allowed only at the start of a deck");
}

TEST(DeckText, ASecondDocumentIsRefused) {
  EXPECT_EQ(error_of("grid:\n  cells: 3\n---\ngrid:\n  cells: 4\n"),
            "deck.yaml:3:1: a second YAML document starts here (after '---' or '...'); a deck is "
            "one document");
  EXPECT_TRUE(starts_with(error_of("grid:\n  cells: 3\n...\nrun:\n  warmup: 0\n"),
                          "deck.yaml:4:1: a second YAML document starts here"));
  EXPECT_TRUE(starts_with(error_of("grid:\n  cells: 3\n---\n"),
                          "deck.yaml:3:1: a second YAML document starts here"));
  // One document, marked or ended, is fine.
  EXPECT_EQ(parse("---\ngrid:\n  cells: 3\n").integer("grid.cells"), 3);
  EXPECT_EQ(parse("%YAML 1.2\n---\ngrid:\n  cells: 3\n...\n").integer("grid.cells"), 3);
}

// An unclosed quote ran to the end of the file: `name: "abc` became 'abc ',
// and a quote early in a deck swallowed every line after it into one value.
TEST(DeckText, AQuoteMustCloseOnItsLine) {
  EXPECT_EQ(error_of("grid:\n  name: \"abc\n"),
            "deck.yaml:2:9: grid.name: the double quote opened here is not closed on its line");
  EXPECT_EQ(error_of("grid:\n  name: 'abc\n"),
            "deck.yaml:2:9: grid.name: the single quote opened here is not closed on its line");
  EXPECT_EQ(error_of("grid:\n  layout: 'left\nrun:\n  warmup: 0\n"),
            "deck.yaml:2:11: grid.layout: the single quote opened here is not closed on its line");
  EXPECT_EQ(error_of("grid:\n  name: \"two\n    lines\"\n"),
            "deck.yaml:2:9: grid.name: the double quote opened here is not closed on its line");
  // (In a flow list, YAML itself finds the list unclosed.)
  EXPECT_EQ(error_of("grid:\n  kernels: [copy, \"add\n"),
            "deck.yaml:3:1: YAML syntax error: end of sequence flow not found");
  EXPECT_EQ(error_of("grid:\n  \"cells: 3\n"),  // a key
            "deck.yaml:2:3: grid: the double quote opened here is not closed on its line");
  EXPECT_EQ(error_of("grid:\n  name: \"a\\\n  b\"\n"),  // an escaped line break
            "deck.yaml:2:9: grid.name: the double quote opened here is not closed on its line");
  // Escaped quotes inside are not the end.
  EXPECT_EQ(parse("grid:\n  name: \"a\\\"b\"\n").string("grid.name"), "a\"b");
  EXPECT_EQ(parse("grid:\n  name: 'it''s'\n").string("grid.name"), "it's");
  EXPECT_EQ(parse("grid:\r\n  name: 'x'\r\n").string("grid.name"), "x");
}

// yaml-cpp 0.7 calls this a "bad file" (found by the deck fuzzer).
TEST(DeckText, DeepNestingIsNamedAsSuch) {
  const std::string m = error_of("grid:\n  shape: " + std::string(5000, '[') + "\n");
  EXPECT_TRUE(starts_with(m, "deck.yaml:")) << m;
  EXPECT_TRUE(contains(m, ": YAML syntax error: ")) << m;
  EXPECT_FALSE(contains(m, "bad file")) << m;
}

TEST(DeckText, BlockScalarsTagsAnchorsAndEscapedControlsAreRefused) {
  EXPECT_EQ(error_of("grid:\n  name: |\n    abc\n"),
            "deck.yaml:2:9: grid.name: a block scalar ('|') is not allowed; write the value on "
            "one line");
  EXPECT_EQ(error_of("grid:\n  cells: !!int 5\n"),
            "deck.yaml:2:10: YAML tag 'tag:yaml.org,2002:int' is not allowed in a deck");
  EXPECT_EQ(error_of("grid:\n  name: ! abc\n"),
            "deck.yaml:2:9: grid.name: YAML tags are not allowed in a deck");
  EXPECT_EQ(error_of("grid:\n  cells: &n 5\nsolver:\n  count: *n\n"),
            "deck.yaml:2:10: YAML anchors (&name) are not allowed in a deck");
  EXPECT_EQ(error_of("grid:\n  name: \"a\\0b\"\n"),
            "deck.yaml:2:9: grid.name: in the value as YAML reads it (escapes such as \\n "
            "applied): NUL byte is not allowed");
  EXPECT_EQ(error_of("grid:\n  name: \"a\\nb\"\n"),
            "deck.yaml:2:9: grid.name: in the value as YAML reads it (escapes such as \\n "
            "applied): control character U+000A is not allowed");
  // A tab inside a plain value is text to YAML, but no value needs one.
  EXPECT_EQ(error_of("grid:\n  name: a\tb\n"),
            "deck.yaml:2:9: grid.name: in the value as YAML reads it (escapes such as \\n "
            "applied): control character U+0009 is not allowed");
}

// '1003' in quotes is a string in YAML: a number, integer or boolean key
// refuses it rather than read the string as a number.
TEST(DeckText, QuotedNumbersAreRefused) {
  EXPECT_EQ(error_of("grid:\n  shape: ['1003']\n"),
            "deck.yaml:2:11: grid.shape: '1003' is in quotes, which make it a string; write an "
            "integer without them");
  EXPECT_EQ(error_of("grid:\n  cells: \"5\"\n"),
            "deck.yaml:2:10: grid.cells: '5' is in quotes, which make it a string; write an "
            "integer without them");
  EXPECT_EQ(error_of("grid:\n  cfl: '0.5'\n"),
            "deck.yaml:2:8: grid.cfl: '0.5' is in quotes, which make it a string; write a number "
            "without them");
  EXPECT_EQ(error_of("grid:\n  periodic: \"true\"\n"),
            "deck.yaml:2:13: grid.periodic: 'true' is in quotes, which make it a string; write "
            "true or false without them");
  // Strings and choices may be quoted.
  const Deck d = parse("grid:\n  name: '5'\n  layout: \"left\"\n  kernels: ['mul']\n");
  EXPECT_EQ(d.string("grid.name"), "5");
  EXPECT_EQ(d.string("grid.layout"), "left");
  EXPECT_EQ(d.string_list("grid.kernels"), std::vector<std::string>{"mul"});
}

// The same rules for --set, where they apply; the place is the assignment.
TEST(DeckText, OverridesFollowTheSameRules) {
  EXPECT_EQ(error_of("", {"grid.shape=['1003']"}),
            "--set grid.shape=['1003']: grid.shape: '1003' is in quotes, which make it a string; "
            "write an integer without them");
  EXPECT_EQ(error_of("", {"grid.cells=\"5\""}),
            "--set grid.cells=\"5\": grid.cells: '5' is in quotes, which make it a string; write "
            "an integer without them");
  EXPECT_EQ(
      error_of("", {"grid.cells="}),
      "--set grid.cells=: grid.cells: has no value; leave out the --set to use the default 64");
  EXPECT_EQ(error_of("", {"grid.cells=~"}),
            "--set grid.cells=~: grid.cells: has no value; leave out the --set to use the default "
            "64");
  EXPECT_EQ(error_of("", {"run.results_dir=null"}),
            "--set run.results_dir=null: run.results_dir: has no value; leave out the --set to use "
            "the default \".\"");
  EXPECT_EQ(error_of("", {"grid.name=a\rb"}),
            "--set grid.name=a\\x0Db: control character U+000D is not allowed");
  EXPECT_EQ(error_of("", {std::string("grid.name=a\0b", 13)}),
            "--set grid.name=a\\x00b: NUL byte is not allowed");
  EXPECT_EQ(error_of("", {"grid.name=caf\xe9"}),
            "--set grid.name=caf\\xE9: invalid UTF-8 (byte 0xE9): a deck is UTF-8 text");
  EXPECT_EQ(error_of("", {"grid.cells=!!str 5"}),
            "--set grid.cells=!!str 5: grid.cells: YAML tag 'tag:yaml.org,2002:str' is not allowed "
            "in a deck");
  EXPECT_EQ(error_of("", {"grid.name=\"a\\tb\""}),
            "--set grid.name=\"a\\tb\": grid.name: in the value as YAML reads it (escapes such "
            "as \\n applied): control character U+0009 is not allowed");
  EXPECT_TRUE(starts_with(error_of("", {"grid.name=\"abc"}),
                          "--set grid.name=\"abc: grid.name: cannot parse value"));
  // Quoted strings and choices are still fine.
  EXPECT_EQ(parse("", {"grid.name='x y'", "grid.layout=\"left\""}).string("grid.name"), "x y");
}

}  // namespace karma_test_deck
