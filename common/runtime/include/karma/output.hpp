// Where a results file goes: the checks on a path given on the command line,
// the default time-stamped name, and never overwriting a file (run_main's,
// for every mini-app).
#pragma once

#include <chrono>
#include <string>

namespace karma {

// `t` in UTC, formatted by strftime's `format`.
std::string utc_stamp(std::chrono::system_clock::time_point t, const char* format);

// Empty when a file can be written at `path`: its directory exists and is
// writable, and it is not itself a directory. Otherwise why not, as
// "NAMED_AS: ...", NAMED_AS being how the command line gave it (e.g.
// "--output x.json").
std::string output_path_problem(const std::string& named_as, const std::string& path);

// Whether `dir` exists and is writable, or could be created under its
// nearest existing ancestor.
bool can_create_directory(const std::string& dir);

// DIR/karma-APP_HOST_YYYYMMDDTHHMMSSZ.json
std::string default_output_name(const std::string& dir, const std::string& app,
                                std::chrono::system_clock::time_point t);

// `path` itself when no file is there, else PATH_2.json, PATH_3.json, ...
// (the first free one).
std::string unique_path(const std::string& path);

}  // namespace karma
