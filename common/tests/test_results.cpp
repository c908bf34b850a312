// The results document's checker, the atomic writer, the command line and
// the small helpers of app.hpp.
#include "karma/app.hpp"
#include "karma/error.hpp"
#include "karma/results_schema.hpp"

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

// This executable's fsync stands in for the C library's (the core is linked
// into it statically), so the tests see what the writer syncs, and when, and
// can make it fail; otherwise it syncs through fdatasync, which it does not
// replace.
namespace karma_test_fsync {
struct Call {
  std::string path;    // what the descriptor named
  bool target_exists;  // whether the file being written existed by then
};
bool recording = false;
int fail_with = 0;  // an errno to fail with, or 0
std::string target;
std::vector<Call> calls;
}  // namespace karma_test_fsync

extern "C" int fsync(int fd) {
  namespace spy = karma_test_fsync;
  if (spy::recording) {
    char path[PATH_MAX] = {};
    const ssize_t n =
        readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), path, sizeof(path) - 1);
    spy::calls.push_back(
        {n > 0 ? std::string(path, n) : "?", access(spy::target.c_str(), F_OK) == 0});
    if (spy::fail_with) {
      errno = spy::fail_with;
      return -1;
    }
  }
  return fdatasync(fd);
}

namespace karma_test_results {

namespace fs = std::filesystem;
using nlohmann::json;

// A conforming document with the fields app.cpp's results_json writes: two
// ranks on one node, two kernels, two passing checks.
json valid_document() {
  json doc;
  doc["schema_version"] = 2;
  doc["app"] = "stream";
  doc["suite"] = {{"name", "karma"},
                  {"version", "0.1.0"},
                  {"git_describe", "v0.1.0-3-gabcdef0"},
                  {"git_dirty", false}};
  doc["date"] = "2024-05-01T12:00:00Z";
  doc["duration_s"] = 1.25;
  doc["command_line"] = "karma-stream small.yaml --set run.repetitions=3";
  doc["deck"] = {{"path", "small.yaml"},
                 {"sha256", std::string(64, 'a')},
                 {"overrides", json::array({"run.repetitions=3"})},
                 {"resolved", {{"run", {{"repetitions", 3}}}}}};
  doc["job"] = nullptr;
  doc["hosts"] = json::array({"node1"});
  doc["mpi"] = {{"enabled", true},
                {"library_version", "Open MPI v4.1"},
                {"ranks", 2},
                {"nodes", 1},
                {"ranks_per_node", 2}};
  auto ranks = json::array();
  for (int r = 0; r < 2; ++r)
    ranks.push_back(
        {{"rank", r},
         {"host", "node1"},
         {"local_rank", r},
         {"local_size", 2},
         {"device", {{"kind", "host"}, {"name", "cpu"}, {"execution_space", "OpenMP"}}}});
  doc["ranks"] = ranks;
  doc["kokkos"] = {{"version", "3.4.1"},
                   {"default_execution_space", "OpenMP"},
                   {"default_host_execution_space", "OpenMP"},
                   {"backends", json::array({"OpenMP", "Serial"})}};
  doc["build"] = {
      {"type", "Release"}, {"compiler", "GNU 12.2.0"}, {"cxx_flags", "-O3"}, {"cuda_flags", ""}};
  doc["problem"] = {{"shape", json::array({1024})}};
  auto kernels = json::array();
  for (const char* name : {"copy", "triad"})
    kernels.push_back({{"name", name},
                       {"implementation", "kokkos"},
                       {"variant", name},
                       {"bytes", 16384.0},
                       {"flops", 0.0},
                       {"time_s",
                        {{"count", 3},
                         {"min", 1e-5},
                         {"median", 2e-5},
                         {"mean", 2e-5},
                         {"max", 3e-5},
                         {"stddev", 1e-5}}},
                       {"fom",
                        {{"value", 1.6384},
                         {"units", "GB/s"},
                         {"higher_is_better", true},
                         {"from", "minimum time"}}}});
  doc["kernels"] = kernels;
  auto checks = json::array();
  for (const char* name : {"a", "dot"})
    checks.push_back({{"name", name},
                      {"measure", "max relative error"},
                      {"error", 1e-16},
                      {"tolerance", 1e-14},
                      {"passed", true}});
  doc["verification"] = {{"passed", true}, {"checks", checks}};
  doc["result"] = "PASSED";
  return doc;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

// Some problem line starts with `field`.
::testing::AssertionResult has_problem(const std::vector<std::string>& problems,
                                       const std::string& field) {
  for (const auto& p : problems)
    if (p.rfind(field, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no problem starting with '" << field << "' in:\n"
                                       << joined(problems);
}

TEST(ValidateResults, ValidDocumentHasNoProblems) {
  const auto problems = karma::validate_results(valid_document());
  EXPECT_TRUE(problems.empty()) << joined(problems);
  karma::ResultsExpectation expect;
  expect.app = "stream";
  expect.ranks = 2;
  expect.result = "PASSED";
  EXPECT_TRUE(karma::validate_results(valid_document(), expect).empty());
}

TEST(ValidateResults, AFailedRunIsStillAValidDocument) {
  json doc = valid_document();
  doc["verification"]["checks"][1]["passed"] = false;
  doc["verification"]["checks"][1]["error"] = nullptr;  // how NaN is written
  doc["verification"]["passed"] = false;
  doc["result"] = "FAILED";
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  karma::ResultsExpectation expect;
  expect.result = "FAILED";
  EXPECT_TRUE(karma::validate_results(doc, expect).empty());
}

TEST(ValidateResults, NotAnObject) {
  EXPECT_EQ(karma::validate_results(json::array()),
            std::vector<std::string>{"the document is not a JSON object"});
  EXPECT_FALSE(karma::validate_results(json("text")).empty());
}

TEST(ValidateResults, MissingSchemaVersion) {
  json doc = valid_document();
  doc.erase("schema_version");
  const auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, std::vector<std::string>{"schema_version: missing"});
}

TEST(ValidateResults, WrongSchemaVersion) {
  json doc = valid_document();
  doc["schema_version"] = 3;
  auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "schema_version: 3"));
  doc["schema_version"] = 0;
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "schema_version: 0"));
  doc["schema_version"] = "1";
  problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "schema_version: expected an integer, got string"));
}

