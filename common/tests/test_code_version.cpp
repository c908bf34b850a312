// Code versions (karma/code_version.hpp): the source hash of the symbols, in
// order, and the version of that with the launch shape, as
// karma_tools.codeversion.combine makes them.
#include "karma/code_version.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

const karma::CodeTable table = {{"karma::demo::A", "0123456789abcdef"},
                                {"karma::demo::B", "fedcba9876543210"}};

TEST(CodeVersion, AsThePythonToolsMakeIt) {
  // combine(["0123456789abcdef", "fedcba9876543210"],
  //         {"elements_per_item": 4, "policy_3d": "range"}) in Python.
  const auto v = karma::code_version(table, {"karma::demo::A", "karma::demo::B"},
                                     {{"policy_3d", "range"}, {"elements_per_item", 4}});
  EXPECT_EQ(v.source, "f46549101424db27");
  EXPECT_EQ(v.version, "d6cf615093fcf311");
}

TEST(CodeVersion, ALaunchShapeChangesTheVersionNotTheSource) {
  const std::vector<std::string> symbols = {"karma::demo::A"};
  const auto four = karma::code_version(table, symbols, {{"elements_per_item", 4}});
  const auto eight = karma::code_version(table, symbols, {{"elements_per_item", 8}});
  EXPECT_EQ(four.source, eight.source);
  EXPECT_NE(four.version, eight.version);
  EXPECT_NE(karma::code_version(table, {"karma::demo::B"}, {{"elements_per_item", 4}}).version,
            four.version);
}

TEST(CodeVersion, CodeTheTableLacksIsABug) {
  EXPECT_THROW(karma::code_version(table, {"karma::demo::C"}, nlohmann::json::object()),
               std::logic_error);
}

}  // namespace
