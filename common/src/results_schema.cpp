#include "karma/results_schema.hpp"

#include <functional>

namespace karma {

namespace {

using json = nlohmann::json;

class Checker {
 public:
  explicit Checker(std::vector<std::string>& problems) : problems_(problems) {}

  // Returns the member when it exists and has the expected kind.
  const json* member(const json& parent, const std::string& path, const std::string& key,
                     const std::function<bool(const json&)>& kind, const char* kind_name) {
    const std::string where = path.empty() ? key : path + "." + key;
    if (!parent.is_object() || !parent.contains(key)) {
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
    return member(p, path, key, [](const json& v) { return v.is_string(); }, "a string");
  }
  const json* number(const json& p, const std::string& path, const std::string& key) {
    return member(p, path, key, [](const json& v) { return v.is_number(); }, "a number");
  }
  const json* integer(const json& p, const std::string& path, const std::string& key) {
    return member(p, path, key, [](const json& v) { return v.is_number_integer(); },
                  "an integer");
  }
  const json* boolean(const json& p, const std::string& path, const std::string& key) {
    return member(p, path, key, [](const json& v) { return v.is_boolean(); }, "true or false");
  }
  const json* object(const json& p, const std::string& path, const std::string& key) {
    return member(p, path, key, [](const json& v) { return v.is_object(); }, "an object");
  }
  const json* array(const json& p, const std::string& path, const std::string& key) {
    return member(p, path, key, [](const json& v) { return v.is_array(); }, "an array");
  }
  // Checks the member's kind only where it is present.
  void optional(const json& parent, const std::string& path, const std::string& key,
                const std::function<bool(const json&)>& kind, const char* kind_name) {
    if (parent.is_object() && parent.contains(key)) member(parent, path, key, kind, kind_name);
  }
  void require(bool condition, const std::string& problem) {
    if (!condition) problems_.push_back(problem);
  }

 private:
  std::vector<std::string>& problems_;
};

}  // namespace

std::vector<std::string> validate_results(const json& doc, const ResultsExpectation& expect) {
  std::vector<std::string> problems;
  Checker c(problems);
  if (!doc.is_object()) return {"the document is not a JSON object"};

  if (const json* v = c.integer(doc, "", "schema_version"))
    c.require(*v == results_schema_version,
              "schema_version: " + v->dump() + ", this checker reads version " +
                  std::to_string(results_schema_version));
  if (const json* v = c.string(doc, "", "app"))
    c.require(!expect.app || *v == *expect.app, "app: " + v->dump() + ", expected " +
                                                   expect.app.value_or(""));
  if (const json* s = c.object(doc, "", "suite")) {
    c.string(*s, "suite", "version");
    c.string(*s, "suite", "git_describe");
    c.boolean(*s, "suite", "git_dirty");
  }
  c.string(doc, "", "date");
  if (const json* v = c.number(doc, "", "duration_s")) c.require(*v >= 0, "duration_s: negative");
  c.string(doc, "", "command_line");
  if (const json* d = c.object(doc, "", "deck")) {
    c.string(*d, "deck", "path");
    if (const json* h = c.string(*d, "deck", "sha256"))
      c.require(h->get<std::string>().size() == 64 &&
                    h->get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos,
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
    if (const json* r = c.integer(*m, "mpi", "ranks")) ranks = r->get<int>();
    c.integer(*m, "mpi", "nodes");
    c.integer(*m, "mpi", "ranks_per_node");
    c.require(ranks >= 1, "mpi.ranks: must be at least 1");
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
                    dp + ".kind: " + kind->dump() + ", expected \"gpu\" or \"host\"");
          if (*kind == "gpu") c.integer(*d, dp, "id");
        }
        // Fields a device may lack (older results, or a runtime that does not
        // answer): checked only where written.
        const auto is_string = [](const json& v) { return v.is_string(); };
        for (const char* key : {"vendor", "architecture", "target_id", "compute_capability",
                                "pci_bus_id", "uuid", "driver_version", "runtime_version"})
          c.optional(*d, dp, key, is_string, "a string");
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
    }
  }

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
        c.string((*checks)[i], cp, "name");
        c.string((*checks)[i], cp, "measure");
        c.number((*checks)[i], cp, "tolerance");
        // A NaN or infinite error is written as null.
        c.require((*checks)[i].contains("error"), cp + ".error: missing");
        if (const json* ok = c.boolean((*checks)[i], cp, "passed")) all = all && *ok;
      }
      if (p) c.require(all == passed, "verification.passed disagrees with its checks");
    }
  }
  if (const json* r = c.string(doc, "", "result")) {
    c.require(*r == (passed ? "PASSED" : "FAILED"),
              "result: " + r->dump() + " disagrees with verification.passed");
    c.require(!expect.result || *r == *expect.result,
              "result: " + r->dump() + ", expected " + expect.result.value_or(""));
  }
  return problems;
}

}  // namespace karma
