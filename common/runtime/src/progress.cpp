#include "karma/progress.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace karma {

std::optional<ProgressPolicy> parse_progress_policy(const char* text) {
  ProgressPolicy policy;
  if (text == nullptr || *text == '\0') return policy;
  const std::string value(text);
  if (value == "off") {
    policy.enabled = false;
    return policy;
  }
  auto number = [](const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(out) && out >= 0;
  };
  const auto comma = value.find(',');
  if (!number(value.substr(0, comma), policy.delay_s)) return std::nullopt;
  if (comma != std::string::npos && !number(value.substr(comma + 1), policy.interval_s))
    return std::nullopt;
  return policy;
}

std::string progress_line(const std::string& what, std::int64_t done, std::int64_t total,
                          double elapsed_s) {
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(1);
  line << what << ' ' << done << " of " << total;
  if (total > 0) line << " (" << (100 * done) / total << "%)";
  line << ", " << elapsed_s << " s elapsed";
  if (done > 0 && done < total) {
    // Assumes the remaining units cost what the finished ones did.
    const double left = elapsed_s * static_cast<double>(total - done) / static_cast<double>(done);
    line.precision(0);
    if (left < 0.5)
      line << ", under 1 s left";
    else
      line << ", about " << left << " s left";
  }
  return line.str();
}

ProgressPolicy progress_policy_from_environment() {
  const char* text = std::getenv("KARMA_PROGRESS");
  if (const auto policy = parse_progress_policy(text)) return *policy;
  std::fprintf(stderr,
               "warning: KARMA_PROGRESS='%s' is not 'off' or DELAY[,INTERVAL] in seconds; "
               "using the defaults\n",
               text);
  return ProgressPolicy{};
}

Progress::Progress(bool enabled, std::string what, std::int64_t total, ProgressPolicy policy,
                   std::FILE* out)
    : what_(std::move(what)),
      total_(total),
      policy_(policy),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  policy_.enabled = policy_.enabled && enabled && out_ != nullptr;
}

void Progress::step(std::int64_t n) {
  if (!policy_.enabled) {
    done_ += n;
    return;
  }
  step_at(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(), n);
}

void Progress::step_at(double elapsed_s, std::int64_t n) {
  done_ += n;
  if (!policy_.enabled || closed_) return;
  const bool finished = done_ >= total_;
  // The last unit closes an announced run with its total time; a run that
  // never became long enough to announce stays silent to the end.
  const bool due = elapsed_s >= policy_.delay_s &&
                   (lines_ == 0 || elapsed_s - last_print_s_ >= policy_.interval_s);
  if (!(due || (finished && lines_ > 0))) return;
  std::fprintf(out_, "progress: %s\n", progress_line(what_, done_, total_, elapsed_s).c_str());
  std::fflush(out_);
  last_print_s_ = elapsed_s;
  ++lines_;
  closed_ = finished;
}

}  // namespace karma
