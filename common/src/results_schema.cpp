#include "karma/results_schema.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>

namespace karma {

namespace {

using json = nlohmann::json;

// A value for a message; invalid UTF-8 (possible in a document built in
// memory) is replaced rather than thrown.
std::string text_of(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// `digits` decimal digits at text[at...], or -1.
int digits_at(const std::string& text, std::size_t at, std::size_t digits) {
  if (at + digits > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

class Checker {
 public:
  explicit Checker(std::vector<std::string>& problems) : problems_(problems) {}

  // Returns the member when it exists and has the expected kind.
  const json* member(const json& parent, const std::string& path, const std::string& key,
                     const std::function<bool(const json&)>& kind, const char* kind_name) {
    const std::string where = path.empty() ? key : path + "." + key;
    if (!parent.is_object()) {
      // Once per parent, not once per key looked up in it.
      if (non_objects_.insert(path).second)
        problems_.push_back(path + ": expected an object, got " + parent.type_name());
      return nullptr;
    }
    if (!parent.contains(key)) {
      problems_.push_back(where + ": missing");
      return nullptr;
    }
    const json& v = parent.at(key);
    if (!kind(v)) {
      problems_.push_back(where + ": expected " + kind_name + ", got " + v.type_name());
      return nullptr;
    }
    return &v;
  }
  const json* string(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_string(); }, "a string");
  }
  const json* number(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_number(); }, "a number");
  }
  const json* integer(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_number_integer(); }, "an integer");
  }
  const json* boolean(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_boolean(); }, "true or false");
  }
  const json* object(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_object(); }, "an object");
  }
  const json* array(const json& p, const std::string& path, const std::string& key) {
    return member(
        p, path, key, [](const json& v) { return v.is_array(); }, "an array");
  }
  // Checks the member's kind only where it is present.
  void optional(const json& parent, const std::string& path, const std::string& key,
                const std::function<bool(const json&)>& kind, const char* kind_name) {
    if (parent.is_object() && parent.contains(key)) member(parent, path, key, kind, kind_name);
  }
  void require(bool condition, const std::string& problem) {
    if (!condition) problems_.push_back(problem);
  }
  // An integer in [lo, hi]; a huge one would wrap if read as an int.
  std::optional<std::int64_t> integer_in(const json& p, const std::string& path,
                                         const std::string& key, std::int64_t lo, std::int64_t hi) {
    const json* v = integer(p, path, key);
    if (!v) return std::nullopt;
    const std::string where = path.empty() ? key : path + "." + key;
    const bool fits = v->is_number_unsigned()
                          ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
                          : v->get<std::int64_t>() <= hi;
    if (!fits || (!v->is_number_unsigned() && v->get<std::int64_t>() < lo)) {
      problems_.push_back(where + ": " + text_of(*v) + " is not in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
      return std::nullopt;
    }
    return v->get<std::int64_t>();
  }

 private:
  std::vector<std::string>& problems_;
  std::set<std::string> non_objects_;
};

bool is_string(const json& v) { return v.is_string(); }
bool is_number(const json& v) { return v.is_number(); }

// A number above zero, where a zero would have given no figure.
void positive(Checker& c, const json& p, const std::string& path, const std::string& key) {
  if (const json* v = c.number(p, path, key))
    c.require(*v > 0, path + "." + key + ": not positive");
}

// The member is one of `values`.
const json* one_of(Checker& c, const json& p, const std::string& path, const std::string& key,
                   const std::vector<std::string>& values) {
  const json* v = c.string(p, path, key);
  if (!v) return nullptr;
  std::string known;
  for (const auto& value : values) {
    if (*v == value) return v;
    known += (known.empty() ? "\"" : ", \"") + value + "\"";
  }
  c.require(false, path + "." + key + ": " + text_of(*v) + ", expected " + known);
  return nullptr;
}

// kernels[].energy: the figures where measured, the reason where not.
void check_kernel_energy(Checker& c, const json& e, const std::string& p) {
  c.optional(e, p, "reason", is_string, "a string");
  const json* status = one_of(c, e, p, "status", {"measured", "unavailable", "off"});
  if (!status) return;
  if (*status == "measured") {
    c.string(e, p, "source");
    c.integer_in(e, p, "counters", 1, INT32_MAX);
    c.integer_in(e, p, "executions", 1, INT64_MAX);
    positive(c, e, p, "window_s");
    // Rank 0's start and end of the window, to line it up with other tools' samples.
    c.optional(
        e, p, "window_unix_s",
        [](const json& v) {
          return v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number() &&
                 v[0] <= v[1];
        },
        "[start, end], two numbers");
    positive(c, e, p, "counter_step_s");
    positive(c, e, p, "average_power_W");
    positive(c, e, p, "joules_per_execution");
    if (const json* f = c.object(e, p, "fom_per_watt")) {
      positive(c, *f, p + ".fom_per_watt", "value");
      c.string(*f, p + ".fom_per_watt", "units");
    }
  } else if (*status == "unavailable") {
    c.string(e, p, "reason");
    c.optional(e, p, "window_s", is_number, "a number");
    c.optional(
        e, p, "executions", [](const json& v) { return v.is_number_integer(); }, "an integer");
  }
}