TEST(ValidateResults, VersionTwoNamesEachKernelsImplementationAndVariant) {
  json doc = valid_document();
  doc["kernels"][0].erase("implementation");
  doc["kernels"][1]["variant"] = "";
  const auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 2u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "kernels[0].implementation: missing"));
  EXPECT_TRUE(has_problem(problems, "kernels[1].variant: empty"));
}

TEST(ValidateResults, VersionOneHadNoImplementationOrVariant) {
  json doc = valid_document();
  doc["schema_version"] = 1;
  for (auto& k : doc["kernels"]) {
    k.erase("implementation");
    k.erase("variant");
  }
  EXPECT_TRUE(karma::validate_results(doc).empty()) << joined(karma::validate_results(doc));
}

TEST(ValidateResults, KernelsEmpty) {
  json doc = valid_document();
  doc["kernels"] = json::array();
  const auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, std::vector<std::string>{"kernels: empty"});
}

TEST(ValidateResults, FomValueNotPositive) {
  json doc = valid_document();
  doc["kernels"][1]["fom"]["value"] = 0;
  auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, std::vector<std::string>{"kernels[1].fom.value: not positive"});
  doc["kernels"][1]["fom"]["value"] = -3.0;
  problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "kernels[1].fom.value"));
}

TEST(ValidateResults, TimeMinAboveMedian) {
  json doc = valid_document();
  doc["kernels"][0]["time_s"]["min"] = 2.5e-5;
  const auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "kernels[0].time_s"));
  EXPECT_EQ(problems[0].find("kernels[1]"), std::string::npos);
}

TEST(ValidateResults, TimeZeroOrNoRepetitions) {
  json doc = valid_document();
  doc["kernels"][0]["time_s"]["min"] = 0.0;
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "kernels[0].time_s"));
  doc = valid_document();
  doc["kernels"][0]["time_s"]["count"] = 0;
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "kernels[0].time_s.count"));
  doc = valid_document();
  doc["kernels"][0]["time_s"].erase("stddev");
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{"kernels[0].time_s.stddev: missing"});
}

TEST(ValidateResults, PassedDisagreesWithAFailedCheck) {
  json doc = valid_document();
  doc["verification"]["checks"][0]["error"] = 1e-10;  // above its tolerance: a failed check
  doc["verification"]["checks"][0]["passed"] = false;
  const auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, std::vector<std::string>{"verification.passed disagrees with its checks"});
}

TEST(ValidateResults, ResultPassedWhileVerificationFailed) {
  json doc = valid_document();
  doc["verification"]["checks"][0]["error"] = 1e-10;  // above its tolerance: a failed check
  doc["verification"]["checks"][0]["passed"] = false;
  doc["verification"]["passed"] = false;
  const auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "result: \"PASSED\" disagrees with verification.passed"));
}

TEST(ValidateResults, NoChecksIsNotVerified) {
  json doc = valid_document();
  doc["verification"]["checks"] = json::array();
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "verification.checks: empty"));
  EXPECT_TRUE(has_problem(problems, "verification.passed disagrees"));
}

TEST(ValidateResults, CheckWithoutError) {
  json doc = valid_document();
  doc["verification"]["checks"][1].erase("error");
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{"verification.checks[1].error: missing"});
}

TEST(ValidateResults, RanksArrayLengthDiffersFromMpiRanks) {
  json doc = valid_document();
  doc["ranks"].erase(1);
  const auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, std::vector<std::string>{"ranks: 1 entries for 2 ranks"});
}

TEST(ValidateResults, RanksOutOfOrder) {
  json doc = valid_document();
  doc["ranks"][0]["rank"] = 1;
  doc["ranks"][1]["rank"] = 0;
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "ranks[0].rank: out of order"));
  EXPECT_TRUE(has_problem(problems, "ranks[1].rank: out of order"));
}

