// The processes of one kbsim job: one, or the ranks of an `mpirun` (OpenMPI).
// kbsim joins the MPI world only when an MPI launcher started it (its
// environment says so) and it was built with MPI; otherwise it is rank 0 of 1.
// Nothing of the model lives here: this is how processes find each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbsim::core::cluster {

struct World {
  unsigned rank = 0, size = 1;
  bool mpi = false;  ///< joined an MPI world (size may still be 1)
};

/// Join the MPI world if an MPI launcher started this process (call once, first thing in main).
void init(int* argc, char*** argv);
/// Leave it (call once, before a normal exit; safe when init did nothing).
void finalize();
const World& world() noexcept;
/// True when this build can join an MPI world.
bool built_with_mpi() noexcept;
/// Collective: every rank passes its bytes and gets every rank's, by rank.
std::vector<std::string> all_gather(const std::string& mine);
/// Collective: send to_rank[r] to rank r (one entry per rank, this one's included) into from_rank[r] on it, whose
/// strings are reused (called once per window of a split run, it allocates nothing once its buffers have grown);
/// returns the smallest of every rank's `value`.
std::uint64_t all_to_all(const std::vector<std::string>& to_rank, std::uint64_t value,
                         std::vector<std::string>& from_rank);
/// End every rank of the job with `code` (after this rank reported why).
[[noreturn]] void abort(int code);

}  // namespace kbsim::core::cluster