// kernels[].efficiency: per peak, the peak and the fraction of it reached, or
// why the peak is unknown.
void check_efficiency(Checker& c, const json& e, const std::string& p) {
  const char* peaks[][3] = {{"peak_bandwidth_GBps", "fraction_of_peak_bandwidth", "peak_bandwidth"},
                            {"peak_GFLOPs", "fraction_of_peak_flops", "peak_flops"}};
  for (const auto& [peak, fraction, reason] : peaks) {
    if (e.contains(peak) || e.contains(fraction)) {
      positive(c, e, p, peak);
      c.number(e, p, fraction);
      c.require(!e.contains(reason), p + "." + reason + ": beside " + peak);
    } else {
      c.optional(e, p, reason, is_string, "a string");
    }
  }
}

// The top-level energy section: the window, and each rank's counter.
void check_run_energy(Checker& c, const json& e, int ranks) {
  positive(c, e, "energy", "window_s");
  const json* rs = c.array(e, "energy", "ranks");
  if (!rs) return;
  c.require(static_cast<int>(rs->size()) == ranks, "energy.ranks: " + std::to_string(rs->size()) +
                                                       " entries for " + std::to_string(ranks) +
                                                       " ranks");
  for (std::size_t i = 0; i < rs->size(); ++i) {
    const json& r = (*rs)[i];
    const std::string p = "energy.ranks[" + std::to_string(i) + "]";
    const json* status = one_of(c, r, p, "status", {"measured", "unavailable"});
    // A rank whose counter failed mid-run still names it: required only
    // where measured.
    const bool measured = status && *status == "measured";
    const auto field = [&](const char* key, bool (*kind)(const json&), const char* kind_name) {
      if (measured)
        c.member(r, p, key, kind, kind_name);
      else
        c.optional(r, p, key, kind, kind_name);
    };
    c.optional(r, p, "reason", is_string, "a string");
    field("source", is_string, "a string");
    field("counter", is_string, "a string");
    field(
        "counted", [](const json& v) { return v.is_boolean(); }, "true or false");
    field("counter_step_s", is_number, "a number");
    field("idle_power_W", is_number, "a number");
    c.optional(r, p, "power_limit_W", is_number, "a number");
    for (const char* key : {"clocks_start_MHz", "clocks_end_MHz"})
      c.optional(
          r, p, key, [](const json& v) { return v.is_object(); }, "an object");
  }
}

}  // namespace

const std::vector<std::string>& suite_apps() {
  static const std::vector<std::string> apps = {"stream", "hexgrad", "matvec", "mgs", "contact"};
  return apps;
}

bool is_utc_date_time(const std::string& text) {
  // YYYY-MM-DDTHH:MM:SS, optional fraction, then Z or +00:00.
  const int year = digits_at(text, 0, 4), month = digits_at(text, 5, 2),
            day = digits_at(text, 8, 2), hour = digits_at(text, 11, 2),
            minute = digits_at(text, 14, 2), second = digits_at(text, 17, 2);
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':')
    return false;
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0)
    return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > days[month - 1]) return false;
  // A leap second is the last second of a UTC day.
  if (second > 60 || (second == 60 && (hour != 23 || minute != 59))) return false;
  std::size_t at = 19;
  if (text[at] == '.') {
    const std::size_t start = ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == start) return false;
  }
  const std::string zone = text.substr(at);
  return zone == "Z" || zone == "+00:00";
}