TEST(ValidateResults, GpuDeviceWithAllItsFields) {
  json doc = valid_document();
  doc["ranks"][0]["device"] = {{"kind", "gpu"},
                               {"vendor", "AMD"},
                               {"id", 0},
                               {"name", "AMD Instinct MI250X"},
                               {"architecture", "gfx90a"},
                               {"target_id", "gfx90a:sramecc+:xnack-"},
                               {"pci_bus_id", "0000:c1:00.0"},
                               {"uuid", "GPU-4a7f3c2b1e0d9f88"},
                               {"driver_version", "50221153"},
                               {"runtime_version", "5.2.21153"},
                               {"memory_bytes", 68702699520ULL},
                               {"free_memory_bytes", 68400000000ULL},
                               {"visible_devices", 8},
                               {"multiprocessors", 110},
                               {"l2_cache_bytes", 8388608},
                               {"warp_size", 64},
                               {"execution_space", "HIP"},
                               {"concurrency", 1802240},
                               {"peak_memory_bandwidth_GBps", 1638.4},
                               {"peak_memory_bandwidth_from", "2 x memory clock 1600 MHz x ..."},
                               {"peak_GFLOPs", {{"double", 23936.0}, {"float", 47872.0}}},
                               {"peak_GFLOPs_from", "110 SMs or CUs x 1700 MHz x ..."}};
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(ValidateResults, DeviceKindAndFieldTypes) {
  json doc = valid_document();
  doc["ranks"][0]["device"]["kind"] = "accelerator";
  doc["ranks"][1]["device"]["kind"] = "gpu";  // without its id
  doc["ranks"][1]["device"]["memory_bytes"] = -1;
  doc["ranks"][1]["device"]["uuid"] = 7;
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "ranks[0].device.kind: \"accelerator\""));
  EXPECT_TRUE(has_problem(problems, "ranks[1].device.id: missing"));
  EXPECT_TRUE(has_problem(problems, "ranks[1].device.memory_bytes: expected a non-negative"));
  EXPECT_TRUE(has_problem(problems, "ranks[1].device.uuid: expected a string"));
  EXPECT_EQ(problems.size(), 4u) << joined(problems);
}

// valid_document() as a run with energy writes it: the host's peaks unknown,
// one kernel measured, one not, and the run's energy section.
json energy_document() {
  json doc = valid_document();
  for (auto& r : doc["ranks"]) {
    r["device"]["peak_memory_bandwidth_from"] = "unknown: a host reports ...";
    r["device"]["peak_GFLOPs_from"] = "unknown: a host reports ...";
  }
  doc["kernels"][0]["energy"] = {{"status", "measured"},
                                 {"source", "rapl"},
                                 {"counters", 1},
                                 {"window_s", 0.51},
                                 {"window_unix_s", {1795398963.25, 1795398963.76}},
                                 {"executions", 25500},
                                 {"counter_step_s", 0.001},
                                 {"average_power_W", 40.0},
                                 {"joules_per_execution", 8e-4},
                                 {"fom_per_watt", {{"value", 0.04096}, {"units", "GB/s/W"}}}};
  doc["kernels"][0]["efficiency"] = {{"peak_bandwidth", "unknown: a host reports ..."}};
  doc["kernels"][1]["energy"] = {{"status", "unavailable"},
                                 {"reason", "the window of 0.005 s is shorter than 10 steps"},
                                 {"window_s", 0.005},
                                 {"executions", 250}};
  doc["kernels"][1]["efficiency"] = {{"peak_bandwidth_GBps", 204.8},
                                     {"fraction_of_peak_bandwidth", 0.008},
                                     {"peak_flops", "the problem names no precision"}};
  auto ranks = json::array();
  for (const bool counted : {true, false})  // one package counter per node
    ranks.push_back({{"status", "measured"},
                     {"source", "rapl"},
                     {"counter", "package-0 + dram"},
                     {"counted", counted},
                     {"counter_step_s", 0.001},
                     {"idle_power_W", 38.5}});
  doc["energy"] = {{"window_s", 0.5}, {"ranks", ranks}};
  return doc;
}

