// The small shared pieces of App, Report and Context (karma/app.hpp);
// run_main itself is startup.cpp.
#include "karma/app.hpp"

#include "karma/comm.hpp"
#include "karma/failure.hpp"
#include "karma/system.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace karma {

// --- small helpers -------------------------------------------------------------

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof(text), u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
  return text;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  set_file_to_remove_on_interrupt(temporary);
  auto failure = [&](const std::string& what) {
    const int err = errno;
    unlink(temporary.c_str());
    return Error(exit_runtime_error, what + ": " + std::strerror(err));
  };
  // POSIX calls, not a stream, for fsync: without it a crash of the node
  // after the rename could leave the name on an empty or partial file.
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw failure("cannot write '" + temporary + "'");
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Error e = failure("cannot write '" + temporary + "'");
      close(fd);
      throw e;
    }
    done += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) {
    const Error e = failure("cannot write '" + temporary + "' to disk (fsync)");
    close(fd);
    throw e;
  }
  if (close(fd) != 0) throw failure("cannot write '" + temporary + "'");
  if (rename(temporary.c_str(), path.c_str()) != 0)
    throw failure("cannot rename results into '" + path + "'");
  set_file_to_remove_on_interrupt("");
  // The rename itself is durable only once the directory is synced.
  const fs::path parent = fs::path(path).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  const int dir = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    throw Error(exit_runtime_error, "cannot open directory '" + directory + "' to sync '" + path +
                                        "': " + std::strerror(errno));
  // EINVAL: a file system that cannot sync directories (some network ones);
  // there is nothing more to do there.
  if (fsync(dir) != 0 && errno != EINVAL) {
    const int err = errno;
    close(dir);
    throw Error(exit_runtime_error, "cannot sync directory '" + directory + "' after writing '" +
                                        path + "': " + std::strerror(err));
  }
  close(dir);
}

nlohmann::json allgather_json(const nlohmann::json& value) {
  auto all = nlohmann::json::array();
  for (const auto& text : comm::allgather(value.dump())) all.push_back(nlohmann::json::parse(text));
  return all;
}

void record_run_settings(const RunSettings& run, nlohmann::json& problem) {
  if (run.repetitions > 0) problem["repetitions"] = run.repetitions;
  problem["warmup"] = run.warmup;
}

std::string run_settings_summary(const RunSettings& run) {
  if (run.repetitions == 0) return "";
  return "; " + std::to_string(run.repetitions) + " repetitions after " +
         std::to_string(run.warmup) + " warm-up(s)";
}

bool Report::passed() const {
  for (const auto& c : checks)
    if (!c.passed()) return false;
  return !checks.empty();  // a run that checked nothing has not passed
}

bool Context::verbose() const { return comm::is_root() && !command_line.quiet; }

void Context::require_memory(std::uint64_t bytes_per_rank, const std::string& what) const {
  inject_failure_at("allocation");
  const MemoryInfo memory = available_memory();
  const std::int64_t demand =
      comm::sum_on_device(static_cast<std::int64_t>(std::min<std::uint64_t>(
                              bytes_per_rank, static_cast<std::uint64_t>(INT64_MAX))),
                          device_id);
  const bool fits = static_cast<std::uint64_t>(demand) <= memory.free_bytes;
  // Everyone learns the worst case, so every rank refuses together.
  const double worst_demand = comm::max(static_cast<double>(demand));
  const double least_free = comm::min(static_cast<double>(memory.free_bytes));
  if (!comm::all(fits)) {
    std::ostringstream m;
    m << "the problem does not fit: " << what << " needs " << format_bytes(worst_demand) << " ("
      << static_cast<double>(worst_demand) << " bytes) on one "
      << (device_id >= 0 ? "device" : "node") << " but only " << format_bytes(least_free) << " ("
      << least_free << " bytes) is free (" << memory.source
      << "); nothing was allocated. Use a smaller problem or more ranks.";
    throw Error(exit_runtime_error, m.str(), /*collective=*/true);
  }
}

}  // namespace karma
