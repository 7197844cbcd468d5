#include "run/workers.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "run/point_bytes.hpp"
#include "sim/watch.hpp"

namespace kbsim::core {

namespace {

/// A forked worker: it runs the points it is sent (each an 8-byte index on its `to` pipe) one after another and
/// answers each with an 8-byte length and the point's record on its `from` pipe; it ends when `to` is closed. So
/// what its runs cache (the route tables of the topologies it has built) serves its later points.
struct Worker {
  pid_t pid = -1;
  int to = -1, from = -1;
  bool busy = false;  ///< running `point`
  std::size_t point = 0;
  std::string bytes;  ///< its answer so far
};

bool read_all(int fd, void* into, std::size_t n) {
  auto* p = static_cast<char*>(into);
  while (n > 0) {
    const ssize_t k = ::read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

void write_all(int fd, const std::string& s) {
  std::size_t at = 0;
  while (at < s.size()) {
    const ssize_t k = ::write(fd, s.data() + at, s.size() - at);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;  // the parent is gone: nothing to tell
    at += static_cast<std::size_t>(k);
  }
}

PointRecord failed(std::string why) {
  PointRecord r;
  r.result.ok = false;
  r.result.error = std::move(why);
  return r;
}

}  // namespace

std::vector<PointRecord> run_parallel(std::size_t n, unsigned jobs,
                                      const std::function<PointRecord(std::size_t)>& run_one,
                                      const std::function<std::string(std::size_t)>& describe,
                                      const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<PointRecord> out(n);
  std::size_t done = 0;
  // Stopped from outside (Ctrl-C, SIGTERM, --max-wall): the points running finish as interrupted, none starts.
  auto not_run = [&](std::size_t i) { return failed(describe(i) + ": not run (the sweep was stopped)"); };
  if (jobs <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = watch::stop_requested() ? not_run(i) : run_one(i);
      if (progress) progress(++done, n);
    }
    return out;
  }
  std::fflush(nullptr);  // nothing buffered is written twice by the workers
  // A worker that is sent no more points reads the end of its pipe; one writing to a worker that died must not
  // kill this process.
  struct IgnorePipe {
    struct sigaction old {};
    IgnorePipe() {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      ::sigaction(SIGPIPE, &ign, &old);
    }
    ~IgnorePipe() { ::sigaction(SIGPIPE, &old, nullptr); }
  } ignore_pipe;
  std::vector<Worker> workers;
  std::size_t next = 0;
  auto finish = [&](std::size_t i, PointRecord r) {
    out[i] = std::move(r);
    if (progress) progress(++done, n);
  };
  // Give `w` the next point, or close its pipe when none is left (it then ends).
  auto give = [&](Worker& w) {
    while (next < n && watch::stop_requested()) finish(next, not_run(next)), ++next;
    w.busy = next < n;
    if (!w.busy) {
      if (w.to >= 0) ::close(w.to);
      w.to = -1;
      return;
    }
    w.point = next++;
    const std::uint64_t i = w.point;
    write_all(w.to, std::string(reinterpret_cast<const char*>(&i), sizeof i));
  };
  auto spawn = [&] {
    int to[2], from[2];
    if (::pipe(to) != 0) throw std::runtime_error(std::string("sweep: cannot make a pipe: ") + std::strerror(errno));
    if (::pipe(from) != 0) {
      const int err = errno;
      ::close(to[0]);
      ::close(to[1]);
      throw std::runtime_error(std::string("sweep: cannot make a pipe: ") + std::strerror(err));
    }
    std::fflush(nullptr);  // nothing buffered is written twice (a replacement starts after output)
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      for (int fd : {to[0], to[1], from[0], from[1]}) ::close(fd);
      throw std::runtime_error(std::string("sweep: cannot start a worker: ") + std::strerror(err));
    }
    if (pid == 0) {  // the worker: run points until told no more, leave without running the parent's exit handlers
      ::sigaction(SIGPIPE, &ignore_pipe.old, nullptr);  // as the parent had it
      for (const Worker& o : workers) {  // the others' pipes are theirs: an open end here would keep them waiting
        if (o.to >= 0) ::close(o.to);
        ::close(o.from);
      }
      ::close(to[1]);
      ::close(from[0]);
      std::uint64_t i = 0;
      while (read_all(to[0], &i, sizeof i)) {
        const auto point = static_cast<std::size_t>(i);
        std::string bytes;
        try {
          bytes = encode(run_one(point));
        } catch (const std::exception& e) {
          bytes = encode(failed(describe(point) + ": " + e.what()));
        } catch (...) {
          bytes = encode(failed(describe(point) + ": it threw something that is not a std::exception"));
        }
        const std::uint64_t len = bytes.size();
        std::fflush(nullptr);
        write_all(from[1], std::string(reinterpret_cast<const char*>(&len), sizeof len) + bytes);
      }
      ::_exit(0);
    }
    ::close(to[0]);
    ::close(from[1]);
    workers.push_back({pid, to[1], from[0], false, 0, {}});
    give(workers.back());
  };
  // If this run fails (a pipe or a fork refused), the workers are told to stop and waited for.
  struct Reap {
    std::vector<Worker>& workers;
    ~Reap() {
      for (Worker& w : workers) {
        if (w.to >= 0) ::close(w.to);
        ::close(w.from);
        while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
    }
  } reap{workers};
  while (workers.size() < jobs && next < n && !watch::stop_requested()) spawn();
  while (!workers.empty()) {
    std::vector<pollfd> fds;
    for (const Worker& w : workers) fds.push_back({w.from, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("sweep: poll failed: ") + std::strerror(errno));
    }
    for (std::size_t k = fds.size(); k-- > 0;) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = workers[k];
      char buf[1 << 16];
      const ssize_t got = ::read(w.from, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        w.bytes.append(buf, static_cast<std::size_t>(got));
        std::uint64_t len = 0;
        if (w.bytes.size() >= sizeof len) std::memcpy(&len, w.bytes.data(), sizeof len);
        if (!w.busy || w.bytes.size() < sizeof len || w.bytes.size() - sizeof len < len) continue;
        try {  // its answer is complete
          finish(w.point, decode(std::string_view(w.bytes).substr(sizeof len, len)));
        } catch (const std::exception& e) {
          finish(w.point, failed(describe(w.point) + ": " + e.what()));
        }
        w.bytes.clear();
        give(w);
        continue;
      }
      // The end of its output: it has ended, after its last point or in the middle of one.
      ::close(w.from);
      if (w.to >= 0) ::close(w.to);
      int status = 0;
      while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      const bool lost = w.busy;
      const std::size_t point = w.point;
      workers.erase(workers.begin() + static_cast<std::ptrdiff_t>(k));
      if (!lost) continue;
      if (WIFSIGNALED(status)) {
        finish(point, failed(describe(point) + ": its worker process was killed by signal " +
                             std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")"));
      } else {
        finish(point, failed(describe(point) + ": its worker process ended with exit code " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " (its message is above)"));
      }
      if (next < n && !watch::stop_requested()) spawn();  // the points left need a worker in its place
    }
  }
  while (next < n) finish(next, not_run(next)), ++next;
  return out;
}

}  // namespace kbsim::core
