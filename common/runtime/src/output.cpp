#include "karma/output.hpp"

#include "karma/system.hpp"

#include <unistd.h>

#include <ctime>
#include <filesystem>

namespace karma {

namespace fs = std::filesystem;

std::string utc_stamp(std::chrono::system_clock::time_point t, const char* format) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof(text), format, &utc);
  return text;
}

std::string output_path_problem(const std::string& named_as, const std::string& path) {
  if (path.empty()) return named_as + ": empty file name";
  const fs::path out(path);
  std::error_code ec;
  if (fs::is_directory(out, ec)) return named_as + ": is a directory; name a file";
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent, ec))
    return named_as + ": directory '" + parent.string() + "' does not exist";
  if (access(parent.c_str(), W_OK) != 0)
    return named_as + ": directory '" + parent.string() + "' is not writable";
  return "";
}

bool can_create_directory(const std::string& dir) {
  fs::path d(dir);
  std::error_code ec;
  while (!d.empty() && !fs::exists(d, ec)) d = d.parent_path();
  if (d.empty()) d = ".";
  return fs::is_directory(d, ec) && access(d.c_str(), W_OK) == 0;
}

std::string default_output_name(const std::string& dir, const std::string& app,
                                std::chrono::system_clock::time_point t) {
  return (fs::path(dir) /
          ("karma-" + app + "_" + hostname() + "_" + utc_stamp(t, "%Y%m%dT%H%M%SZ") + ".json"))
      .string();
}

std::string unique_path(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return path;
  const bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  const std::string stem = json ? path.substr(0, path.size() - 5) : path;
  for (int k = 2;; ++k) {
    const std::string candidate = stem + "_" + std::to_string(k) + (json ? ".json" : "");
    if (!fs::exists(candidate, ec)) return candidate;
  }
}

}  // namespace karma