TEST(ValidateResults, EnergyAndEfficiency) {
  auto problems = karma::validate_results(energy_document());
  EXPECT_TRUE(problems.empty()) << joined(problems);
  // A GPU's counter, with its limit and clocks.
  json doc = energy_document();
  doc["energy"]["ranks"][0].update({{"source", "nvml"},
                                    {"counter", "GPU 0000:3b:00.0"},
                                    {"power_limit_W", 700.0},
                                    {"clocks_start_MHz", {{"sm_MHz", 1980}, {"memory_MHz", 2619}}},
                                    {"clocks_end_MHz", {{"sm_MHz", 1755}, {"memory_MHz", 2619}}}});
  problems = karma::validate_results(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(ValidateResults, EnergyOffOrUnavailable) {
  json doc = energy_document();
  for (auto& k : doc["kernels"]) k["energy"] = {{"status", "off"}};
  for (auto& r : doc["energy"]["ranks"])
    r = {{"status", "unavailable"}, {"reason", "run.energy is off"}};
  auto problems = karma::validate_results(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  // A counter that failed mid-run: still named, with why.
  doc["energy"]["ranks"][1] = {
      {"status", "unavailable"}, {"reason", "cannot read /sys/class/powercap/..."},
      {"source", "rapl"},        {"counter", "package-0"},
      {"counted", true},         {"counter_step_s", 0.001},
      {"idle_power_W", 38.5}};
  problems = karma::validate_results(doc);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(ValidateResults, EnergyStatusAndTypes) {
  json doc = energy_document();
  doc["kernels"][0]["energy"]["average_power_W"] = "40 W";
  doc["kernels"][0]["energy"]["executions"] = 0;
  doc["kernels"][0]["energy"]["window_unix_s"] = {1795398963.76, 1795398963.25};  // ends first
  doc["kernels"][0]["energy"].erase("fom_per_watt");
  doc["kernels"][1]["energy"]["status"] = "bogus";
  auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems, (std::vector<std::string>{
                          "kernels[0].energy.executions: 0 is not in [1, 9223372036854775807]",
                          "kernels[0].energy.window_unix_s: expected [start, end], two numbers, "
                          "got array",
                          "kernels[0].energy.average_power_W: expected a number, got string",
                          "kernels[0].energy.fom_per_watt: missing",
                          "kernels[1].energy.status: \"bogus\", expected \"measured\", "
                          "\"unavailable\", \"off\""}));
  doc = energy_document();
  doc["kernels"][1]["energy"].erase("reason");  // no figure without saying why
  doc["kernels"][0]["energy"]["average_power_W"] = 0.0;
  doc["kernels"][0]["energy"]["fom_per_watt"]["value"] = nullptr;
  problems = karma::validate_results(doc);
  EXPECT_EQ(problems, (std::vector<std::string>{
                          "kernels[0].energy.average_power_W: not positive",
                          "kernels[0].energy.fom_per_watt.value: expected a number, got null",
                          "kernels[1].energy.reason: missing"}));
}

TEST(ValidateResults, EfficiencyPeakWithItsFraction) {
  json doc = energy_document();
  doc["kernels"][1]["efficiency"].erase("fraction_of_peak_bandwidth");
  doc["kernels"][1]["efficiency"]["peak_bandwidth"] = "unknown";  // beside the peak
  doc["kernels"][0]["efficiency"]["peak_flops"] = 3;
  EXPECT_EQ(karma::validate_results(doc),
            (std::vector<std::string>{
                "kernels[0].efficiency.peak_flops: expected a string, got number",
                "kernels[1].efficiency.fraction_of_peak_bandwidth: missing",
                "kernels[1].efficiency.peak_bandwidth: beside peak_bandwidth_GBps"}));
}

TEST(ValidateResults, RunEnergyAndDevicePeaks) {
  json doc = energy_document();
  doc["energy"]["ranks"][0]["status"] = "off";  // only kernels are off
  doc["energy"]["ranks"][1]["counted"] = "yes";
  doc["energy"]["ranks"][1].erase("idle_power_W");
  doc["ranks"][0]["device"]["peak_GFLOPs"] = 9.7;
  doc["ranks"][1]["device"]["peak_memory_bandwidth_GBps"] = "fast";
  EXPECT_EQ(karma::validate_results(doc),
            (std::vector<std::string>{
                "ranks[0].device.peak_GFLOPs: expected an object, got number",
                "ranks[1].device.peak_memory_bandwidth_GBps: expected a number, got string",
                "energy.ranks[0].status: \"off\", expected \"measured\", \"unavailable\"",
                "energy.ranks[1].counted: expected true or false, got string",
                "energy.ranks[1].idle_power_W: missing"}));
  doc = energy_document();
  doc["energy"]["ranks"].erase(1);
  doc["energy"].erase("window_s");
  EXPECT_EQ(karma::validate_results(doc),
            (std::vector<std::string>{"energy.window_s: missing",
                                      "energy.ranks: 1 entries for 2 ranks"}));
}

TEST(ValidateResults, MissingNestedFieldsAreNamedByPath) {
  json doc = valid_document();
  doc["ranks"][1]["device"].erase("execution_space");
  doc["kokkos"]["backends"] = json::array();
  doc["build"].erase("compiler");
  doc["hosts"] = json::array();
  doc["job"] = 3;
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "ranks[1].device.execution_space: missing"));
  EXPECT_TRUE(has_problem(problems, "kokkos.backends: empty"));
  EXPECT_TRUE(has_problem(problems, "build.compiler: missing"));
  EXPECT_TRUE(has_problem(problems, "hosts: empty"));
  EXPECT_TRUE(has_problem(problems, "job: expected null or an object"));
  EXPECT_EQ(problems.size(), 5u) << joined(problems);
}

TEST(ValidateResults, Sha256OfWrongLength) {
  json doc = valid_document();
  doc["deck"]["sha256"] = std::string(63, 'a');
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{"deck.sha256: not 64 lower-case hex digits"});
  doc["deck"]["sha256"] = std::string(65, 'a');
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "deck.sha256"));
}

// The problem says "not 64 hex digits", and a deck's digest is lower-case hex.
TEST(ValidateResults, Sha256OfNonHexDigits) {
  json doc = valid_document();
  doc["deck"]["sha256"] = std::string(64, 'z');
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "deck.sha256"));
}

