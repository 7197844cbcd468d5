// What ranks say to each other in a split run's collectives (split_executor.cpp, together.cpp): every string a rank
// sends starts with one byte saying what it is.
#pragma once

#include <string>
#include <vector>

#include "kbsim/bytes.hpp"
#include "kbsim/errors.hpp"

namespace kbsim::core::said {

// A window's messages (kFine, or kStopped, the time a component of the rank stopped the run and, with an op log, its
// place), statistics after a run (kGathered, and the op log's records it settled), the error that stopped the rank
// (kFailed: its exit code and message; every rank then ends with it), or that the rank has left (kLeft: its exit
// code, kOk or its error's, and the error), or what its components wait for (kWaits). An empty string is a window
// with nothing to send.
constexpr char kFine = 0, kFailed = 1, kStopped = 2, kGathered = 3, kLeft = 4, kWaits = 5;

/// An error as bytes: its exit code, whether its words already name the rank it happened on (an error a rank passed
/// on from another), and its words.
std::string coded(char kind, ExitCode code, const std::string& what, bool named);

/// What `coded` wrote, as rank `rank` of `ranks` said it.
struct Said {
  ExitCode code;
  std::string words;  ///< as the rank said it
  std::string named;  ///< naming the rank
};
Said read(const std::string& in, unsigned rank, unsigned ranks);

/// What ranks said in an exchange: the lowest failing rank's error, the same on every rank; else that a rank left, or
/// is doing something else than `kind` (a window's exchange, kGathered or kWaits), as the end of the job.
void end_if_failed(const std::vector<std::string>& from_rank, unsigned me, char kind);

}  // namespace kbsim::core::said
