// The run section as the core reads, applies and records it
// (karma/run_settings.hpp).
#include "karma/run_settings.hpp"

#include "deck_test.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace karma;
using karma_test_deck::parse;

TEST(RunSettings, ReadFromTheDeckWithItsOverrides) {
  const RunSettings run = read_run_settings(
      parse("run:\n  warmup: 4\n  energy: off\n",
            {"run.inject_fault=sign", "run.comm=host-staging", "run.results_dir=out"}));
  EXPECT_EQ(run.repetitions, 5);  // the schema's default: run_section(5, 1)
  EXPECT_EQ(run.warmup, 4);
  EXPECT_EQ(run.inject_fault, "sign");
  EXPECT_EQ(run.comm, "host-staging");
  EXPECT_EQ(run.results_dir, "out");
  EXPECT_FALSE(run.energy);
  EXPECT_DOUBLE_EQ(run.energy_window, 0.5);
  EXPECT_TRUE(read_run_settings(parse("")).energy);
}

std::vector<std::string> paths(const Schema& s) {
  std::vector<std::string> out;
  for (const auto& k : s.keys()) out.push_back(k.path);
  return out;
}

TEST(RunSettings, AStepperDeclaresTheSameSectionWithoutRepetitions) {
  Schema repeated, stepped;
  repeated.run_section(20, 2);
  stepped.stepped_run_section(1, "warm-up steps");
  std::vector<std::string> keys = paths(repeated);
  ASSERT_EQ(keys.front(), "run.repetitions");
  keys.erase(keys.begin());
  EXPECT_EQ(paths(stepped), keys);  // in the same order, for --help
  EXPECT_EQ(stepped.find("run.warmup")->help, "warm-up steps");
  EXPECT_EQ(stepped.find("run.warmup")->default_value, 1);
  EXPECT_EQ(stepped.find("run.results_dir")->rule, Rule::free);
  EXPECT_EQ(stepped.find("run.comm")->rule, Rule::tuning);
}

TEST(RunSettings, KeysTheSchemaLacksKeepTheirDefaults) {
  // contact's run section: warm-up steps, no repetitions, no faults here.
  Schema s;
  s.stepped_run_section(1, "warm-up steps");
  const RunSettings run = read_run_settings(Deck::parse("run: {warmup: 3}\n", "d.yaml", s));
  EXPECT_EQ(run.warmup, 3);
  EXPECT_EQ(run.repetitions, 0);
  EXPECT_EQ(run.inject_fault, "none");
  EXPECT_EQ(run.comm, "auto");
}

TEST(RunSettings, TheResultsRecordTheCountsBesideTheProblem) {
  RunSettings run;
  run.repetitions = 20;
  run.warmup = 2;
  nlohmann::json problem = {{"n", 7}};
  record_run_settings(run, problem);
  EXPECT_EQ(problem, (nlohmann::json{{"n", 7}, {"repetitions", 20}, {"warmup", 2}}));
  EXPECT_EQ(run_settings_summary(run), "; 20 repetitions after 2 warm-up(s)");

  run.repetitions = 0;  // steps instead (contact): its summary says them
  nlohmann::json steps = nlohmann::json::object();
  record_run_settings(run, steps);
  EXPECT_EQ(steps, (nlohmann::json{{"warmup", 2}}));
  EXPECT_EQ(run_settings_summary(run), "");
}

}  // namespace
