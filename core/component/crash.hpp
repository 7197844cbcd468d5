// A fatal signal inside a run (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) is
// still a crash, but it ends with one line saying whose: the component being
// dispatched (its implementation, library and the sim time), the plugin library
// being loaded (its static initializers or entry point), or the bench running,
// written async-signal-safely, then exit code 7 (ExitCode::kCrash).
#pragma once

#include <functional>
#include <string>

#include "kbsim/component.hpp"

namespace kbsim::core {
class Simulation;
}

namespace kbsim::core::crash {

/// Install the handlers (on an alternate stack, so a stack overflow is reported too).
void install() noexcept;
/// The bench whose code runs now (nullptr: none). The name must outlive the run.
void set_bench(const char* name) noexcept;
/// The simulation dispatching events now (nullptr: none), and the node whose handler runs.
void set_dispatch(const Simulation* sim) noexcept;
const Simulation* dispatching() noexcept;
/// The bench named now (to restore it after a nested run).
const char* bench() noexcept;
extern NodeIndex g_node;

/// Run plugin code of node `n` of `sim` (its factory, setup or finish) with the node named as during dispatch; any
/// fault other than a kbsim::Error becomes a PluginError naming the node, its implementation and library, the stage
/// and the sim time.
void guarded(const Simulation& sim, NodeIndex n, const char* stage, const std::function<void()>& f);
/// "impl, library name" of node `n`, for fault messages.
std::string library_of(const Simulation& sim, NodeIndex n);

}  // namespace kbsim::core::crash