TEST(ValidateResults, ExpectationMismatches) {
  const json doc = valid_document();
  karma::ResultsExpectation app;
  app.app = "babel";
  EXPECT_EQ(karma::validate_results(doc, app),
            std::vector<std::string>{"app: \"stream\", expected babel"});
  karma::ResultsExpectation ranks;
  ranks.ranks = 4;
  EXPECT_EQ(karma::validate_results(doc, ranks),
            std::vector<std::string>{"mpi.ranks: 2, expected 4"});
  karma::ResultsExpectation result;
  result.result = "FAILED";
  EXPECT_EQ(karma::validate_results(doc, result),
            std::vector<std::string>{"result: \"PASSED\", expected FAILED"});
}

TEST(ValidateResults, NegativeDurationBytesAndFlops) {
  json doc = valid_document();
  doc["duration_s"] = -1.0;
  doc["kernels"][0]["bytes"] = -1.0;
  doc["kernels"][1]["flops"] = -2.0;
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "duration_s: negative"));
  EXPECT_TRUE(has_problem(problems, "kernels[0].bytes: negative"));
  EXPECT_TRUE(has_problem(problems, "kernels[1].flops: negative"));
  EXPECT_EQ(problems.size(), 3u) << joined(problems);
}

// The hostile cases: a check that says passed with its error above its
// tolerance, a date that is not one, an app that is not of the suite.
TEST(ValidateResults, CheckPassedWithErrorAboveTolerance) {
  json doc = valid_document();
  doc["verification"]["checks"][0]["error"] = 1e-10;  // tolerance 1e-14
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{
                "verification.checks[0].passed: true, but error 1e-10 > tolerance 1e-14"});
}

TEST(ValidateResults, CheckFailedWithErrorWithinTolerance) {
  json doc = valid_document();
  doc["verification"]["checks"][1]["passed"] = false;
  doc["verification"]["passed"] = false;
  doc["result"] = "FAILED";
  const auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "verification.checks[1].passed: false, but error"));
}

TEST(ValidateResults, CheckWithNullErrorCannotPass) {
  json doc = valid_document();
  doc["verification"]["checks"][0]["error"] = nullptr;  // NaN or infinite
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{"verification.checks[0].passed: true, but error is null "
                                     "(NaN or infinite)"});
}

TEST(ValidateResults, CheckErrorMustBeANumberOrNull) {
  json doc = valid_document();
  doc["verification"]["checks"][0]["error"] = "tiny";
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{
                "verification.checks[0].error: expected a number or null, got string"});
}

TEST(ValidateResults, DateMustBeAnIso8601UtcDateTime) {
  for (const char* bad :
       {"yesterday", "", "2024-05-01", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00",
        "2024-13-01T12:00:00Z", "2024-00-10T12:00:00Z", "2023-02-29T12:00:00Z",
        "2024-04-31T12:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z",
        "2024-05-01T12:00:60Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00+02:00",
        "2024-05-01T12:00:00Zjunk", "2024-5-1T12:00:00Z", "２０２４-05-01T12:00:00Z"}) {
    json doc = valid_document();
    doc["date"] = bad;
    const auto problems = karma::validate_results(doc);
    EXPECT_EQ(problems.size(), 1u) << bad << ":\n" << joined(problems);
    EXPECT_TRUE(has_problem(problems, "date: ")) << bad;
    EXPECT_FALSE(karma::is_utc_date_time(bad)) << bad;
  }
  for (const char* good :
       {"2024-05-01T12:00:00Z", "2024-02-29T23:59:59Z", "2000-02-29T00:00:00Z",
        "2016-12-31T23:59:60Z", "2024-05-01T12:00:00.125Z", "2024-05-01T12:00:00+00:00"}) {
    json doc = valid_document();
    doc["date"] = good;
    EXPECT_TRUE(karma::validate_results(doc).empty()) << good;
  }
  json doc = valid_document();
  doc["date"] = 20240501;
  EXPECT_EQ(karma::validate_results(doc),
            std::vector<std::string>{"date: expected a string, got number"});
}

TEST(ValidateResults, AppMustBeAMiniAppOfTheSuite) {
  json doc = valid_document();
  doc["app"] = "nosuchapp";
  auto problems = karma::validate_results(doc);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(has_problem(problems, "app: \"nosuchapp\" is not a mini-app of the suite"));
  for (const char* app : {"stream", "hexgrad", "matvec", "mgs", "contact"}) {
    doc["app"] = app;
    EXPECT_TRUE(karma::validate_results(doc).empty()) << app;
  }
  doc["app"] = "microbench";  // writes Google Benchmark JSON, never this document
  EXPECT_TRUE(has_problem(karma::validate_results(doc), "app: "));
}

TEST(ValidateResults, CountsOutOfRange) {
  json doc = valid_document();
  doc["mpi"]["ranks"] = std::numeric_limits<std::uint64_t>::max();  // -1 as an int
  doc["mpi"]["nodes"] = 0;
  doc["mpi"]["ranks_per_node"] = -2;
  const auto problems = karma::validate_results(doc);
  EXPECT_TRUE(has_problem(problems, "mpi.ranks: 18446744073709551615 is not in [1, 2147483647]"));
  EXPECT_TRUE(has_problem(problems, "mpi.nodes: 0 is not in [1, 2147483647]"));
  EXPECT_TRUE(has_problem(problems, "mpi.ranks_per_node: -2 is not in [1, 2147483647]"));
}

