// The atomic writer, the command line and the small helpers of app.hpp (the
// results document's checks: python/tests/test_validate_results.py).
#include "karma/app.hpp"
#include "karma/error.hpp"
#include "karma/output.hpp"

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
  const auto cli = parse({"--set", "a.b=1", "deck.yaml", "--set=c.d=2", "--set", "e.f=3"});
  EXPECT_EQ(cli.deck_path, "deck.yaml");
  EXPECT_EQ(cli.overrides, (std::vector<std::string>{"a.b=1", "c.d=2", "e.f=3"}));
}

// The last one winning in silence hid typos in batch scripts.
TEST(CommandLine, AnOptionOrSetKeyGivenTwiceIsBadInput) {
  EXPECT_EQ(input_error_of({"deck.yaml", "--output", "a.json", "--output=b.json"}),
            "--output given twice: 'a.json' and 'b.json'");
  EXPECT_EQ(input_error_of({"deck.yaml", "--set", "a.b=1", "--set=a.b=2"}),
            "--set a.b given twice: 'a.b=1' and 'a.b=2'");
}

// Only creating a file proves it can be written: access() grants root
// /proc, where creating then fails after the whole run.
TEST(OutputPath, ProvenByCreatingAFile) {
  EXPECT_NE(karma::output_path_problem("--output /proc/karma.json", "/proc/karma.json"), "");
  const std::string dir = ::testing::TempDir() + "karma_test_out_" + std::to_string(getpid());
  EXPECT_EQ(karma::results_dir_problem(dir + "/a/b"), "");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/a/b"));
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/a/b"));  // the probe is gone
  EXPECT_NE(karma::results_dir_problem("/proc/karma"), "");
  std::filesystem::remove_all(dir);
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
