// A system split over the ranks of a job (docs/scale-out.md): which part is
// this rank's, and how ranks talk. The core's window loop (Simulation::run_until)
// uses it; the cluster module provides it over MPI, tests with threads.
#pragma once

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
  /// Send to_rank[r] to rank r (this rank's own entry included), and agree on the smallest `next`.
  virtual Exchanged exchange(std::vector<std::string> to_rank, Tick next) = 0;
  /// Every rank's bytes, by rank.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
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

}  // namespace kbsim::core