TEST(ValidateResults, AnElementThatIsNotAnObjectIsOneProblem) {
  json doc = valid_document();
  doc["kernels"][0] = 3;
  doc["verification"]["checks"][1] = json::array();
  const auto problems = karma::validate_results(doc);
  EXPECT_EQ(problems,
            (std::vector<std::string>{"kernels[0]: expected an object, got number",
                                      "verification.checks[1]: expected an object, got array"}));
}

// A document built in memory may hold bytes that are not UTF-8; quoting
// them in a problem must not throw.
TEST(ValidateResults, InvalidUtf8IsReportedNotThrown) {
  json doc = valid_document();
  doc["app"] =
      "str\xff"
      "eam";
  doc["result"] = "PASS\xfe";
  std::vector<std::string> problems;
  EXPECT_NO_THROW(problems = karma::validate_results(doc));
  EXPECT_TRUE(has_problem(problems, "app: "));
  EXPECT_TRUE(has_problem(problems, "result: "));
}

// Every value of the document, at every depth, replaced by every kind of
// JSON value: problems, never an exception. Only the values whose path names
// one of `within`, where given: each case validates the whole document.
void any_value_anywhere(const json& valid, const std::vector<std::string>& within = {}) {
  const auto wanted = [&](const std::string& path) {
    for (const auto& w : within)
      if (path.find(w) != std::string::npos) return true;
    return within.empty();
  };
  const std::vector<json> replacements = {nullptr,
                                          true,
                                          -1,
                                          std::numeric_limits<std::uint64_t>::max(),
                                          1e308,
                                          "text",
                                          "not UTF-8: \xff",
                                          json::array(),
                                          json::array({json::array({1})}),
                                          json::object(),
                                          json{{"x", {{"y", 1}}}}};
  const json flat = valid.flatten();
  std::size_t cases = 0;
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    // The leaf, and each object or array holding it.
    for (json::json_pointer p(it.key()); !p.empty() && wanted(p.to_string());
         p = p.parent_pointer()) {
      for (const json& r : replacements) {
        json doc = valid;
        doc[p] = r;
        EXPECT_NO_THROW(karma::validate_results(doc)) << p.to_string() << " = " << r.dump();
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 500u);
}

TEST(ValidateResults, AnyValueAnywhereIsAProblemNotAnException) {
  any_value_anywhere(valid_document());
}

TEST(ValidateResults, AnyEnergyValueAnywhereIsAProblemNotAnException) {
  any_value_anywhere(energy_document(), {"energy", "efficiency", "peak"});
}

// --- write_file_atomically -----------------------------------------------------

// A fresh directory per test, removed afterwards.
class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = fs::temp_directory_path().string() + "/karma_test_results_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    return names;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::path dir_;
};

TEST_F(AtomicWrite, WritesTheContent) {
  const fs::path out = dir_ / "results.json";
  const std::string text = "{\n  \"a\": 1\n}\n";
  karma::write_file_atomically(out.string(), text);
  EXPECT_EQ(read(out), text);
  EXPECT_EQ(entries(), std::vector<std::string>{"results.json"});
}

TEST_F(AtomicWrite, OverwritesAndLeavesNoTemporary) {
  const fs::path out = dir_ / "results.json";
  karma::write_file_atomically(out.string(), std::string(10000, 'x'));
  karma::write_file_atomically(out.string(), "short");
  EXPECT_EQ(read(out), "short");  // truncated, not "short" + the old tail
  for (const auto& name : entries()) EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
  EXPECT_EQ(entries().size(), 1u);
}

TEST_F(AtomicWrite, ReplacesTheFileRatherThanWritingIntoIt) {
  // A reader holding the old file keeps the old content: the new one is a
  // different file renamed over the name.
  const fs::path out = dir_ / "results.json";
  karma::write_file_atomically(out.string(), "old");
  std::ifstream reader(out, std::ios::binary);
  ASSERT_TRUE(reader.good());
  karma::write_file_atomically(out.string(), "new");
  std::string seen;
  reader >> seen;
  EXPECT_EQ(seen, "old");
  EXPECT_EQ(read(out), "new");
}

TEST_F(AtomicWrite, MissingDirectoryIsARuntimeErrorAndLeavesNothing) {
  const fs::path out = dir_ / "missing" / "results.json";
  try {
    karma::write_file_atomically(out.string(), "text");
    FAIL() << "no error";
  } catch (const karma::InputError&) {
    FAIL() << "an I/O failure is not bad input";
  } catch (const karma::Error& e) {
    EXPECT_EQ(e.code(), 3);
    EXPECT_EQ(e.code(), karma::exit_runtime_error);
  }
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicWrite, RenameOntoADirectoryFailsAndRemovesTheTemporary) {
  fs::create_directory(dir_ / "taken");
  std::ofstream(dir_ / "taken" / "inside") << "x";
  try {
    karma::write_file_atomically((dir_ / "taken").string(), "text");
    FAIL() << "no error";
  } catch (const karma::Error& e) {
    EXPECT_EQ(e.code(), 3);
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"taken"});
  EXPECT_TRUE(fs::is_directory(dir_ / "taken"));
}

