// Progress of a long run, for someone watching a batch job's log:
//
//   karma::Progress progress(ctx, "repetition", total);
//   for (...) { ...; progress.step(); }
//
// Rank 0 only, silent under --quiet. Nothing is printed for a run that ends
// within a few seconds; after that one line ("repetition 37 of 102 (36%),
// 4.1 s elapsed, about 7 s left") at most every ~2 s, on stderr so that
// stdout keeps only the table and the FOM/RESULT lines harvesters parse.
// KARMA_PROGRESS=off silences it; KARMA_PROGRESS=DELAY[,INTERVAL] (seconds)
// changes when it starts and how often it prints.
#pragma once

#include "karma/app.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace karma {

struct ProgressPolicy {
  bool enabled = true;
  double delay_s = 3.0;     // no line before the loop has run this long
  double interval_s = 2.0;  // then at most one line per interval
};

// The defaults, changed by KARMA_PROGRESS (see above). A malformed value
// gives std::nullopt, so the caller can say so instead of guessing.
std::optional<ProgressPolicy> parse_progress_policy(const char* text);
// parse_progress_policy(getenv("KARMA_PROGRESS")), warning on stderr about a
// malformed value and using the defaults then.
ProgressPolicy progress_policy_from_environment();

// "repetition 37 of 102 (36%), 4.1 s elapsed, about 7 s left"
std::string progress_line(const std::string& what, std::int64_t done, std::int64_t total,
                          double elapsed_s);

class Progress {
 public:
  // Prints only on rank 0 of a run that is not --quiet (Context::verbose).
  Progress(const Context& ctx, std::string what, std::int64_t total)
      : Progress(ctx.verbose(), std::move(what), total,
                 ctx.verbose() ? progress_policy_from_environment() : ProgressPolicy{}, stderr) {}
  // The same with everything explicit (tests, tools).
  Progress(bool enabled, std::string what, std::int64_t total, ProgressPolicy policy,
           std::FILE* out);

  // Counts n finished units and prints if a line is due. Call it between
  // timed regions: it reads the clock, and sometimes writes a line.
  void step(std::int64_t n = 1);
  // step() at a given elapsed time (seconds since construction).
  void step_at(double elapsed_s, std::int64_t n = 1);

  std::int64_t done() const { return done_; }
  int lines_printed() const { return lines_; }

 private:
  std::string what_;
  std::int64_t total_;
  ProgressPolicy policy_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::int64_t done_ = 0;
  double last_print_s_ = 0;
  int lines_ = 0;
  bool closed_ = false;  // the closing line (done == total) is out
};

}  // namespace karma
