// Progress lines: when they appear, what they say, and that --quiet (or a
// disabled policy) silences them. Times are given, not measured.
#include "karma/progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace karma_test_progress {

// Everything written to a temporary FILE*, read back as a string.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string s;
    for (int c; (c = std::fgetc(file_)) != EOF;) s.push_back(static_cast<char>(c));
    return s;
  }
  int lines() {
    int n = 0;
    for (char c : text()) n += c == '\n';
    return n;
  }

 private:
  std::FILE* file_;
};

TEST(ProgressLine, SaysWhichRepetitionOfHowManyAndTimeLeft) {
  EXPECT_EQ(karma::progress_line("repetition", 37, 100, 3.7),
            "repetition 37 of 100 (37%), 3.7 s elapsed, about 6 s left");
  EXPECT_EQ(karma::progress_line("repetition", 100, 100, 10.0),
            "repetition 100 of 100 (100%), 10.0 s elapsed");
}

TEST(Progress, ShortRunPrintsNothing) {
  Capture out;
  karma::Progress p(true, "repetition", 10, karma::ProgressPolicy{}, out.file());
  for (int k = 1; k <= 10; ++k) p.step_at(k / 5.0);  // done within 2 s
  EXPECT_EQ(p.done(), 10);
  EXPECT_EQ(p.lines_printed(), 0);
  EXPECT_EQ(out.text(), "");
}

TEST(Progress, LongRunPrintsAfterTheDelayAtMostOncePerInterval) {
  Capture out;
  karma::Progress p(true, "repetition", 100, karma::ProgressPolicy{true, 3.0, 2.0}, out.file());
  for (int k = 1; k <= 100; ++k) p.step_at(k / 10.0);  // 10 s in all
  // Lines at 3.0, 5.0, 7.0, 9.0 s, then the closing one at 10 s.
  EXPECT_EQ(p.lines_printed(), 5);
  const std::string text = out.text();
  EXPECT_EQ(text.find("progress: repetition 30 of 100 (30%), 3.0 s elapsed"), 0u) << text;
  EXPECT_NE(text.find("progress: repetition 100 of 100 (100%), 10.0 s elapsed\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(out.lines(), 5);
}

TEST(Progress, StepsPastTheTotalAddNoLines) {
  Capture out;
  karma::Progress p(true, "repetition", 2, karma::ProgressPolicy{true, 0.0, 0.0}, out.file());
  for (int k = 1; k <= 5; ++k) p.step_at(k);
  EXPECT_EQ(p.lines_printed(), 2);
}

TEST(Progress, QuietOrOffPrintsNothing) {
  Capture quiet, off;
  karma::Progress q(false, "repetition", 10, karma::ProgressPolicy{true, 0.0, 0.0}, quiet.file());
  karma::Progress o(true, "repetition", 10, karma::ProgressPolicy{false, 0.0, 0.0}, off.file());
  for (int k = 1; k <= 10; ++k) {
    q.step_at(100.0 * k);
    o.step_at(100.0 * k);
  }
  EXPECT_EQ(quiet.text(), "");
  EXPECT_EQ(off.text(), "");
  EXPECT_EQ(q.done(), 10);
}

TEST(ProgressPolicy, ParsesTheEnvironmentValue) {
  EXPECT_TRUE(karma::parse_progress_policy(nullptr)->enabled);
  EXPECT_DOUBLE_EQ(karma::parse_progress_policy(nullptr)->delay_s, 3.0);
  EXPECT_FALSE(karma::parse_progress_policy("off")->enabled);
  const auto p = karma::parse_progress_policy("0.5,0.25");
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->delay_s, 0.5);
  EXPECT_DOUBLE_EQ(p->interval_s, 0.25);
  EXPECT_DOUBLE_EQ(karma::parse_progress_policy("7")->delay_s, 7.0);
  EXPECT_FALSE(karma::parse_progress_policy("soon"));
  EXPECT_FALSE(karma::parse_progress_policy("1,"));
  EXPECT_FALSE(karma::parse_progress_policy("-1"));
}

}  // namespace karma_test_progress
