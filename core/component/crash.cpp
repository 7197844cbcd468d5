#include "component/crash.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

#include "component/simulation.hpp"
#include "kbsim/text.hpp"
#include "plugin/registry.hpp"

namespace kbsim::core::crash {

NodeIndex g_node = kNoNode;

std::string library_of(const Simulation& sim, NodeIndex n) {
  const auto& node = sim.elaboration()->nodes[n];
  return node.impl + ", library " + node.library;
}

void guarded(const Simulation& sim, NodeIndex n, const char* stage, const std::function<void()>& f) {
  struct Named {  // a fatal signal in the component's own code names it, as during dispatch
    const Simulation* outer = dispatching();
    NodeIndex outer_node = g_node;
    Named(const Simulation* s, NodeIndex node) {
      set_dispatch(s);
      g_node = node;
    }
    ~Named() {
      set_dispatch(outer);
      g_node = outer_node;
    }
  } named(&sim, n);
  auto fault = [&](const std::string& what) {
    throw PluginError("t=" + format_ns(ticks_to_ns(sim.now())) + " ns: " + sim.elaboration()->nodes[n].id + " (" +
                      library_of(sim, n) + "): " + stage + " failed: " + what);
  };
  try {
    f();
  } catch (const Error&) {
    throw;  // a configuration or simulation error the component raised on purpose: already one line
  } catch (const std::exception& e) {
    fault(e.what());
  } catch (...) {
    fault("it threw something that is not a std::exception");
  }
}

namespace {
const Simulation* g_sim = nullptr;
const char* g_bench = nullptr;

/// A fixed buffer filled without allocating (usable in a signal handler).
struct Line {
  char buf[768];
  std::size_t n = 0;
  void add(const char* s) {
    for (; s && *s && n + 1 < sizeof buf; ++s) buf[n++] = (*s >= 0x20 && *s != 0x7f) ? *s : '?';
  }
  void add_uint(std::uint64_t v, int min_digits = 1) {
    char d[24];
    int k = 0;
    do {
      d[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v || k < min_digits);
    while (k && n + 1 < sizeof buf) buf[n++] = d[--k];
  }
};

const char* name_of(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic fault)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort)";
    default: return "a fatal signal";
  }
}

void on_fatal(int sig) {
  Line l;
  l.add("kbsim: error: CRASH: ");
  l.add(name_of(sig));
  if (const Simulation* s = g_sim; s && g_node != kNoNode && g_node < s->elaboration()->nodes.size()) {
    const Simulation::Node& n = s->elaboration()->nodes[g_node];
    l.add(" in component ");
    l.add(n.id.c_str());
    l.add(" (");
    l.add(n.impl.c_str());
    l.add(", library ");
    l.add(n.library.c_str());
    l.add(") at t=");
    const Tick t = s->now();
    l.add_uint(t / kPsPerNs);
    l.add(".");
    l.add_uint(t % kPsPerNs, 3);
    l.add(" ns");
  } else if (const char* library = library_being_loaded()) {
    l.add(" in plugin library ");
    l.add(library);
    l.add(" while it was loaded (its static initializers or entry point)");
  } else if (g_bench) {
    l.add(" in bench ");
    l.add(g_bench);
  }
  l.buf[l.n++] = '\n';  // add() leaves one byte free for it
  [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, l.buf, l.n);
  ::_exit(static_cast<int>(ExitCode::kCrash));
}
}  // namespace

void install() noexcept {
  static char stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = &on_fatal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

void set_bench(const char* name) noexcept { g_bench = name; }
const char* bench() noexcept { return g_bench; }
const Simulation* dispatching() noexcept { return g_sim; }
void set_dispatch(const Simulation* sim) noexcept {
  g_sim = sim;
  g_node = kNoNode;
}

}  // namespace kbsim::core::crash
