// Decks: a schema of typed keys, YAML text, --set overrides, and error
// messages that say exactly where the bad value came from.
#include "deck_test.hpp"

#include "karma/deck.hpp"
#include "karma/error.hpp"
#include "karma/sha256.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace karma_test_deck {

// --- values --------------------------------------------------------------------

TEST(Deck, EmptyTextGivesEveryDefault) {
  for (const std::string text : {"", "# only a comment\n", "\n\n# two blank lines, a comment\n"}) {
    SCOPED_TRACE(text);
    const Deck d = parse(text);
    EXPECT_EQ(d.integer("grid.cells"), 64);
    EXPECT_DOUBLE_EQ(d.number("grid.cfl"), 0.5);
    EXPECT_FALSE(d.boolean("grid.periodic"));
    EXPECT_EQ(d.string("grid.name"), "box");
    EXPECT_EQ(d.string("grid.layout"), "right");
    EXPECT_EQ(d.integer_list("grid.shape"), std::vector<std::int64_t>{32});
    EXPECT_EQ(d.string_list("grid.kernels"), (std::vector<std::string>{"copy", "add"}));
    EXPECT_EQ(d.integer("solver.count"), 10);
    EXPECT_EQ(d.integer("run.repetitions"), 5);
    EXPECT_EQ(d.integer("run.warmup"), 1);
    EXPECT_EQ(d.string("run.results_dir"), ".");
  }
}

