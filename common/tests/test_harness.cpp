// The measurement harness (karma/harness.hpp), the run section it applies
// (karma/deck.hpp's RunSettings) and the shared helpers
// (karma/partition.hpp, karma/overflow.hpp).
#include "karma/app.hpp"
#include "karma/deck.hpp"
#include "karma/error.hpp"
#include "karma/harness.hpp"
#include "karma/overflow.hpp"
#include "karma/partition.hpp"

#include "deck_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace karma;
using karma_test_deck::parse;

// --- the order of executions ----------------------------------------------------

std::string describe(const std::vector<Turn>& order) {
  std::string out;
  for (const auto& t : order)
    out += std::string(t.opens_turn ? "[" : "") + std::to_string(t.index) + (t.timed ? "t" : "w") +
           std::to_string(t.count) + (t.closes_turn ? "]" : "") + " ";
  return out;
}

// The run section's counts, as the core reads them from a deck.
RunSettings run_of(std::int64_t warmup, std::int64_t repetitions) {
  RunSettings run;
  run.warmup = warmup;
  run.repetitions = repetitions;
  return run;
}

Plan plan_of(std::int64_t rounds, Plan::WarmUp warm_up = Plan::WarmUp::first_turn) {
  Plan p;
  p.rounds = rounds;
  p.warm_up = warm_up;
  return p;
}

TEST(HarnessSchedule, OneRoundRunsEachVariantsRepetitionsInOneTurnAfterItsWarmUps) {
  EXPECT_EQ(describe(schedule(2, plan_of(1), run_of(2, 5))), "[0w2 0t5] [1w2 1t5] ");
}

TEST(HarnessSchedule, RoundsSplitTheRepetitionsEvenlyTheFirstTakingTheRest) {
  EXPECT_EQ(describe(schedule(2, plan_of(3), run_of(1, 7))),
            "[0w1 0t3] [1w1 1t3] [0t2] [1t2] [0t2] [1t2] ");
  EXPECT_EQ(describe(schedule(1, plan_of(2), run_of(0, 4))), "[0t2] [0t2] ");
}

TEST(HarnessSchedule, RoundsOfOneInterleaveSingleExecutionsAndWarmUpRounds) {
  EXPECT_EQ(describe(schedule(3, plan_of(2, Plan::WarmUp::rounds), run_of(1, 2))),
            "[0w1] [1w1] [2w1] [0t1] [1t1] [2t1] [0t1] [1t1] [2t1] ");
}

TEST(HarnessSchedule, EveryRepetitionIsARoundWhateverTheirNumber) {
  EXPECT_EQ(
      describe(schedule(2, plan_of(Plan::every_repetition, Plan::WarmUp::rounds), run_of(1, 3))),
      "[0w1] [1w1] [0t1] [1t1] [0t1] [1t1] [0t1] [1t1] ");
}

TEST(HarnessSchedule, RoundsAreClampedToTheRepetitions) {
  EXPECT_EQ(describe(schedule(1, plan_of(9), run_of(0, 2))), "[0t1] [0t1] ");
  EXPECT_EQ(describe(schedule(1, plan_of(0), run_of(0, 2))), "[0t2] ");
}

// --- measure() --------------------------------------------------------------------

struct Harness {
  Schema schema;
  Deck deck;
  CommandLine command_line;
  Context ctx;
  Harness() : deck(Deck::parse("", "deck.yaml", schema, {})), ctx{deck, command_line, -1, {}} {
    command_line.quiet = true;
  }
};

// Variants "a" and "b" that write their runs and turns into log: "a" a run,
// "(a" and "a)" a turn's start and end.
std::vector<Variant> logged_variants(std::vector<std::string>& log) {
  std::vector<Variant> variants(2);
  for (int i = 0; i < 2; ++i) {
    const std::string id = i == 0 ? "a" : "b";
    Variant& v = variants[i];
    v.name = v.variant = id;
    v.implementation = "kokkos";
    v.run = [&log, id] { log.push_back(id); };
    v.before_turn = [&log, id] { log.push_back("(" + id); };
    v.after_turn = [&log, id] { log.push_back(id + ")"); };
  }
  return variants;
}