std::vector<std::string> validate_results(const json& doc, const ResultsExpectation& expect) {
  std::vector<std::string> problems;
  Checker c(problems);
  if (!doc.is_object()) return {"the document is not a JSON object"};

  // A missing or unknown version is one problem; the kernels are then
  // checked against the fields every version has.
  int version = results_schema_oldest_version;
  if (const json* v = c.integer(doc, "", "schema_version")) {
    const bool known = *v >= results_schema_oldest_version && *v <= results_schema_version;
    c.require(known, "schema_version: " + v->dump() + ", this checker reads versions " +
                         std::to_string(results_schema_oldest_version) + " to " +
                         std::to_string(results_schema_version));
    if (known) version = v->get<int>();
  }
  if (const json* v = c.string(doc, "", "app")) {
    const auto& apps = suite_apps();
    if (std::find(apps.begin(), apps.end(), v->get<std::string>()) == apps.end()) {
      std::string known;
      for (const auto& a : apps) known += (known.empty() ? "" : ", ") + a;
      c.require(false, "app: " + text_of(*v) + " is not a mini-app of the suite (" + known + ")");
    }
    c.require(!expect.app || *v == *expect.app,
              "app: " + text_of(*v) + ", expected " + expect.app.value_or(""));
  }
  if (const json* s = c.object(doc, "", "suite")) {
    c.string(*s, "suite", "version");
    c.string(*s, "suite", "git_describe");
    c.boolean(*s, "suite", "git_dirty");
  }
  if (const json* v = c.string(doc, "", "date"))
    c.require(is_utc_date_time(v->get<std::string>()),
              "date: " + text_of(*v) + " is not an ISO 8601 UTC date-time (YYYY-MM-DDTHH:MM:SSZ)");
  if (const json* v = c.number(doc, "", "duration_s")) c.require(*v >= 0, "duration_s: negative");
  c.string(doc, "", "command_line");
  if (const json* d = c.object(doc, "", "deck")) {
    c.string(*d, "deck", "path");
    if (const json* h = c.string(*d, "deck", "sha256"))
      c.require(h->get<std::string>().size() == 64 && h->get<std::string>().find_first_not_of(
                                                          "0123456789abcdef") == std::string::npos,
                "deck.sha256: not 64 lower-case hex digits");
    c.array(*d, "deck", "overrides");
    c.object(*d, "deck", "resolved");
  }
  c.require(doc.contains("job") && (doc["job"].is_null() || doc["job"].is_object()),
            "job: expected null or an object");
  if (const json* h = c.array(doc, "", "hosts")) c.require(!h->empty(), "hosts: empty");

  int ranks = 0;
  if (const json* m = c.object(doc, "", "mpi")) {
    c.boolean(*m, "mpi", "enabled");
    c.string(*m, "mpi", "library_version");
    // Upper bounds keep counts in an int; no run comes near them.
    if (const auto r = c.integer_in(*m, "mpi", "ranks", 1, INT32_MAX)) ranks = static_cast<int>(*r);
    c.integer_in(*m, "mpi", "nodes", 1, INT32_MAX);
    c.integer_in(*m, "mpi", "ranks_per_node", 1, INT32_MAX);
    c.require(!expect.ranks || ranks == *expect.ranks,
              "mpi.ranks: " + std::to_string(ranks) + ", expected " +
                  std::to_string(expect.ranks.value_or(0)));
  }
  if (const json* rs = c.array(doc, "", "ranks")) {
    c.require(static_cast<int>(rs->size()) == ranks, "ranks: " + std::to_string(rs->size()) +
                                                         " entries for " + std::to_string(ranks) +
                                                         " ranks");
    for (std::size_t i = 0; i < rs->size(); ++i) {
      const std::string p = "ranks[" + std::to_string(i) + "]";
      if (const json* r = c.integer((*rs)[i], p, "rank"))
        c.require(*r == static_cast<int>(i), p + ".rank: out of order");
      c.string((*rs)[i], p, "host");
      if (const json* d = c.object((*rs)[i], p, "device")) {
        const std::string dp = p + ".device";
        c.string(*d, dp, "name");
        c.string(*d, dp, "execution_space");
        if (const json* kind = c.string(*d, dp, "kind")) {
          c.require(*kind == "gpu" || *kind == "host",
                    dp + ".kind: " + text_of(*kind) + ", expected \"gpu\" or \"host\"");
          if (*kind == "gpu") c.integer(*d, dp, "id");
        }
        // Fields a device may lack (older results, or a runtime that does not
        // answer): checked only where written.
        for (const char* key :
             {"vendor", "architecture", "target_id", "compute_capability", "pci_bus_id", "uuid",
              "driver_version", "driver_api_version", "runtime_version",
              "peak_memory_bandwidth_from", "peak_GFLOPs_from"})
          c.optional(*d, dp, key, is_string, "a string");
        c.optional(*d, dp, "peak_memory_bandwidth_GBps", is_number, "a number");
        if (d->contains("peak_GFLOPs"))
          if (const json* g = c.object(*d, dp, "peak_GFLOPs"))
            for (const char* key : {"double", "float"})
              c.optional(*g, dp + ".peak_GFLOPs", key, is_number, "a number");
        const auto is_count = [](const json& v) { return v.is_number_integer() && v >= 0; };
        for (const char* key :
             {"memory_bytes", "free_memory_bytes", "visible_devices", "multiprocessors",
              "l2_cache_bytes", "warp_size", "hardware_threads"})
          c.optional(*d, dp, key, is_count, "a non-negative integer");
      }
    }
  }
  if (const json* k = c.object(doc, "", "kokkos")) {
    c.string(*k, "kokkos", "version");
    c.string(*k, "kokkos", "default_execution_space");
    if (const json* b = c.array(*k, "kokkos", "backends"))
      c.require(!b->empty(), "kokkos.backends: empty");
  }
  if (const json* b = c.object(doc, "", "build")) {
    c.string(*b, "build", "type");
    c.string(*b, "build", "compiler");
    c.string(*b, "build", "cxx_flags");
  }
  c.object(doc, "", "problem");

  if (const json* ks = c.array(doc, "", "kernels")) {
    c.require(!ks->empty(), "kernels: empty");
    for (std::size_t i = 0; i < ks->size(); ++i) {
      const json& k = (*ks)[i];
      const std::string p = "kernels[" + std::to_string(i) + "]";
      c.string(k, p, "name");
      if (version >= 2)
        for (const char* key : {"implementation", "variant"})
          if (const json* v = c.string(k, p, key))
            c.require(!v->get<std::string>().empty(), p + "." + key + ": empty");
      if (const json* v = c.number(k, p, "bytes")) c.require(*v >= 0, p + ".bytes: negative");
      if (const json* v = c.number(k, p, "flops")) c.require(*v >= 0, p + ".flops: negative");
      if (const json* t = c.object(k, p, "time_s")) {
        const std::string tp = p + ".time_s";
        const json* n = c.integer(*t, tp, "count");
        const json* lo = c.number(*t, tp, "min");
        const json* med = c.number(*t, tp, "median");
        c.number(*t, tp, "mean");
        const json* hi = c.number(*t, tp, "max");
        c.number(*t, tp, "stddev");
        if (n) c.require(*n >= 1, tp + ".count: no repetitions");
        if (lo && med && hi)
          c.require(*lo > 0 && *lo <= *med && *med <= *hi, tp + ": not 0 < min <= median <= max");
      }
      if (const json* f = c.object(k, p, "fom")) {
        if (const json* v = c.number(*f, p + ".fom", "value"))
          c.require(*v > 0, p + ".fom.value: not positive");
        c.string(*f, p + ".fom", "units");
        c.boolean(*f, p + ".fom", "higher_is_better");
      }
      // Optional: results from before them, and kernels outside the harness
      // (contact's), have neither.
      if (k.is_object() && k.contains("energy"))
        if (const json* e = c.object(k, p, "energy")) check_kernel_energy(c, *e, p + ".energy");
      if (k.is_object() && k.contains("efficiency"))
        if (const json* e = c.object(k, p, "efficiency"))
          check_efficiency(c, *e, p + ".efficiency");
    }
  }
  if (doc.contains("energy"))
    if (const json* e = c.object(doc, "", "energy")) check_run_energy(c, *e, ranks);

  bool passed = false;
  if (const json* v = c.object(doc, "", "verification")) {
    const json* p = c.boolean(*v, "verification", "passed");
    const json* checks = c.array(*v, "verification", "checks");
    if (p) passed = p->get<bool>();
    if (checks) {
      c.require(!checks->empty(), "verification.checks: empty: nothing was verified");
      bool all = !checks->empty();
      for (std::size_t i = 0; i < checks->size(); ++i) {
        const std::string cp = "verification.checks[" + std::to_string(i) + "]";
        const json& check = (*checks)[i];
        c.string(check, cp, "name");
        c.string(check, cp, "measure");
        const json* tolerance = c.number(check, cp, "tolerance");
        // A NaN or infinite error is written as null, and never passes.
        const json* error = c.member(
            check, cp, "error", [](const json& v) { return v.is_number() || v.is_null(); },
            "a number or null");
        const json* ok = c.boolean(check, cp, "passed");
        if (ok) all = all && ok->get<bool>();
        if (ok && error && tolerance) {
          const bool within =
              error->is_number() && error->get<double>() <= tolerance->get<double>();
          const std::string why = error->is_null()
                                      ? "error is null (NaN or infinite)"
                                      : "error " + text_of(*error) + (within ? " <= " : " > ") +
                                            "tolerance " + text_of(*tolerance);
          c.require(ok->get<bool>() == within, cp + ".passed: " + text_of(*ok) + ", but " + why);
        }
      }
      if (p) c.require(all == passed, "verification.passed disagrees with its checks");
    }
  }
  if (const json* r = c.string(doc, "", "result")) {
    c.require(*r == (passed ? "PASSED" : "FAILED"),
              "result: " + text_of(*r) + " disagrees with verification.passed");
    c.require(!expect.result || *r == *expect.result,
              "result: " + text_of(*r) + ", expected " + expect.result.value_or(""));
  }
  return problems;
}

}  // namespace karma
