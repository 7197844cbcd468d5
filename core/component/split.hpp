// A system split over the ranks of a job (docs/scale-out.md): which part is
// this rank's, and how ranks talk. The core's window loop (Simulation::run_until)
// uses it; the cluster module provides it over MPI, tests with threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "component/partition.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/time.hpp"

namespace kbsim::core {

/// Collectives among the ranks of one split system: every rank calls each in the same order.
class Transport {
 public:
  virtual ~Transport() = default;
  struct Exchanged {
    std::vector<std::string> from_rank;  ///< what each rank sent this one, by rank
    Tick next = kNever;                  ///< the smallest `next` any rank gave
  };
  /// Send to_rank[r] to rank r (this rank's own entry included), and agree on the smallest `next`. The only
  /// collective a split run uses: whatever one rank is doing when another leaves or goes another way, the calls
  /// match, and what they carry says what the other is doing (split.cpp).
  virtual Exchanged exchange(std::vector<std::string> to_rank, Tick next) = 0;
};

/// An error one rank of a split system met, as every rank ends with it: "rank R of N: " and the error's own words,
/// with its exit code.
class RankError final : public Error {
 public:
  RankError(ExitCode code, const std::string& what) : Error(what), code_(code) {}
  ExitCode code() const noexcept override { return code_; }

 private:
  ExitCode code_;
};

struct Split {
  const Partition* partition = nullptr;
  unsigned rank = 0;
  Transport* transport = nullptr;
};

/// The end of a job whose systems were split over `ranks` ranks, on every rank, however it ends: tell every rank
/// this one is done (`code` kOk, or the error it ends with: `what`) and wait until every rank is. A rank still
/// running a system learns of it at its next exchange and ends with this rank's error (or, if this one ended without
/// one, with an error saying the ranks' benches went different ways), then leaves too; so no rank waits forever.
/// Returns the error of the lowest other rank that failed, when this one did not.
std::optional<RankError> leave_split(Transport& transport, unsigned rank, unsigned ranks, ExitCode code,
                                     const std::string& what);

}  // namespace kbsim::core