std::string joined(const std::vector<std::string>& log) {
  std::string out;
  for (const auto& s : log) out += s;
  return out;
}

TEST(HarnessMeasure, RunsHooksInOrderAndTimesOnlyTheRepetitions) {
  Harness run;
  std::vector<std::string> log;
  std::vector<Variant> variants = logged_variants(log);
  for (Variant& v : variants) {
    v.bytes = 1e9;
    v.before_each = [&log] { log.push_back("<"); };
    v.after_each = [&log] { log.push_back(">"); };
  }
  run.ctx.run = run_of(1, 4);
  const auto results = measure(run.ctx, variants, plan_of(2));
  EXPECT_EQ(joined(log), "(a<a><a><a>a)(b<b><b><b>b)(a<a><a>a)(b<b><b>b)");
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) EXPECT_EQ(r.time.count, 4u) << r.name;  // warm-ups untimed
  EXPECT_EQ(results[1].name, "b");
}

TEST(HarnessMeasure, TwoVariantsOfOneNameAreAnInternalError) {
  Harness run;
  std::vector<Variant> variants(2);
  for (auto& v : variants) {
    v.name = "same";
    v.run = [] {};
  }
  run.ctx.run = run_of(0, 1);
  EXPECT_THROW(measure(run.ctx, variants, plan_of(1)), Error);
}

TEST(HarnessMeasure, BytesSetByAHookDuringTheRunsCount) {
  Harness run;
  std::vector<Variant> variants(1);
  Variant& v = variants[0];
  v.name = v.variant = "counted";
  v.implementation = "kokkos";
  v.run = [] {};
  v.after_each = [&v] { v.bytes = 5e9; };
  run.ctx.run = run_of(0, 3);
  const auto results = measure(run.ctx, variants, plan_of(1));
  EXPECT_EQ(results[0].bytes, 5e9);
  EXPECT_GT(results[0].fom, 0);
}

// --- measure_steps() ----------------------------------------------------------------

TEST(HarnessSteps, EachStepOpensWithItsHookThenEveryVariantTakesATurn) {
  Harness run;
  std::vector<std::string> log;
  std::vector<Variant> variants = logged_variants(log);
  variants[0].per_step = 1;
  variants[1].per_step = 3;
  run.ctx.run = run_of(1, 0);  // contact's run section: warm-up steps, no repetitions
  Steps steps;
  steps.count = 2;
  steps.before = [&log](std::int64_t step, bool timed) {
    log.push_back((timed ? "S" : "W") + std::to_string(step));
  };
  steps.after = [&log](std::int64_t step) { log.push_back("/" + std::to_string(step)); };
  const auto results = measure_steps(run.ctx, variants, steps);
  EXPECT_EQ(joined(log), "W0(aaa)(bbb)S0(aaa)(bbbbb)/0S1(aaa)(bbbbb)/1");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].time.count, 2u);  // one a step; the warm-up untimed
  EXPECT_EQ(results[1].time.count, 6u);
}

TEST(HarnessSteps, WorkSetByTheLastStepsHookMakesTheFigure) {
  Harness run;
  std::vector<Variant> variants(1);
  Variant& v = variants[0];
  v.name = v.variant = "rebuild";
  v.implementation = "kokkos";
  v.run = [] {};
  v.fom = {FigureOfMerit::From::count_rate, 0, "pairs/s", 1, FigureOfMerit::Time::mean};
  Steps steps;
  steps.count = 3;
  steps.after = [&v](std::int64_t step) {
    if (step == 2) v.fom.count = 7e3;
  };
  const auto results = measure_steps(run.ctx, variants, steps);
  EXPECT_DOUBLE_EQ(results[0].fom, 7e3 / results[0].time.mean);
  EXPECT_EQ(results[0].fom_units, "pairs/s");
}

// --- kernel_result() ----------------------------------------------------------------

Stats seconds(double min, double median, double max) {
  Stats s;
  s.count = 3;
  s.min = min;
  s.median = median;
  s.max = max;
  return s;
}

