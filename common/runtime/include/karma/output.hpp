// Where a results file goes: the checks on a path given on the command line,
// the default time-stamped name, and never overwriting a file (run_main's,
// for every mini-app); and reading the deck, checked as a file first.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace karma {

// `t` in UTC, formatted by strftime's `format`.
std::string utc_stamp(std::chrono::system_clock::time_point t, const char* format);

// Empty when a file can be written at `path`: its directory exists and a
// file could be created there, and it is not itself a directory. Otherwise why not, as
// "NAMED_AS: ...", NAMED_AS being how the command line gave it (e.g.
// "--output x.json").
std::string output_path_problem(const std::string& named_as, const std::string& path);

// Creates run.results_dir `dir` (with its parents) and a file in it, removed
// at once: empty when that worked, else why not. Before the run, so that a
// results directory that cannot be written costs no run time.
std::string results_dir_problem(const std::string& dir);

// A deck is far smaller; a larger file is not one.
constexpr std::size_t max_deck_bytes = std::size_t{1} << 20;

// The deck file's text; InputError for a directory, a device, an empty file
// or one over max_deck_bytes, which would otherwise run the defaults or read
// without end.
std::string read_deck_text(const std::string& path);

// DIR/karma-APP_HOST_YYYYMMDDTHHMMSSZ.json
std::string default_output_name(const std::string& dir, const std::string& app,
                                std::chrono::system_clock::time_point t);

// `path` itself when no file is there, else PATH_2.json, PATH_3.json, ...
// (the first free one).
std::string unique_path(const std::string& path);

}  // namespace karma