// Durable, not only atomic: the data reaches the disk before the rename,
// and the rename before the writer returns.
class DurableWrite : public AtomicWrite {
 protected:
  void SetUp() override {
    AtomicWrite::SetUp();
    karma_test_fsync::calls.clear();
    karma_test_fsync::fail_with = 0;
    karma_test_fsync::recording = true;
  }
  void TearDown() override {
    karma_test_fsync::recording = false;
    karma_test_fsync::fail_with = 0;
    AtomicWrite::TearDown();
  }
};

TEST_F(DurableWrite, SyncsTheFileBeforeTheRenameAndTheDirectoryAfter) {
  const fs::path out = dir_ / "results.json";
  karma_test_fsync::target = out.string();
  karma::write_file_atomically(out.string(), "text");
  const auto& calls = karma_test_fsync::calls;
  ASSERT_EQ(calls.size(), 2u);
  const std::string temporary =
      (fs::canonical(dir_) / ("results.json.tmp." + std::to_string(getpid()))).string();
  EXPECT_EQ(calls[0].path, temporary);
  EXPECT_FALSE(calls[0].target_exists);
  EXPECT_EQ(calls[1].path, fs::canonical(dir_).string());
  EXPECT_TRUE(calls[1].target_exists);
  EXPECT_EQ(read(out), "text");
}

TEST_F(DurableWrite, ANameWithoutDirectorySyncsTheWorkingDirectory) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  karma_test_fsync::target = "results.json";
  karma::write_file_atomically("results.json", "text");
  fs::current_path(before);
  ASSERT_EQ(karma_test_fsync::calls.size(), 2u);
  EXPECT_EQ(karma_test_fsync::calls[1].path, fs::canonical(dir_).string());
  EXPECT_EQ(read(dir_ / "results.json"), "text");
}

