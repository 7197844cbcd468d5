#include "cluster/world.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kbsim/errors.hpp"

#ifdef KBSIM_WITH_MPI
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#endif

namespace kbsim::core::cluster {

namespace {
World g_world;

/// Started by mpirun/mpiexec (OpenMPI) or a PMI launcher (srun, hydra)?
bool under_launcher() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

#ifdef KBSIM_WITH_MPI
/// A rank talks to its launcher (OpenMPI's PMIx server, in mpirun or its daemon) over a TCP connection that the
/// launcher library leaves with Nagle's algorithm on. MPI_Finalize's closing handshake then waits for the server's
/// delayed acknowledgement: 40 ms of every run, a tenth of a short one. The TCP connections open when MPI_Init has
/// returned, to this machine, are the launcher's (ranks on one machine talk through shared memory), and sending
/// their small messages at once changes only when they arrive. Best effort: where /proc is missing nothing changes.
void send_to_launcher_at_once() {
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc{} || fd <= STDERR_FILENO)
      continue;  // (not the standard streams, whatever they were given)
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    sockaddr_storage peer{};
    len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;  // not connected
    const bool loopback =
        (peer.ss_family == AF_INET &&
         (ntohl(reinterpret_cast<const sockaddr_in&>(peer).sin_addr.s_addr) >> 24) == 127) ||
        (peer.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr));
    if (!loopback) continue;  // the launcher's server runs on this machine
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
}
#endif
}  // namespace

bool built_with_mpi() noexcept {
#ifdef KBSIM_WITH_MPI
  return true;
#else
  return false;
#endif
}

