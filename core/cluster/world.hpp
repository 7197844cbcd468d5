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
/// Whether this process leads the job (rank 0): it writes the run's files and reports; the others compute alike.
inline bool leads() noexcept { return world().rank == 0; }
/// The job's processes.
inline unsigned processes() noexcept { return world().size; }
/// How a summary names the job's processes: " over N MPI ranks", or "" for one process.
inline std::string over_the_job() {
  return world().size > 1 ? " over " + std::to_string(world().size) + " MPI ranks" : std::string();
}
/// How a summary names the leading process: "rank 0".
inline std::string leader_words() { return "rank 0"; }
/// The items of `n` this process takes when the job shares them out: every size-th, from its rank.
std::vector<std::size_t> my_share(std::size_t n);
/// Collective: each process passes one string per item of its share (my_share, in order); every process gets every
/// item's, in item order.
std::vector<std::string> gather_shares(const std::vector<std::string>& mine, std::size_t n);
/// Drop what this process prints on standard output unless it leads (its standard error stays).
void quiet_followers();
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