TEST(HarnessResult, BandwidthFigureOfMeritAndRatesFromTheTimes) {
  Variant v;
  v.name = "triad";
  v.implementation = "native-cuda";
  v.variant = "grid-stride";
  v.bytes = 3e9;
  v.flops = 2e9;
  v.extra["note"] = "kept";
  const KernelResult r = kernel_result(v, seconds(0.5, 1.0, 2.0));
  EXPECT_EQ(r.name, "triad");
  EXPECT_EQ(r.implementation, "native-cuda");
  EXPECT_EQ(r.variant, "grid-stride");
  EXPECT_DOUBLE_EQ(r.fom, 6.0);
  EXPECT_EQ(r.fom_units, "GB/s");
  EXPECT_DOUBLE_EQ(r.extra["bandwidth_GBps"]["best"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(r.extra["bandwidth_GBps"]["median"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(r.extra["bandwidth_GBps"]["worst"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(r.extra["GFLOPs"]["best"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(r.extra["GFLOPs"]["median"].get<double>(), 2.0);
  EXPECT_EQ(r.extra["note"], "kept");
}

TEST(HarnessResult, FlopRateAndCountRateFiguresOfMerit) {
  Variant v;
  v.name = "v";
  v.flops = 8e9;
  v.fom.from = FigureOfMerit::From::flop_rate;
  EXPECT_DOUBLE_EQ(kernel_result(v, seconds(2, 2, 2)).fom, 4.0);
  EXPECT_EQ(kernel_result(v, seconds(2, 2, 2)).fom_units, "GFLOP/s");
  EXPECT_FALSE(kernel_result(v, seconds(2, 2, 2)).extra.contains("bandwidth_GBps"));

  v.fom = {FigureOfMerit::From::count_rate, 1e6, "Melements/s", 1e-6};
  const KernelResult r = kernel_result(v, seconds(0.25, 1, 1));
  EXPECT_DOUBLE_EQ(r.fom, 4.0);
  EXPECT_EQ(r.fom_units, "Melements/s");
}

TEST(HarnessResult, MeanTimeFiguresAreAllTheWorkOverAllTheTime) {
  Variant v;
  v.name = "stats";
  v.bytes = 6e9;  // the mean per execution
  v.fom.time = FigureOfMerit::Time::mean;
  Stats t = seconds(1, 2, 6);
  t.mean = 3;
  const KernelResult r = kernel_result(v, t);
  EXPECT_DOUBLE_EQ(r.fom, 2.0);
  EXPECT_EQ(r.fom_units, "GB/s");
  // The best and worst times belong to other amounts of work than the mean.
  EXPECT_FALSE(r.extra.contains("bandwidth_GBps"));
}

// --- the run section (karma/deck.hpp, karma/app.hpp) ---------------------------------

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

// --- partition and overflow -----------------------------------------------------------

TEST(Partition, BlocksCoverTheRangeInOrderAndDifferByOneAtMost) {
  for (std::int64_t n : {0, 1, 3, 1001, 10007}) {
    for (std::int64_t parts : {1, 2, 3, 4, 7}) {
      std::int64_t next = 0, largest = 0, smallest = n;
      for (std::int64_t p = 0; p < parts; ++p) {
        const Block b = block_of(n, parts, p);
        EXPECT_EQ(b.first, next);
        next += b.count;
        largest = std::max(largest, b.count);
        smallest = std::min(smallest, b.count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  }
  EXPECT_EQ(block_of(1001, 2, 0).count, 501);
  EXPECT_EQ(block_of(1001, 2, 1).count, 500);
  EXPECT_EQ(block_of(1001, 2, 1).first, 501);
}

TEST(Overflow, CheckedProductsRefuseWhatDoesNotFitInt64) {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(checked_product(3, 4), 12);
  EXPECT_EQ(checked_product(big, 1), big);
  EXPECT_FALSE(checked_product(big, 2));
  EXPECT_FALSE(checked_product(std::int64_t{1} << 32, std::int64_t{1} << 31));
  EXPECT_EQ(checked_product({2, 3, 4}, 5), 120);
  EXPECT_EQ(checked_product(std::vector<std::int64_t>{}), 1);
  EXPECT_FALSE(
      checked_product({std::int64_t{1} << 21, std::int64_t{1} << 21}, std::int64_t{1} << 21));
}

}  // namespace
