// What the deck tests share: a schema of every key type, parsing with it,
// the message of the error it throws, and a deck that gives every key.
#pragma once

#include "karma/deck.hpp"
#include "karma/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace karma_test_deck {

using karma::Deck;
using karma::Schema;

// One key of every KeyType, in two sections, plus the shared run section.
inline Schema test_schema() {
  Schema s;
  s.integer("grid.cells", 64, "number of cells per side", 1, 1000)
      .number("grid.cfl", 0.5, "Courant number of the time step", 0.0, 1.0)
      .boolean("grid.periodic", false, "wrap the boundaries around")
      .string("grid.name", "box", "a name for the case")
      .choice("grid.layout", "right", {"left", "right"}, "memory order of the arrays")
      .integer_list("grid.shape", {32}, "extents of the domain", {1, 3}, 1)
      .choice_list("grid.kernels", {"copy", "add"}, {"copy", "mul", "add", "triad"},
                   "kernels to run, in order")
      .integer("solver.count", 10, "iterations of the solver", 0)
      .run_section(5, 1)
      .faults({{"sign", "a flipped sign"}})
      .retired("grid.corrupt", "use run.inject_fault: sign", false);
  return s;
}

inline Deck parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return Deck::parse(text, "deck.yaml", test_schema(), overrides);
}

// The message of the InputError that parsing throws; a failure when none.
inline std::string error_of(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  try {
    parse(text, overrides);
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(e.code(), karma::exit_bad_input);
    EXPECT_TRUE(e.collective());
    return e.what();
  }
  ADD_FAILURE() << "no InputError for deck:\n" << text;
  return "";
}

inline ::testing::AssertionResult starts_with(const std::string& s, const std::string& prefix) {
  if (s.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not start with '" << prefix << "'";
}

inline ::testing::AssertionResult contains(const std::string& s, const std::string& part) {
  if (s.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << s << "' does not contain '" << part << "'";
}

inline const std::string full_deck =
    "# every key given\n"         // line 1
    "grid:\n"                     // line 2
    "  cells: 100\n"              // line 3, value at column 10
    "  cfl: 0.25\n"               // line 4
    "  periodic: true\n"          // line 5
    "  name: channel\n"           // line 6
    "  layout: left\n"            // line 7
    "  shape: [4, 5, 6]\n"        // line 8, value at column 10
    "  kernels: [triad, copy]\n"  // line 9
    "solver:\n"                   // line 10
    "  count: 2^25\n"             // line 11
    "run:\n"                      // line 12
    "  repetitions: 3\n";         // line 13

}  // namespace karma_test_deck
