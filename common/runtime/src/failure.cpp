#include "karma/failure.hpp"

#include "karma/comm.hpp"
#include "karma/deck.hpp"
#include "karma/system.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace karma {

const char* failure_reason(int exit_code) {
  switch (exit_code) {
    case exit_verification_failed:
      return "verification";
    case exit_bad_input:
      return "bad-input";
    case exit_runtime_error:
      return "runtime-error";
    default:
      return "error";
  }
}

namespace {

// Long enough for a rank whose neighbours reach the same error a little
// later (uneven start-up, a slower node), short enough to end a job soon.
constexpr double collective_error_wait_s = 5.0;

std::string rank_and_host(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + " (" + host + ")";
}

struct RankError {
  int rank = 0;
  int code = exit_ok;
  std::string host, message;
};

std::string encode(const RankError& e) {
  return std::to_string(e.code) + "\n" + e.host + "\n" + e.message;
}

RankError decode(int rank, const std::string& text) {
  RankError e;
  e.rank = rank;
  const auto first = text.find('\n');
  const auto second = text.find('\n', first + 1);
  e.code = std::atoi(text.substr(0, first).c_str());
  e.host = text.substr(first + 1, second - first - 1);
  e.message = text.substr(second + 1);
  return e;
}

// Every rank's error (code exit_ok: none), from every rank. Collective.
std::vector<RankError> gather_errors(const Error* failure) {
  RankError mine;
  mine.host = hostname();
  if (failure) {
    mine.code = failure->code();
    mine.message = failure->what();
  }
  const auto all = comm::allgather(encode(mine));
  std::vector<RankError> out;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) out.push_back(decode(r, all[r]));
  return out;
}

// Rank 0 prints each distinct message once, with the ranks that gave it,
// then the RESULT line; returns the lowest failing rank's code.
int report(const std::string& executable, const std::vector<RankError>& errors) {
  std::vector<const RankError*> failed;
  for (const auto& e : errors)
    if (e.code != exit_ok) failed.push_back(&e);
  if (failed.empty()) return exit_ok;
  const int code = failed.front()->code;
  if (!comm::is_root()) return code;
  const bool everyone_alike = failed.size() == errors.size() &&
                              std::all_of(failed.begin(), failed.end(), [&](const RankError* e) {
                                return e->message == failed.front()->message && e->code == code;
                              });
  if (everyone_alike) {
    std::fprintf(stderr, "%s: error: %s\n", executable.c_str(), failed.front()->message.c_str());
  } else {
    std::vector<std::string> order;
    std::map<std::string, std::vector<const RankError*>> by_message;
    for (const RankError* e : failed) {
      if (by_message[e->message].empty()) order.push_back(e->message);
      by_message[e->message].push_back(e);
    }
    for (const auto& message : order) {
      const auto& ranks = by_message[message];
      std::string where = ranks.size() == 1 ? "rank " : "ranks ";
      std::string hosts;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        where += (i ? ", " : "") + std::to_string(ranks[i]->rank);
        if (hosts.find(ranks[i]->host) == std::string::npos)
          hosts += (hosts.empty() ? "" : ", ") + ranks[i]->host;
      }
      std::fprintf(stderr, "%s: error on %s (%s): %s\n", executable.c_str(), where.c_str(),
                   hosts.c_str(), message.c_str());
    }
  }
  std::fflush(stderr);
  std::printf("RESULT: FAILED reason=%s\n", failure_reason(code));
  std::fflush(stdout);
  return code;
}

// "/stream/shape/0" -> "stream.shape[0]", as a deck names it.
std::string dotted(const std::string& pointer) {
  std::string key;
  std::size_t begin = 1;
  while (begin <= pointer.size()) {
    const std::size_t end = std::min(pointer.find('/', begin), pointer.size());
    const std::string part = pointer.substr(begin, end - begin);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    key += index ? "[" + part + "]" : (key.empty() ? "" : ".") + part;
    begin = end + 1;
  }
  return key;
}

// The first key whose value differs, as "key = A where ... has B"; the decks
// are flattened so that a nested key is named in full.
std::string first_difference(const nlohmann::json& mine, const nlohmann::json& root,
                             const std::string& me, const std::string& root_name) {
  const auto a = mine.flatten(), b = root.flatten();
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key))
      return me + " has no " + dotted(key) + ", which " + root_name + " sets to " + value.dump();
    if (a[key] != value)
      return me + " has " + dotted(key) + " = " + a[key].dump() + " where " + root_name + " has " +
             value.dump();
  }
  for (const auto& [key, value] : a.items())
    if (!b.contains(key))
      return me + " has " + dotted(key) + " = " + value.dump() + ", which " + root_name +
             " does not set";
  return me + " differs from " + root_name;
}

}  // namespace