TEST(Deck, ReadsEveryTypeOfValue) {
  const Deck d = parse(full_deck);
  EXPECT_EQ(d.integer("grid.cells"), 100);
  EXPECT_DOUBLE_EQ(d.number("grid.cfl"), 0.25);
  EXPECT_TRUE(d.boolean("grid.periodic"));
  EXPECT_EQ(d.string("grid.name"), "channel");
  EXPECT_EQ(d.string("grid.layout"), "left");
  EXPECT_EQ(d.integer_list("grid.shape"), (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_EQ(d.string_list("grid.kernels"), (std::vector<std::string>{"triad", "copy"}));
  EXPECT_EQ(d.integer("solver.count"), 33554432);  // 2^25
  EXPECT_EQ(d.integer("run.repetitions"), 3);
  EXPECT_EQ(d.integer("run.warmup"), 1);  // not in the deck: default
  EXPECT_EQ(d.source(), "deck.yaml");
}

TEST(Deck, PowerSyntaxAndIntegerLimits) {
  EXPECT_EQ(parse("solver:\n  count: 2^0\n").integer("solver.count"), 1);
  EXPECT_EQ(parse("solver:\n  count: 10^3\n").integer("solver.count"), 1000);
  EXPECT_EQ(parse("solver:\n  count: 2^62\n").integer("solver.count"), std::int64_t{1} << 62);
  EXPECT_EQ(parse("solver:\n  count: 9223372036854775807\n").integer("solver.count"), INT64_MAX);
  EXPECT_EQ(parse("grid:\n  shape: [2^3, 2^2, 3]\n").integer_list("grid.shape"),
            (std::vector<std::int64_t>{8, 4, 3}));
  EXPECT_EQ(parse("solver:\n  count: +7\n").integer("solver.count"), 7);
}

TEST(Deck, NumbersAcceptIntegerAndExponentSpellings) {
  EXPECT_DOUBLE_EQ(parse("grid:\n  cfl: 1\n").number("grid.cfl"), 1.0);
  EXPECT_DOUBLE_EQ(parse("grid:\n  cfl: 2.5e-1\n").number("grid.cfl"), 0.25);
  EXPECT_DOUBLE_EQ(parse("grid:\n  cfl: 0\n").number("grid.cfl"), 0.0);  // min is inclusive
}

TEST(Deck, BooleanSpellings) {
  EXPECT_TRUE(parse("grid:\n  periodic: True\n").boolean("grid.periodic"));
  EXPECT_TRUE(parse("grid:\n  periodic: TRUE\n").boolean("grid.periodic"));
  EXPECT_FALSE(parse("grid:\n  periodic: false\n").boolean("grid.periodic"));
}

TEST(Deck, AskingForAKeyOutsideTheSchemaIsAnInternalError) {
  const Deck d = parse("");
  try {
    d.integer("grid.nope");
    FAIL() << "no error";
  } catch (const karma::InputError&) {
    FAIL() << "a programming error is not bad input";
  } catch (const karma::Error& e) {
    EXPECT_EQ(e.code(), 3);
    EXPECT_TRUE(contains(e.what(), "grid.nope"));
  }
}

// --- errors in the deck ------------------------------------------------------------

TEST(DeckErrors, YamlSyntaxError) {
  // The second ':' on line 2 (column 11) makes the value an illegal mapping.
  const std::string m = error_of("grid:\n  cells: 3: 4\n");
  EXPECT_TRUE(starts_with(m, "deck.yaml:2:11: YAML syntax error")) << m;
  // An unclosed flow list: reported where the parser gave up, never at 0:0.
  const std::string m2 = error_of("grid:\n  shape: [64\n  layout: right\n");
  EXPECT_TRUE(starts_with(m2, "deck.yaml:3:")) << m2;
  EXPECT_TRUE(contains(m2, ": YAML syntax error")) << m2;
}

TEST(DeckErrors, UnknownKeySuggestsTheNearestKnownKey) {
  EXPECT_EQ(error_of("grid:\n  cels: 3\n"),
            "deck.yaml:2:3: grid.cels: unknown key (did you mean 'grid.cells'?)");
  EXPECT_EQ(error_of("grid:\n  cells: 3\n  layuot: left\n"),
            "deck.yaml:3:3: grid.layuot: unknown key (did you mean 'grid.layout'?)");
}

TEST(DeckErrors, UnknownKeyWithNothingCloseHasNoSuggestion) {
  EXPECT_EQ(error_of("grid:\n  zzzzzzzz: 3\n"), "deck.yaml:2:3: grid.zzzzzzzz: unknown key");
  // A short name is close to its own section's name, which is no suggestion (found by the
  // deck fuzzer: "run.N: unknown key (did you mean 'run'?)").
  EXPECT_EQ(error_of("run:\n  N: 3\n"), "deck.yaml:2:3: run.N: unknown key");
  EXPECT_EQ(error_of("", {"run.n=3"}), "--set run.n=3: run.n: unknown key");
  // A key is still a fair guess for a name below it.
  EXPECT_EQ(error_of("grid:\n  cells:\n    x: 3\n"),
            "deck.yaml:3:5: grid.cells: expected an integer >= 1, <= 1000, got a mapping");
  EXPECT_EQ(error_of("", {"grid.cells.x=3"}),
            "--set grid.cells.x=3: grid.cells.x: unknown key (did you mean 'grid.cells'?)");
}

TEST(DeckErrors, UnknownSection) {
  EXPECT_EQ(error_of("solvr:\n  count: 3\n"),
            "deck.yaml:1:1: solvr: unknown key (did you mean 'solver'?)");
  EXPECT_EQ(error_of("grid:\n  cells: 3\nphysics:\n  gravity: 9.81\n"),
            "deck.yaml:3:1: physics: unknown key");
}

TEST(DeckErrors, DuplicateKey) {
  EXPECT_EQ(error_of("grid:\n  cells: 3\n  cells: 4\n"),
            "deck.yaml:3:3: grid.cells: duplicate key");
  EXPECT_EQ(error_of("grid:\n  cells: 3\ngrid:\n  layout: left\n"),
            "deck.yaml:3:1: grid: duplicate key");
}

TEST(DeckErrors, WrongType) {
  EXPECT_EQ(error_of("grid:\n  shape: abc\n"),
            "deck.yaml:2:10: grid.shape: expected a list of 1 or 3 integers >= 1, got 'abc'");
  EXPECT_EQ(error_of("grid:\n  cells: [1, 2]\n"),
            "deck.yaml:2:10: grid.cells: expected an integer >= 1, <= 1000, got a list");
  EXPECT_EQ(error_of("grid:\n  name: {a: 1}\n"),
            "deck.yaml:2:9: grid.name: expected a string, got a mapping");
  EXPECT_EQ(error_of("grid:\n  cells: 12abc\n"),
            "deck.yaml:2:10: grid.cells: '12abc' is not an integer");
  EXPECT_EQ(error_of("grid:\n  cells: 1.5\n"),
            "deck.yaml:2:10: grid.cells: '1.5' is not an integer");
  EXPECT_EQ(error_of("grid:\n  shape: [4, x, 6]\n"),
            "deck.yaml:2:14: grid.shape: 'x' is not an integer");
  EXPECT_EQ(error_of("grid: 3\n"), "deck.yaml:1:7: grid: expected a mapping of keys");
}

TEST(DeckErrors, ValuesBelowTheMinimum) {
  EXPECT_EQ(error_of("grid:\n  shape: [-5]\n"), "deck.yaml:2:11: grid.shape: must be >= 1, got -5");
  EXPECT_EQ(error_of("grid:\n  shape: [0]\n"), "deck.yaml:2:11: grid.shape: must be >= 1, got 0");
  EXPECT_EQ(error_of("grid:\n  shape: [4, 0, 6]\n"),
            "deck.yaml:2:14: grid.shape: must be >= 1, got 0");
  EXPECT_EQ(error_of("grid:\n  cells: 0\n"), "deck.yaml:2:10: grid.cells: must be >= 1, got 0");
  EXPECT_EQ(error_of("solver:\n  count: -1\n"),
            "deck.yaml:2:10: solver.count: must be >= 0, got -1");
  EXPECT_EQ(error_of("grid:\n  cfl: -0.5\n"), "deck.yaml:2:8: grid.cfl: must be >= 0, got -0.5");
}

TEST(DeckErrors, ValuesAboveTheMaximum) {
  EXPECT_EQ(error_of("grid:\n  cells: 1001\n"),
            "deck.yaml:2:10: grid.cells: must be <= 1000, got 1001");
  EXPECT_EQ(error_of("grid:\n  cfl: 1.5\n"), "deck.yaml:2:8: grid.cfl: must be <= 1, got 1.5");
}

// An integer outside the range is echoed as written, not rounded to six
// significant digits ("got 1.23457e+06").
TEST(DeckErrors, IntegerRangeMessageShowsTheValueExactly) {
  EXPECT_EQ(error_of("grid:\n  cells: 1234567\n"),
            "deck.yaml:2:10: grid.cells: must be <= 1000, got 1234567");
}

TEST(DeckErrors, IntegerTooLargeFor64Bits) {
  EXPECT_EQ(error_of("solver:\n  count: 99999999999999999999\n"),
            "deck.yaml:2:10: solver.count: '99999999999999999999' does not fit a 64-bit integer");
  EXPECT_EQ(error_of("solver:\n  count: 9223372036854775808\n"),
            "deck.yaml:2:10: solver.count: '9223372036854775808' does not fit a 64-bit integer");
  EXPECT_EQ(error_of("solver:\n  count: 2^63\n"),
            "deck.yaml:2:10: solver.count: '2^63' does not fit a 64-bit integer");
  EXPECT_EQ(error_of("grid:\n  shape: [2^64]\n"),
            "deck.yaml:2:11: grid.shape: '2^64' does not fit a 64-bit integer");
}

TEST(DeckErrors, ChoiceNotInTheList) {
  EXPECT_EQ(error_of("grid:\n  layout: diagonal\n"),
            "deck.yaml:2:11: grid.layout: 'diagonal' is not one of: left, right");
  EXPECT_EQ(error_of("grid:\n  layout: Left\n"),
            "deck.yaml:2:11: grid.layout: 'Left' is not one of: left, right");
}

TEST(DeckErrors, ListLengthNotAllowed) {
  EXPECT_EQ(error_of("grid:\n  shape: [4, 5]\n"),
            "deck.yaml:2:10: grid.shape: has 2 entries; expected a list of 1 or 3 integers >= 1");
  EXPECT_EQ(error_of("grid:\n  shape: [4, 5, 6, 7]\n"),
            "deck.yaml:2:10: grid.shape: has 4 entries; expected a list of 1 or 3 integers >= 1");
  EXPECT_TRUE(
      starts_with(error_of("grid:\n  shape: []\n"), "deck.yaml:2:10: grid.shape: has 0 entries"));
}

TEST(DeckErrors, ChoiceListEntries) {
  // Columns: '[' is 12, the second "copy" starts at 24.
  EXPECT_EQ(error_of("grid:\n  kernels: [copy, add, copy]\n"),
            "deck.yaml:2:24: grid.kernels: 'copy' is listed twice");
  EXPECT_EQ(error_of("grid:\n  kernels: [copy, div]\n"),
            "deck.yaml:2:19: grid.kernels: 'div' is not one of: copy, mul, add, triad");
  EXPECT_TRUE(starts_with(error_of("grid:\n  kernels: []\n"),
                          "deck.yaml:2:12: grid.kernels: has 0 entries; expected a list"));
}

// describe_type for a list without fixed lengths reads "a list of of ...".
TEST(DeckErrors, ChoiceListDescriptionReadsAsEnglish) {
  const std::string m = error_of("grid:\n  kernels: []\n");
  EXPECT_EQ(m,
            "deck.yaml:2:12: grid.kernels: has 0 entries; expected a list of copy|mul|add|triad");
  EXPECT_FALSE(contains(test_schema().help_text(), "of of"));
}

TEST(DeckErrors, BooleanNotTrueOrFalse) {
  EXPECT_EQ(error_of("grid:\n  periodic: maybe\n"),
            "deck.yaml:2:13: grid.periodic: 'maybe' is not true or false");
  EXPECT_EQ(error_of("grid:\n  periodic: 1\n"),
            "deck.yaml:2:13: grid.periodic: '1' is not true or false");
}

TEST(DeckErrors, NumberNotFinite) {
  EXPECT_EQ(error_of("grid:\n  cfl: nan\n"),
            "deck.yaml:2:8: grid.cfl: 'nan' is not a finite number");
  EXPECT_EQ(error_of("grid:\n  cfl: 1e999\n"),
            "deck.yaml:2:8: grid.cfl: '1e999' is not a finite number");
  EXPECT_EQ(error_of("grid:\n  cfl: inf\n"),
            "deck.yaml:2:8: grid.cfl: 'inf' is not a finite number");
  EXPECT_EQ(error_of("grid:\n  cfl: fast\n"),
            "deck.yaml:2:8: grid.cfl: 'fast' is not a finite number");
}

TEST(DeckErrors, TopLevelMustBeAMapping) {
  EXPECT_EQ(error_of("- a\n- b\n"), "deck.yaml:1:1: deck: expected a mapping of keys");
  EXPECT_EQ(error_of("just a sentence\n"), "deck.yaml:1:1: deck: expected a mapping of keys");
}

// A key with no value ("cells:") is reported on the key's own line, not at
// whatever token follows it (here the next key, on line 3); it is refused, not
// taken for "the default", and the message says how to get the default.
TEST(DeckErrors, EmptyValueIsReportedOnTheKeysLine) {
  EXPECT_EQ(error_of("grid:\n  cells:\n  layout: left\n"),
            "deck.yaml:2:3: grid.cells: has no value; remove the line to use the default 64");
  EXPECT_EQ(error_of("grid:\n  cells:   # to be decided\n"),
            "deck.yaml:2:3: grid.cells: has no value; remove the line to use the default 64");
  EXPECT_EQ(
      error_of("run:\n  results_dir:"),  // at the end of the text
      "deck.yaml:2:3: run.results_dir: has no value; remove the line to use the default \".\"");
}

TEST(DeckErrors, ExplicitNullValueIsReportedAtTheValue) {
  EXPECT_EQ(error_of("grid:\n  cells: ~\n"),
            "deck.yaml:2:10: grid.cells: has no value; remove the line to use the default 64");
  EXPECT_EQ(error_of("grid:\n  shape: null\n"),
            "deck.yaml:2:10: grid.shape: has no value; remove the line to use the default [32]");
  EXPECT_EQ(error_of("grid:\n  name: Null\n"),
            "deck.yaml:2:9: grid.name: has no value; remove the line to use the default \"box\"");
  EXPECT_EQ(error_of("grid: {kernels: ~}\n"),
            "deck.yaml:1:17: grid.kernels: has no value; remove the line to use the default "
            "[\"copy\",\"add\"]");
  // A null inside a list is no value either.
  EXPECT_EQ(error_of("grid:\n  shape: [4, ~, 6]\n"),
            "deck.yaml:2:14: grid.shape: expected a list of 1 or 3 integers >= 1, got nothing");
}

// A section with no keys (`grid: ~`, or every key commented out) is refused
// like a key with no value; so is a whole deck that is one null.
TEST(DeckErrors, EmptySectionAndNullDeckAreRefused) {
  EXPECT_EQ(error_of("grid: ~\n"),
            "deck.yaml:1:1: grid: a section with no keys; remove the line to use its defaults");
  EXPECT_EQ(error_of("grid:\n#  cells: 3\n"),
            "deck.yaml:1:1: grid: a section with no keys; remove the line to use its defaults");
  EXPECT_EQ(error_of("~\n"), "deck.yaml:1:1: deck: expected a mapping of keys, got nothing");
  EXPECT_EQ(error_of("null"), "deck.yaml:1:1: deck: expected a mapping of keys, got nothing");
  EXPECT_EQ(error_of("# nothing yet\n---\n"),
            "deck.yaml:3:1: deck: expected a mapping of keys, got nothing");
}

TEST(DeckErrors, TheFirstBadValueIsReported) {
  EXPECT_EQ(error_of("grid:\n  cells: 3\n  layout: up\n  cfl: 7\n"),
            "deck.yaml:3:11: grid.layout: 'up' is not one of: left, right");
}

// --- --set overrides -------------------------------------------------------------

TEST(DeckOverrides, SetWinsOverTheDeck) {
  const Deck d = parse(full_deck, {"grid.cells=7", "grid.layout=right", "run.warmup=0"});
  EXPECT_EQ(d.integer("grid.cells"), 7);
  EXPECT_EQ(d.string("grid.layout"), "right");
  EXPECT_EQ(d.integer("run.warmup"), 0);
  EXPECT_EQ(d.integer("run.repetitions"), 3);  // untouched deck value stays
  EXPECT_EQ(d.origin("grid.cells"), "--set grid.cells=7");
}

TEST(DeckOverrides, IsDefaultOnlyForKeysNeitherTheDeckNorSetGave) {
  const Deck d = parse("grid:\n  cells: 5\n", {"grid.layout=right"});
  EXPECT_FALSE(d.is_default("grid.cells"));   // the deck
  EXPECT_FALSE(d.is_default("grid.layout"));  // --set
  EXPECT_TRUE(d.is_default("run.warmup"));
  // A value equal to the default, written down, is not the default.
  EXPECT_FALSE(parse("", {"run.warmup=" + std::to_string(parse("").integer("run.warmup"))})
                   .is_default("run.warmup"));
}

TEST(DeckOverrides, LaterSetWins) {
  EXPECT_EQ(parse("", {"grid.cells=7", "grid.cells=9"}).integer("grid.cells"), 9);
  EXPECT_EQ(parse("", {"grid.cells=9", "grid.cells=7"}).integer("grid.cells"), 7);
}

TEST(DeckOverrides, ListsAndOtherTypes) {
  const Deck d = parse("", {"grid.shape=[4,5,6]", "grid.kernels=[mul, triad]", "grid.cfl=0.125",
                            "grid.periodic=true", "solver.count=2^10", "grid.name=a=b"});
  EXPECT_EQ(d.integer_list("grid.shape"), (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_EQ(d.string_list("grid.kernels"), (std::vector<std::string>{"mul", "triad"}));
  EXPECT_DOUBLE_EQ(d.number("grid.cfl"), 0.125);
  EXPECT_TRUE(d.boolean("grid.periodic"));
  EXPECT_EQ(d.integer("solver.count"), 1024);
  EXPECT_EQ(d.string("grid.name"), "a=b");  // only the first '=' separates
}

TEST(DeckOverrides, ErrorsNameTheAssignment) {
  EXPECT_EQ(error_of("", {"grid.cells=0"}), "--set grid.cells=0: grid.cells: must be >= 1, got 0");
  EXPECT_EQ(error_of("", {"grid.shape=[4,5]"}),
            "--set grid.shape=[4,5]: grid.shape: has 2 entries; expected a list of 1 or 3 "
            "integers >= 1");
  EXPECT_EQ(error_of("", {"grid.layout=up"}),
            "--set grid.layout=up: grid.layout: 'up' is not one of: left, right");
  EXPECT_EQ(error_of("", {"grid.shape=abc"}),
            "--set grid.shape=abc: grid.shape: expected a list of 1 or 3 integers >= 1, got 'abc'");
  EXPECT_TRUE(starts_with(error_of("", {"grid.shape=[4,5"}),
                          "--set grid.shape=[4,5: grid.shape: cannot parse value"));
  // A good deck does not rescue a bad override, and the deck's own position is not used.
  EXPECT_EQ(error_of(full_deck, {"grid.cells=1001"}),
            "--set grid.cells=1001: grid.cells: must be <= 1000, got 1001");
}

TEST(DeckOverrides, UnknownKeyGetsASuggestion) {
  EXPECT_EQ(error_of("", {"grid.cels=3"}),
            "--set grid.cels=3: grid.cels: unknown key (did you mean 'grid.cells'?)");
  EXPECT_EQ(error_of("", {"gird.cells=3"}),
            "--set gird.cells=3: gird.cells: unknown key (did you mean 'grid.cells'?)");
  EXPECT_EQ(error_of("", {"nothing.like.it=3"}),
            "--set nothing.like.it=3: nothing.like.it: unknown key");
}

// A section is not a key: say so, and never suggest the very name typed.
TEST(DeckOverrides, SuggestionIsNeverTheUnknownNameItself) {
  const std::string m = error_of("", {"grid=3"});
  EXPECT_EQ(m, "--set grid=3: grid: is a section; --set names one of its keys");
  EXPECT_FALSE(contains(m, "did you mean 'grid'?")) << m;
  const std::string n = error_of("", {"grid.cellz.x=3"});
  EXPECT_FALSE(contains(n, "did you mean 'grid.cellz.x'")) << n;
}

TEST(DeckOverrides, MalformedAssignment) {
  EXPECT_EQ(error_of("", {"grid.cells"}), "--set grid.cells: expected --set key.path=value");
  EXPECT_EQ(error_of("", {"=5"}), "--set =5: expected --set key.path=value");
  // The first malformed one is reported even after good ones.
  EXPECT_EQ(error_of("", {"grid.cells=5", "oops"}), "--set oops: expected --set key.path=value");
}

// --- origins, fail(), resolved(), sha256(), help ----------------------------------------

TEST(DeckOrigin, FailNamesWhereTheValueCameFrom) {
  const Deck d = parse(full_deck, {"solver.count=4"});
  EXPECT_EQ(d.origin("grid.cells"), "deck.yaml:3:10");
  EXPECT_EQ(d.origin("grid.shape"), "deck.yaml:8:10");
  EXPECT_EQ(d.origin("solver.count"), "--set solver.count=4");
  EXPECT_EQ(d.origin("run.warmup"), "deck.yaml (default value)");
  try {
    d.fail("grid.shape", "4*5*6 cells overflow");
    FAIL() << "fail() returned";
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_STREQ(e.what(), "deck.yaml:8:10: grid.shape: 4*5*6 cells overflow");
  }
  try {
    d.fail("solver.count", "too few");
    FAIL() << "fail() returned";
  } catch (const karma::InputError& e) {
    EXPECT_STREQ(e.what(), "--set solver.count=4: solver.count: too few");
  }
  try {
    d.fail("run.warmup", "not now");
    FAIL() << "fail() returned";
  } catch (const karma::InputError& e) {
    EXPECT_STREQ(e.what(), "deck.yaml (default value): run.warmup: not now");
  }
}

TEST(DeckResolved, NestedJsonWithEveryKeyIncludingDefaults) {
  const Deck d = parse("grid:\n  cells: 100\n  shape: [4, 5, 6]\n", {"run.warmup=0"});
  nlohmann::json r = d.resolved();  // not const: a missing key reads as null
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.size(), 3u);  // grid, solver, run
  ASSERT_TRUE(r.contains("grid") && r["grid"].is_object());
  EXPECT_EQ(r["grid"].size(), 7u);
  EXPECT_EQ(r["grid"]["cells"], 100);
  EXPECT_EQ(r["grid"]["shape"], nlohmann::json({4, 5, 6}));
  EXPECT_EQ(r["grid"]["cfl"], 0.5);
  EXPECT_EQ(r["grid"]["periodic"], false);
  EXPECT_EQ(r["grid"]["name"], "box");
  EXPECT_EQ(r["grid"]["layout"], "right");
  EXPECT_EQ(r["grid"]["kernels"], nlohmann::json({"copy", "add"}));
  EXPECT_EQ(r["solver"]["count"], 10);
  ASSERT_TRUE(r.contains("run") && r["run"].is_object());
  EXPECT_EQ(r["run"].size(), 7u);
  EXPECT_EQ(r["run"]["repetitions"], 5);
  EXPECT_EQ(r["run"]["warmup"], 0);
  EXPECT_EQ(r["run"]["results_dir"], ".");
  EXPECT_EQ(r["run"]["energy"], "on");
  EXPECT_EQ(r["run"]["energy_window"], 0.5);
  EXPECT_FALSE(r.contains("grid.cells"));  // nested, not dotted
}

TEST(DeckSha256, IsTheDigestOfTheText) {
  const Deck d = parse(full_deck);
  EXPECT_EQ(d.sha256(), karma::sha256_hex(full_deck));
  EXPECT_EQ(d.sha256().size(), 64u);
  // The text, not its meaning: a comment changes the digest; --set does not.
  EXPECT_NE(parse(full_deck + "# more\n").sha256(), d.sha256());
  EXPECT_EQ(parse(full_deck, {"grid.cells=7"}).sha256(), d.sha256());
  EXPECT_EQ(parse("").sha256(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(DeckLoad, ReadsAFileAndNamesItInMessages) {
  const std::string path =
      ::testing::TempDir() + "karma_test_deck_load_" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(path);
    out << "grid:\n  cells: 12\n  layout: sideways\n";
  }
  try {
    Deck::load(path, test_schema());
    ADD_FAILURE() << "no error";
  } catch (const karma::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":3:11: grid.layout: 'sideways' is not one of: left, right");
  }
  {
    std::ofstream out(path);
    out << "grid:\n  cells: 12\n";
  }
  const Deck d = Deck::load(path, test_schema(), {"grid.layout=left"});
  EXPECT_EQ(d.integer("grid.cells"), 12);
  EXPECT_EQ(d.string("grid.layout"), "left");
  EXPECT_EQ(d.source(), path);
  EXPECT_EQ(d.origin("grid.cells"), path + ":2:10");
  EXPECT_EQ(d.sha256(), karma::sha256_hex("grid:\n  cells: 12\n"));
  std::remove(path.c_str());
}

TEST(DeckLoad, MissingFileIsBadInput) {
  try {
    Deck::load("/nonexistent-karma-dir/deck.yaml", test_schema());
    FAIL() << "no error";
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_TRUE(starts_with(e.what(), "cannot open deck '/nonexistent-karma-dir/deck.yaml'"));
  }
}

// A path that is not a deck file is refused before anything runs: a
// directory, an empty file or a device would otherwise run the defaults (or
// read /dev/zero until memory runs out).
TEST(DeckLoad, DirectoryEmptyDeviceAndHugeFilesAreBadInput) {
  const std::string empty =
      ::testing::TempDir() + "karma_test_deck_empty_" + std::to_string(getpid()) + ".yaml";
  const std::string huge =
      ::testing::TempDir() + "karma_test_deck_huge_" + std::to_string(getpid()) + ".yaml";
  { std::ofstream out(empty); }
  {
    std::ofstream out(huge);
    out << std::string(2 << 20, '#') << "\n";
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {::testing::TempDir(), "is a directory"},
      {empty, "is empty"},
      {"/dev/null", "is not a regular file"},
      {"/dev/zero", "is not a regular file"},
      {huge, "is larger than"}};
  for (const auto& [path, why] : cases) {
    try {
      Deck::load(path, test_schema());
      ADD_FAILURE() << path << ": no error";
    } catch (const karma::InputError& e) {
      EXPECT_EQ(e.code(), 2);
      EXPECT_TRUE(starts_with(e.what(), "deck '" + path + "' " + why)) << e.what();
    }
  }
  std::remove(empty.c_str());
  std::remove(huge.c_str());
}

TEST(Schema, HelpMentionsEveryKeyItsDefaultAndHelp) {
  const Schema s = test_schema();
  const std::string help = s.help_text();
  for (const auto& k : s.keys()) {
    const std::string leaf = k.path.substr(k.path.rfind('.') + 1);
    EXPECT_TRUE(contains(help, "  " + leaf + "  (")) << k.path;
    EXPECT_TRUE(contains(help, "default: " + k.default_value.dump() + ")")) << k.path;
    EXPECT_TRUE(contains(help, k.help)) << k.path;
  }
  EXPECT_TRUE(contains(help, "cells  (an integer >= 1, <= 1000; default: 64)"));
  EXPECT_TRUE(contains(help, "shape  (a list of 1 or 3 integers >= 1; default: [32])"));
  EXPECT_TRUE(contains(help, "layout  (one of left|right; default: \"right\")"));
  EXPECT_TRUE(contains(help, "repetitions  (an integer >= 1; default: 5)"));
  EXPECT_TRUE(starts_with(help, "grid:\n"));
  EXPECT_TRUE(contains(help, "\nsolver:\n"));
  EXPECT_TRUE(contains(help, "\nrun:\n"));
  EXPECT_EQ(s.keys().size(), 15u);  // the run section: 7 keys
}

// run.inject_fault: "none" and the app's faults; a retired key, in the deck
// or in --set, names its replacement and is never taken as unknown.
TEST(Schema, FaultsAndRetiredKeys) {
  EXPECT_EQ(parse("").string("run.inject_fault"), "none");
  EXPECT_EQ(parse("run:\n  inject_fault: sign\n").string("run.inject_fault"), "sign");
  EXPECT_EQ(error_of("run:\n  inject_fault: cosine\n"),
            "deck.yaml:2:17: run.inject_fault: 'cosine' is not one of: none, sign");
  EXPECT_EQ(error_of("grid:\n  corrupt: true\n"),
            "deck.yaml:2:3: grid.corrupt: no longer read; use run.inject_fault: sign");
  EXPECT_EQ(error_of("", {"grid.corrupt=true"}),
            "--set grid.corrupt=true: grid.corrupt: no longer read; use run.inject_fault: sign");
  const Schema s = test_schema();
  EXPECT_EQ(s.find("grid.corrupt"), nullptr);
  EXPECT_NE(s.find("run.inject_fault")->help.find("sign: a flipped sign"), std::string::npos);
}

TEST(Schema, FindSectionsAndSuggestions) {
  const Schema s = test_schema();
  ASSERT_NE(s.find("grid.cells"), nullptr);
  EXPECT_EQ(s.find("grid.cells")->type, karma::KeyType::integer);
  EXPECT_EQ(s.find("grid.kernels")->type, karma::KeyType::choice_list);
  EXPECT_EQ(s.find("grid"), nullptr);
  EXPECT_EQ(s.find("cells"), nullptr);
  EXPECT_TRUE(s.is_section("grid"));
  EXPECT_TRUE(s.is_section("run"));
  EXPECT_FALSE(s.is_section("grid.cells"));
  EXPECT_FALSE(s.is_section("gri"));
  EXPECT_EQ(s.suggest("grid.cels"), "grid.cells");
  EXPECT_EQ(s.suggest("run.repetiton"), "run.repetitions");
  EXPECT_EQ(s.suggest("run.warmpu"), "run.warmup");
  EXPECT_EQ(s.suggest("qqqqqqqq.zzzzzz"), "");
}

TEST(Schema, RedeclaringAKeyReplacesIt) {
  Schema s = test_schema();
  s.integer("run.repetitions", 20, "more repetitions", 2);
  EXPECT_EQ(s.keys().size(), 15u);
  const Deck d = Deck::parse("", "d.yaml", s);
  EXPECT_EQ(d.integer("run.repetitions"), 20);
  try {
    Deck::parse("run:\n  repetitions: 1\n", "d.yaml", s);
    FAIL() << "no error";
  } catch (const karma::InputError& e) {
    EXPECT_STREQ(e.what(), "d.yaml:2:16: run.repetitions: must be >= 2, got 1");
  }
}

// --- --help=json -------------------------------------------------------------------

TEST(DeckJsonSchema, EveryKeyWithItsTypeDefaultRangeAndMeaning) {
  const nlohmann::json s = test_schema().json_schema("test deck");
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s["additionalProperties"], false);
  const auto& grid = s["properties"]["grid"];
  EXPECT_EQ(grid["type"], "object");
  EXPECT_EQ(grid["additionalProperties"], false);
  const auto& cells = grid["properties"]["cells"];
  EXPECT_EQ(cells, (nlohmann::json{{"type", "integer"},
                                   {"minimum", 1},
                                   {"maximum", 1000},
                                   {"default", 64},
                                   {"description", "number of cells per side"},
                                   {"x-karma-type", "an integer >= 1, <= 1000"},
                                   {"x-rules", "fixed"}}));
  EXPECT_EQ(grid["properties"]["cfl"]["maximum"], 1.0);
  EXPECT_EQ(grid["properties"]["periodic"]["type"], "boolean");
  EXPECT_EQ(grid["properties"]["layout"]["enum"], (nlohmann::json{"left", "right"}));
  const auto& shape = grid["properties"]["shape"];
  EXPECT_EQ(shape["items"], (nlohmann::json{{"type", "integer"}, {"minimum", 1}}));
  EXPECT_EQ(shape["anyOf"],
            (nlohmann::json::parse(
                R"([{"minItems": 1, "maxItems": 1}, {"minItems": 3, "maxItems": 3}])")));
  const auto& kernels = grid["properties"]["kernels"];
  EXPECT_EQ(kernels["uniqueItems"], true);
  EXPECT_EQ(kernels["items"]["enum"], (nlohmann::json{"copy", "mul", "add", "triad"}));
  EXPECT_EQ(kernels["default"], (nlohmann::json{"copy", "add"}));
  // Every key of the schema, and nothing else, at its section.
  std::size_t keys = 0;
  for (const auto& [section, body] : s["properties"].items()) keys += body["properties"].size();
  EXPECT_EQ(keys, test_schema().keys().size());
  EXPECT_EQ(s["properties"]["run"]["properties"]["energy"]["enum"], (nlohmann::json{"on", "off"}));
  // A retired key is no property (a deck naming it is refused), but the
  // schema says at which value it ran the work of today's defaults.
  EXPECT_EQ(grid["properties"].count("corrupt"), 0u);
  EXPECT_EQ(s["x-retired"], (nlohmann::json::parse(
                                R"({"grid.corrupt": {"instead": "use run.inject_fault: sign",
                                                     "same_work": false}})")));
}

TEST(DeckJsonSchema, TheBoundsTheReaderEnforces) {
  // The reader refuses what the schema's bounds refuse: both from one KeySpec.
  const nlohmann::json s = test_schema().json_schema("test deck");
  EXPECT_EQ(s["properties"]["solver"]["properties"]["count"]["minimum"], 0);
  EXPECT_TRUE(contains(error_of("solver:\n  count: -1\n"), "must be >= 0, got -1"));
  EXPECT_EQ(s["properties"]["grid"]["properties"]["cells"]["maximum"], 1000);
  EXPECT_TRUE(contains(error_of("grid:\n  cells: 1001\n"), "must be <= 1000, got 1001"));
}

TEST(DeckJsonSchema, TheGrammarItStatesIsTheReaders) {
  // x-karma-yaml tells the tools how the reader reads a value's text: its
  // patterns take exactly what the reader takes (within the 64-bit bounds
  // it also states), so a tool that applies them needs no copy of deck.cpp.
  const nlohmann::json g = test_schema().json_schema("test deck")["x-karma-yaml"];
  EXPECT_EQ(g["integer"]["maximum"], INT64_MAX);
  EXPECT_EQ(g["boolean"]["true"], (nlohmann::json{"true", "True", "TRUE"}));
  const auto takes = [](const std::string& key, const std::string& text) {
    try {
      parse("", {key + "=" + text});
      return true;
    } catch (const karma::InputError&) {
      return false;
    }
  };
  const std::regex integer(g["integer"]["pattern"].get<std::string>());
  for (const std::string text : {"5", "+5", "-0", "2^10", "2^+3", "+2^3", "0^0", "00012", "2^-1",
                                 "1e3", "1.5", "0x10", "1_000", "abc", "2^", "^2", "2^62"})
    EXPECT_EQ(std::regex_match(text, integer), takes("solver.count", text)) << text;
  const std::regex number(g["number"]["pattern"].get<std::string>());
  for (const std::string text : {"0.5", ".5", "1.", "1e-1", "1E0", "0x1p-2", "0x.8", "+0.5", "1",
                                 "inf", "nan", "1_0", "1e", "0x", ".", "2^1"})
    EXPECT_EQ(std::regex_match(text, number), takes("grid.cfl", text)) << text;
}

}  // namespace karma_test_deck
