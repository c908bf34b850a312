#include "karma/output.hpp"

#include "karma/system.hpp"

#include "karma/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

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

namespace {

// Only creating a file proves that one can be: access() grants root /proc,
// where the results would then be lost after the whole run.
std::string creation_problem(const fs::path& dir) {
  // Every rank probes, on other nodes too: their pids alone may collide.
  const fs::path probe = dir / (".karma-probe." + hostname() + "." + std::to_string(getpid()));
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return "";
}

}  // namespace

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
  if (const std::string why = creation_problem(parent); !why.empty())
    return named_as + ": cannot create a file in '" + parent.string() + "': " + why;
  return "";
}

std::string results_dir_problem(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create directory '" + dir + "': " + ec.message();
  if (const std::string why = creation_problem(dir); !why.empty())
    return "cannot create a file in '" + dir + "': " + why;
  return "";
}

std::string read_deck_text(const std::string& path) {
  const std::string deck = "deck '" + path + "' ";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(deck + "is a directory; name a deck file");
    // A device would run the defaults (/dev/null) or never end (/dev/zero).
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
      throw InputError(deck + "is not a regular file but a device; name a deck file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw InputError("cannot open deck '" + path + "': " + std::strerror(err));
  }
  std::string text(max_deck_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError("cannot read deck '" + path + "'");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.empty()) throw InputError(deck + "is empty; name a deck file");
  if (text.size() > max_deck_bytes)
    throw InputError(deck + "is larger than " + std::to_string(max_deck_bytes >> 20) +
                     " MiB; no deck is");
  return text;
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