TEST_F(DurableWrite, AFailedSyncIsARuntimeErrorAndLeavesNothing) {
  const fs::path out = dir_ / "results.json";
  karma_test_fsync::target = out.string();
  karma_test_fsync::fail_with = EIO;
  try {
    karma::write_file_atomically(out.string(), "text");
    FAIL() << "no error";
  } catch (const karma::Error& e) {
    EXPECT_EQ(e.code(), karma::exit_runtime_error);
    EXPECT_NE(std::string(e.what()).find("fsync"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(entries().empty());  // neither the temporary nor a half-durable result
}

// --- command line -----------------------------------------------------------------

karma::CommandLine parse(const std::vector<std::string>& args) {
  return karma::parse_command_line(args);
}

std::string input_error_of(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(CommandLine, DeckAlone) {
  const auto cli = parse({"deck.yaml"});
  EXPECT_EQ(cli.deck_path, "deck.yaml");
  EXPECT_TRUE(cli.overrides.empty());
  EXPECT_TRUE(cli.output.empty());
  EXPECT_FALSE(cli.quiet);
  EXPECT_FALSE(cli.help);
}

TEST(CommandLine, RepeatedSetKeepsOrderInBothSpellings) {
  const auto cli = parse({"--set", "a.b=1", "deck.yaml", "--set=c.d=2", "--set", "a.b=3"});
  EXPECT_EQ(cli.deck_path, "deck.yaml");
  EXPECT_EQ(cli.overrides, (std::vector<std::string>{"a.b=1", "c.d=2", "a.b=3"}));
}

TEST(CommandLine, OutputInBothSpellings) {
  EXPECT_EQ(parse({"deck.yaml", "--output", "out.json"}).output, "out.json");
  EXPECT_EQ(parse({"deck.yaml", "--output=dir/out.json"}).output, "dir/out.json");
  // The value after --output is taken as the file, even if it looks like a deck.
  const auto cli = parse({"--output", "x.yaml", "deck.yaml"});
  EXPECT_EQ(cli.output, "x.yaml");
  EXPECT_EQ(cli.deck_path, "deck.yaml");
}

TEST(CommandLine, QuietAndHelp) {
  EXPECT_TRUE(parse({"deck.yaml", "--quiet"}).quiet);
  EXPECT_TRUE(parse({"-q", "deck.yaml"}).quiet);
  const auto help = parse({"--help"});
  EXPECT_TRUE(help.help);
  EXPECT_TRUE(help.deck_path.empty());
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"deck.yaml", "--help"}).help);
}

TEST(CommandLine, NoDeckIsBadInput) {
  EXPECT_EQ(input_error_of({}), "no deck given (see --help)");
  EXPECT_EQ(input_error_of({"--quiet", "--set", "a.b=1"}), "no deck given (see --help)");
}

TEST(CommandLine, TwoDecksAreBadInput) {
  EXPECT_EQ(input_error_of({"one.yaml", "two.yaml"}),
            "more than one deck given: 'one.yaml' and 'two.yaml'");
}

TEST(CommandLine, UnknownOptionIsBadInput) {
  EXPECT_EQ(input_error_of({"deck.yaml", "--bogus"}), "unknown option '--bogus' (see --help)");
  EXPECT_EQ(input_error_of({"deck.yaml", "--setx=1"}), "unknown option '--setx=1' (see --help)");
  EXPECT_EQ(input_error_of({"deck.yaml", "--outputs=x"}),
            "unknown option '--outputs=x' (see --help)");
}

TEST(CommandLine, OptionWithoutValueIsBadInput) {
  EXPECT_EQ(input_error_of({"deck.yaml", "--output"}), "--output needs a value");
  EXPECT_EQ(input_error_of({"deck.yaml", "--output="}), "--output needs a file name");
  EXPECT_EQ(input_error_of({"deck.yaml", "--set"}), "--set needs a value");
}

// Kokkos' flags: what this Kokkos does not read is bad input, not ignored.
std::string kokkos_flag_error(const std::vector<std::string>& args) {
  try {
    karma::check_kokkos_flags(args);
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    return e.what();
  }
  return "";
}

TEST(KokkosFlags, ThisKokkosSpellingsPass) {
#if KOKKOS_VERSION < 30700
  const std::string threads = "--kokkos-threads=2";
#else
  const std::string threads = "--kokkos-num-threads=2";
#endif
  EXPECT_EQ(kokkos_flag_error({"deck.yaml", threads, "--kokkos-device-id=0", "--kokkos-help",
                               "--kokkos-disable-warnings", "--set", "a.b=1"}),
            "");
}

TEST(KokkosFlags, AnotherKokkosSpellingNamesThisOne) {
#if KOKKOS_VERSION < 30700
  const std::string error = kokkos_flag_error({"deck.yaml", "--kokkos-num-threads=2"});
  EXPECT_EQ(error.rfind("unknown Kokkos flag '--kokkos-num-threads=2': Kokkos 3.", 0), 0u) << error;
  EXPECT_NE(error.find(" spells it --kokkos-threads=N"), std::string::npos) << error;
#elif KOKKOS_VERSION >= 40300
  EXPECT_NE(kokkos_flag_error({"--kokkos-threads=2"}).find(" spells it --kokkos-num-threads=N"),
            std::string::npos);
  EXPECT_NE(kokkos_flag_error({"--kokkos-device=1"}).find(" spells it --kokkos-device-id=N"),
            std::string::npos);
#else
  GTEST_SKIP() << "Kokkos 3.7 to 4.2 read both spellings";
#endif
}

TEST(KokkosFlags, ValueOnlyAfterEquals) {
  const std::string expected =
      "--kokkos-device-id needs a value, written --kokkos-device-id=VALUE (Kokkos reads no "
      "separate value)";
  EXPECT_EQ(kokkos_flag_error({"deck.yaml", "--kokkos-device-id", "1"}), expected);
  EXPECT_EQ(kokkos_flag_error({"deck.yaml", "--kokkos-device-id="}), expected);
}

TEST(KokkosFlags, FlagKokkosLeftIsBadInput) {
  std::string program = "karma-stream", bogus = "--kokkos-bogus=1", deck = "deck.yaml";
  char* left[] = {program.data(), deck.data(), bogus.data(), nullptr};
  try {
    karma::check_kokkos_flags_consumed(3, left);
    FAIL() << "no error";
  } catch (const karma::InputError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(std::string(e.what()).rfind("unknown Kokkos flag '--kokkos-bogus=1': Kokkos ", 0), 0u)
        << e.what();
  }
  EXPECT_NO_THROW(karma::check_kokkos_flags_consumed(2, left));
}

TEST(CommandLine, UsageNamesTheExecutableAndOptions) {
  const std::string u = karma::usage("karma-stream");
  EXPECT_EQ(u.rfind("usage: karma-stream DECK.yaml", 0), 0u) << u;
  for (const char* option : {"--set", "--output", "--quiet", "--help"})
    EXPECT_NE(u.find(option), std::string::npos) << option;
}

// --- small helpers ------------------------------------------------------------------

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(karma::format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(karma::format_bytes(0), "0 B");
  EXPECT_EQ(karma::format_bytes(1023), "1023 B");
  EXPECT_EQ(karma::format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(karma::format_bytes(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
  EXPECT_EQ(karma::format_bytes(1.5 * 1024 * 1024), "1.50 MiB");
}

TEST(Bandwidth, GigabytesPerSecond) {
  EXPECT_DOUBLE_EQ(karma::gigabytes_per_second(2e9, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(karma::gigabytes_per_second(3e6, 1e-3), 3.0);
  EXPECT_EQ(karma::gigabytes_per_second(1e9, 0.0), 0.0);
}

TEST(Report, PassesOnlyWhenEveryCheckPassesAndThereIsOne) {
  karma::Report r;
  EXPECT_FALSE(r.passed());  // nothing checked
  r.checks.push_back({"a", "max relative error", 1e-15, 1e-14});
  EXPECT_TRUE(r.passed());
  r.checks.push_back({"b", "max relative error", 1e-14, 1e-14});  // equal: passes
  EXPECT_TRUE(r.passed());
  r.checks.push_back({"c", "max relative error", std::numeric_limits<double>::quiet_NaN(), 1.0});
  EXPECT_FALSE(r.checks.back().passed());
  EXPECT_FALSE(r.passed());
  r.checks.back().error = 2.0;
  EXPECT_FALSE(r.passed());
  r.checks.back().error = 0.5;
  EXPECT_TRUE(r.passed());
}

}  // namespace karma_test_results
