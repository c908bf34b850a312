// How a failure on any rank ends the whole job: with the failing rank's
// message, naming the rank and its host, and never with ranks left waiting.
#pragma once

#include "karma/error.hpp"

#include <string>

namespace karma {

class Deck;

// "bad-input" etc., as printed in `RESULT: FAILED reason=...`.
const char* failure_reason(int exit_code);

// Collective, called once by every rank after reading its command line and
// deck (nothing before it may be collective). `failure` is this rank's
// error or null; `deck` its deck, when it read one. Settles whether the
// job goes on: when any rank failed, rank 0 prints every distinct message
// and all ranks get the lowest failing rank's exit code; when all read a
// deck but the resolved decks differ (an MPMD launch, another file on one
// node), all get exit_bad_input. Returns exit_ok to go on.
int settle_start(const std::string& executable, const Error* failure, const Deck* deck);

// For an error after start-up. A collective error that every rank reaches
// within a few seconds is printed once by rank 0 and its code returned, so
// that all ranks leave in order; anything else is printed by this rank,
// naming it, and ends the job (MPI_Abort), never returning.
int settle_error(const std::string& executable, const Error& e);

// Testing: with KARMA_INJECT_FAILURE=RANK:PHASE in its environment, rank
// RANK fails with exit_runtime_error at PHASE, as a device, memory or I/O
// fault there would: `start` (after Kokkos starts), `allocation` (the
// memory check before a mini-app allocates), `kernel` (the first timed
// call), `verification` (as the mini-app returns its checks) or `output`
// (writing the results; rank 0 only). Throws; a malformed value is an
// InputError.
void inject_failure_at(const char* phase);

// SIGINT and SIGTERM (a batch time limit sends SIGTERM) end this rank with
// `RESULT: FAILED reason=interrupted`, a line on stderr naming the signal,
// the rank and its host, and exit code 128 + signal; a results file being
// written is removed, never left half written.
void install_interrupt_handlers(const std::string& executable);

// From here on this rank leaves with `exit_code`: a signal now (the launcher
// stopping the job because another rank ended first) ends it silently with
// that code.
void leaving_with(int exit_code);

// The temporary file an interrupt must remove (empty: none).
void set_file_to_remove_on_interrupt(const std::string& path);

}  // namespace karma
