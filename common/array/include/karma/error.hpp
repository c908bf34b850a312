// Exit codes and the one exception type the core and the mini-apps throw.
#pragma once

#include <stdexcept>
#include <string>

namespace karma {

enum ExitCode : int {
  exit_ok = 0,
  exit_verification_failed = 1,
  exit_bad_input = 2,      // bad deck, bad command line
  exit_runtime_error = 3,  // too large for memory, I/O failure, backend error
};

// `collective` says every rank throws the same error at the same point (a bad
// deck, a failed collective memory check): rank 0 reports it and all ranks
// leave in order. Otherwise the throwing rank aborts the whole job, so an
// error on one rank can never leave the others waiting in a collective.
class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& message, bool collective = false)
      : std::runtime_error(message), code_(exit_code), collective_(collective) {}
  int code() const noexcept { return code_; }
  bool collective() const noexcept { return collective_; }

 private:
  int code_;
  bool collective_;
};

// Errors in the input are seen alike by every rank: they all read one deck.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(exit_bad_input, message, true) {}
};

}  // namespace karma
