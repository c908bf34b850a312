// Statistics of repetitions (summarize) and the fenced kernel timer.
#include "karma/timing.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace karma_test_stats {

TEST(Summarize, OddCountTakesMiddleElement) {
  const karma::Stats s = karma::summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.stddev, 2.0);  // sqrt((4 + 0 + 4) / 2)
}

TEST(Summarize, EvenCountAveragesTheTwoMiddleElements) {
  const karma::Stats s = karma::summarize({10.0, 1.0, 4.0, 2.0});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);  // (2 + 4) / 2, not 2 or 4
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.mean, 4.25);
}

TEST(Summarize, SampleStandardDeviationUsesNMinusOne) {
  const karma::Stats s = karma::summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  // sqrt(32 / 7); the population value would be exactly 2.
  EXPECT_NEAR(s.stddev, 2.138089935299395, 1e-12);
}

TEST(Summarize, SingleSampleHasZeroSpread) {
  const karma::Stats s = karma::summarize({0.25});
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.min, 0.25);
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.mean, 0.25);
  EXPECT_DOUBLE_EQ(s.max, 0.25);
  EXPECT_EQ(s.stddev, 0.0);
}

TEST(Summarize, EmptyGivesZeroCount) {
  const karma::Stats s = karma::summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.stddev, 0.0);
}

TEST(Summarize, IndependentOfSampleOrder) {
  std::vector<double> samples;
  for (int i = 1; i <= 101; ++i) samples.push_back(0.001 * i * i);
  const karma::Stats sorted = karma::summarize(samples);
  EXPECT_DOUBLE_EQ(sorted.median, 0.001 * 51 * 51);
  std::mt19937 rng(12345);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(samples.begin(), samples.end(), rng);
    const karma::Stats s = karma::summarize(samples);
    EXPECT_EQ(s.count, sorted.count);
    EXPECT_DOUBLE_EQ(s.min, sorted.min);
    EXPECT_DOUBLE_EQ(s.max, sorted.max);
    EXPECT_DOUBLE_EQ(s.median, sorted.median);
    EXPECT_NEAR(s.mean, sorted.mean, 1e-12);
    EXPECT_NEAR(s.stddev, sorted.stddev, 1e-12);
  }
  // Reversed input, even count.
  std::vector<double> descending = {9, 7, 5, 5, 4, 4, 4, 2};
  EXPECT_DOUBLE_EQ(karma::summarize(descending).median, 4.5);
}

TEST(KernelTimer, RecordsOneSamplePerCallUnderItsName) {
  karma::KernelTimer timer;
  int calls_a = 0, calls_b = 0;
  for (int i = 0; i < 3; ++i) timer.time("a", [&] { ++calls_a; });
  timer.time("b", [&] { ++calls_b; });
  EXPECT_EQ(calls_a, 3);
  EXPECT_EQ(calls_b, 1);
  ASSERT_EQ(timer.samples("a").size(), 3u);
  ASSERT_EQ(timer.samples("b").size(), 1u);
  for (double t : timer.samples("a")) EXPECT_GT(t, 0.0);
  EXPECT_GT(timer.samples("b")[0], 0.0);
  EXPECT_THROW(timer.samples("never timed"), std::out_of_range);
}

// A call that ends with the device idle is timed without the closing fence;
// every other call gets one.
int fences = 0;
void counted_fence() {
  ++fences;
  Kokkos::fence();
}

TEST(KernelTimer, ClosingFenceOnlyWhereWorkMayStillRun) {
  karma::KernelTimer timer(counted_fence);
  fences = 0;
  timer.time("a", [] {});
  EXPECT_EQ(fences, 2);  // opening and closing
  fences = 0;
  timer.time(
      "b", [] {}, karma::KernelTimer::Ends::idle);
  EXPECT_EQ(fences, 1);  // opening only
  EXPECT_EQ(timer.samples("a").size(), 1u);
  EXPECT_EQ(timer.samples("b").size(), 1u);
}

// A kernel launched from a free function (not a lambda or a test body), so
// KOKKOS_LAMBDA also compiles as a CUDA extended lambda.
void fill_ramp(const Kokkos::View<double*>& v) {
  const int n = static_cast<int>(v.extent(0));
  Kokkos::parallel_for(
      "fill_ramp", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, n),
      KOKKOS_LAMBDA(const int j) { v(j) = 1.0 * j; });
}

TEST(KernelTimer, FinishSummarizesEveryName) {
  karma::KernelTimer timer;
  Kokkos::View<double*> v("v", 1000);
  for (int i = 0; i < 4; ++i) timer.time("fill", [&] { fill_ramp(v); });
  timer.time("other", [] {});
  const auto stats = timer.finish();
  ASSERT_EQ(stats.size(), 2u);
  ASSERT_EQ(stats.count("fill"), 1u);
  const karma::Stats& fill = stats.at("fill");
  EXPECT_EQ(fill.count, 4u);
  EXPECT_GT(fill.min, 0.0);
  EXPECT_LE(fill.min, fill.median);
  EXPECT_LE(fill.median, fill.max);
  // Without MPI (or on one rank) the reduction over ranks changes nothing.
  const auto& raw = timer.samples("fill");
  EXPECT_DOUBLE_EQ(fill.min, *std::min_element(raw.begin(), raw.end()));
  EXPECT_DOUBLE_EQ(fill.max, *std::max_element(raw.begin(), raw.end()));
  EXPECT_EQ(stats.at("other").count, 1u);
}

TEST(KernelTimer, SleepingKernelMeasuresAtLeastItsSleep) {
  karma::KernelTimer timer;
  timer.time("sleep", [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  ASSERT_EQ(timer.samples("sleep").size(), 1u);
  EXPECT_GE(timer.samples("sleep")[0], 0.002);  // a lower bound only
}

}  // namespace karma_test_stats