void init([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#ifdef KBSIM_WITH_MPI
  if (!under_launcher()) return;
  // Every rank on this one machine (OpenMPI says how many share it): its shared-memory transport through the ob1
  // layer is what it would use anyway, and choosing it skips probing for network hardware (UCX), 0.2 s of every
  // start. A choice the user made (OMPI_MCA_pml, or mpirun --mca pml) stands.
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char* all = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (local && all && std::string(local) == all) ::setenv("OMPI_MCA_pml", "ob1", 0);
  MPI_Init(argc, argv);
  send_to_launcher_at_once();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_world = {static_cast<unsigned>(rank), static_cast<unsigned>(size), true};
#else
  if (under_launcher() && std::getenv("OMPI_COMM_WORLD_RANK") &&
      std::string(std::getenv("OMPI_COMM_WORLD_RANK")) != "0")
    std::exit(0);  // a build without MPI under mpirun: rank 0 runs the whole job alone, the others leave
#endif
}

void finalize() {
#ifdef KBSIM_WITH_MPI
  if (g_world.mpi) {
    MPI_Finalize();
    g_world.mpi = false;
  }
#endif
}

const World& world() noexcept { return g_world; }

std::vector<std::string> all_gather(const std::string& mine) {
  if (g_world.size == 1) return {mine};
#ifdef KBSIM_WITH_MPI
  const int n = static_cast<int>(g_world.size);
  unsigned long long len = mine.size();
  std::vector<unsigned long long> lens(g_world.size);
  MPI_Allgather(&len, 1, MPI_UNSIGNED_LONG_LONG, lens.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  // Exchanged in rounds of at most 1 GiB per rank (MPI counts are ints).
  constexpr unsigned long long kRound = 1ull << 30;
  std::vector<std::string> out(g_world.size);
  for (int r = 0; r < n; ++r) out[r].resize(lens[r]);
  for (unsigned long long at = 0;; at += kRound) {
    std::vector<int> counts(n), displs(n);
    unsigned long long total = 0;
    for (int r = 0; r < n; ++r) {
      counts[r] = static_cast<int>(lens[r] > at ? std::min(kRound, lens[r] - at) : 0);
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    if (total == 0) break;
    std::string buf(total, '\0');
    const int mine_n = counts[g_world.rank];
    MPI_Allgatherv(mine.data() + (mine_n ? at : 0), mine_n, MPI_CHAR, buf.data(), counts.data(), displs.data(),
                   MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < n; ++r) out[r].replace(at, counts[r], buf, displs[r], counts[r]);
  }
  return out;
#else
  throw std::logic_error("all_gather over several ranks in a build without MPI");
#endif
}

std::vector<std::size_t> my_share(std::size_t n) {
  std::vector<std::size_t> mine;
  for (std::size_t i = g_world.rank; i < n; i += g_world.size) mine.push_back(i);
  return mine;
}

std::vector<std::string> gather_shares(const std::vector<std::string>& mine, std::size_t n) {
  if (g_world.size == 1) return mine;
  std::string bytes;
  for (const std::string& one : mine) {
    const std::uint64_t len = one.size();
    bytes.append(reinterpret_cast<const char*>(&len), sizeof len);
    bytes += one;
  }
  const std::vector<std::string> gathered = all_gather(bytes);
  std::vector<std::string> all(n);
  for (unsigned r = 0; r < g_world.size; ++r) {
    std::string_view from = gathered[r];
    for (std::size_t i = r; i < n; i += g_world.size) {
      std::uint64_t len = 0;
      std::memcpy(&len, from.data(), sizeof len);
      all[i] = std::string(from.substr(sizeof len, len));
      from.remove_prefix(sizeof len + len);
    }
  }
  return all;
}

void quiet_followers() {
  if (leads()) return;
  std::fflush(stdout);
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0 && null != STDOUT_FILENO) {
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
}

std::uint64_t all_to_all(const std::vector<std::string>& to_rank, std::uint64_t value,
                         std::vector<std::string>& from_rank) {
  from_rank.resize(g_world.size);
  if (g_world.size == 1) {
    from_rank[0] = to_rank[0];
    return value;
  }
#ifdef KBSIM_WITH_MPI
  const int n = static_cast<int>(g_world.size);
  // First each pair's byte count, every rank's value and how much it sends in all; then the bytes, unless no rank
  // sends any (a window of a split run often carries nothing across: one collective instead of two). The buffers
  // are kept from call to call (one thread calls: MPI is initialised single-threaded), at the largest size yet.
  static std::vector<unsigned long long> head, got;
  static std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  static std::string out_buf, in_buf;
  head.assign(3 * g_world.size, 0);
  got.assign(3 * g_world.size, 0);
  unsigned long long total = 0;
  for (const std::string& s : to_rank) total += s.size();
  for (int r = 0; r < n; ++r) {
    head[3 * r] = to_rank[r].size();
    head[3 * r + 1] = value;
    head[3 * r + 2] = total;
  }
  MPI_Alltoall(head.data(), 3, MPI_UNSIGNED_LONG_LONG, got.data(), 3, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  send_counts.assign(n, 0);
  send_displs.assign(n, 0);
  recv_counts.assign(n, 0);
  recv_displs.assign(n, 0);
  unsigned long long sent = 0, received = 0, anyone = 0;
  for (int r = 0; r < n; ++r) {
    value = std::min<std::uint64_t>(value, got[3 * r + 1]);
    anyone += got[3 * r + 2];
    send_displs[r] = static_cast<int>(sent);
    recv_displs[r] = static_cast<int>(received);
    send_counts[r] = static_cast<int>(head[3 * r]);
    recv_counts[r] = static_cast<int>(got[3 * r]);
    sent += head[3 * r];
    received += got[3 * r];
  }
  for (std::string& s : from_rank) s.clear();
  if (anyone == 0) return value;
  // (decided on what every rank knows, so every rank throws or none)
  if (anyone > static_cast<unsigned long long>(INT_MAX))
    throw SimError("more than 2 GiB cross between ranks in one exchange");
  out_buf.clear();
  for (const std::string& s : to_rank) out_buf += s;
  in_buf.resize(received);
  MPI_Alltoallv(out_buf.data(), send_counts.data(), send_displs.data(), MPI_CHAR, in_buf.data(), recv_counts.data(),
                recv_displs.data(), MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < n; ++r) from_rank[r].assign(in_buf, recv_displs[r], recv_counts[r]);
  return value;
#else
  throw std::logic_error("all_to_all over several ranks in a build without MPI");
#endif
}

void abort(int code) {
#ifdef KBSIM_WITH_MPI
  if (g_world.mpi && g_world.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

}  // namespace kbsim::core::cluster