int settle_start(const std::string& executable, const Error* failure, const Deck* deck) {
  const int code = report(executable, gather_errors(failure));
  if (code != exit_ok) leaving_with(code);
  if (code != exit_ok || comm::size() == 1) return code;

  // Every rank must run the same problem: compare the resolved decks (or
  // --help, which reads none).
  const auto decks = comm::allgather(hostname() + "\n" + (deck ? deck->resolved().dump() : "help"));
  auto host_of = [&](int r) { return decks[r].substr(0, decks[r].find('\n')); };
  auto deck_of = [&](int r) { return decks[r].substr(decks[r].find('\n') + 1); };
  std::vector<int> differing;
  for (int r = 1; r < static_cast<int>(decks.size()); ++r)
    if (deck_of(r) != deck_of(0)) differing.push_back(r);
  if (differing.empty()) return exit_ok;
  if (comm::is_root()) {
    const int r = differing.front();
    const std::string other = rank_and_host(r, host_of(r)), root = rank_and_host(0, host_of(0));
    std::string message = "the ranks did not read the same deck: ";
    if (deck_of(r) == "help" || deck_of(0) == "help")
      message += (deck_of(r) == "help" ? other : root) + " was given --help and " +
                 (deck_of(r) == "help" ? root : other) + " was not";
    else
      message += first_difference(nlohmann::json::parse(deck_of(r)),
                                  nlohmann::json::parse(deck_of(0)), other, root);
    if (differing.size() > 1)
      message += " (and " + std::to_string(differing.size() - 1) + " more rank(s) differ)";
    std::fprintf(stderr, "%s: error: %s; every rank must be given the same deck and --set\n",
                 executable.c_str(), message.c_str());
    std::fflush(stderr);
    std::printf("RESULT: FAILED reason=%s\n", failure_reason(exit_bad_input));
    std::fflush(stdout);
  }
  leaving_with(exit_bad_input);
  return exit_bad_input;
}

int settle_error(const std::string& executable, const Error& e) {
  if (e.collective() && comm::all_arrive_within(collective_error_wait_s)) {
    const int code = report(executable, gather_errors(&e));
    leaving_with(code);
    return code;
  }
  std::fprintf(stderr, "%s: error on %s: %s\n", executable.c_str(),
               rank_and_host(comm::rank(), hostname()).c_str(), e.what());
  std::fflush(stderr);
  std::printf("RESULT: FAILED reason=%s\n", failure_reason(e.code()));
  std::fflush(stdout);
  comm::abort(e.code());
}

// --- testing: injected failures ---

void inject_failure_at(const char* phase) {
  static const char* const variable = "KARMA_INJECT_FAILURE";
  const char* value = std::getenv(variable);
  if (value == nullptr) return;
  const std::string text = value;
  const std::vector<std::string> phases = {"start", "allocation", "kernel", "verification",
                                           "output"};
  const auto colon = text.find(':');
  const std::string rank = text.substr(0, colon),
                    where = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool known = std::find(phases.begin(), phases.end(), where) != phases.end();
  if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos ||
      rank.size() > 9 || !known || (where == "output" && rank != "0"))
    throw InputError(std::string(variable) + "=" + text +
                     ": expected RANK:PHASE, PHASE one of start, allocation, kernel, verification, "
                     "output "
                     "(output on rank 0 only, which writes the results)");
  if (std::atoi(rank.c_str()) >= comm::size())
    throw InputError(std::string(variable) + "=" + text + ": there is no rank " + rank + " of " +
                     std::to_string(comm::size()));
  if (where == phase && std::atoi(rank.c_str()) == comm::rank())
    throw Error(exit_runtime_error,
                std::string("injected failure (") + variable + "=" + text + ") in phase " + phase);
}

// --- interrupts ----------------------------------------------------------------

namespace {

// Written at start-up so that the handler only calls write, unlink and
// _exit, which are safe in a signal handler. The file name has two buffers:
// a new name is written into the unused one, then one store switches to it,
// so a signal on any thread sees a whole name or none.
char interrupt_prefix[512];
// Set once this rank has reported a failure and is leaving with that code:
// the launcher may then stop it with a signal, which is no interruption.
volatile sig_atomic_t leaving_code = -1;
char files_to_remove[2][4096];
volatile sig_atomic_t file_to_remove = -1;

void write_all(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

extern "C" void on_interrupt(int signal_number) {
  if (leaving_code >= 0) _exit(leaving_code);
  const int file = file_to_remove;
  if (file >= 0) unlink(files_to_remove[file]);
  write_all(2, interrupt_prefix);
  // mpirun and srun also send SIGTERM to end a job after another rank failed.
  write_all(2, signal_number == SIGINT ? "SIGINT\n"
                                       : "SIGTERM (from the user, a time limit, or the launcher "
                                         "ending the job after another rank failed)\n");
  write_all(1, "RESULT: FAILED reason=interrupted\n");
  _exit(128 + signal_number);
}

}  // namespace

void leaving_with(int exit_code) { leaving_code = exit_code; }

void install_interrupt_handlers(const std::string& executable) {
  std::snprintf(interrupt_prefix, sizeof interrupt_prefix, "%s: interrupted on %s by ",
                executable.c_str(), rank_and_host(comm::rank(), hostname()).c_str());
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void set_file_to_remove_on_interrupt(const std::string& path) {
  if (path.empty() || path.size() >= sizeof files_to_remove[0]) {
    file_to_remove = -1;
    return;
  }
  const int next = file_to_remove == 0 ? 1 : 0;
  std::memcpy(files_to_remove[next], path.c_str(), path.size() + 1);
  file_to_remove = next;
}

}  // namespace karma
