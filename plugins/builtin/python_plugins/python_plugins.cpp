// The loader of plugin files written in Python (sdk/README.md, "Write it in Python"). Discovery hands it each
// *.py file of the plugin directories (kbsim/plugin.hpp, PluginFileLoader); it starts CPython in this process on
// the first one (so a run that loads no Python plugin starts no interpreter), makes the package kbsim importable
// over this library's own bindings (the module kbsim._kbsim, as `import kbsim` has it, less what runs a command),
// runs the file, and registers what it declares.
#include <dlfcn.h>
#include <pthread.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <utility>

#include "block.hpp"
#include "channel.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/plugin.hpp"
#include "python_algorithm.hpp"
#include "python_bench.hpp"
#include "python_kernel.hpp"

namespace fs = std::filesystem;
namespace py = pybind11;

namespace kbsim::python {

namespace {

/// The package kbsim's parent folder: in the build tree, or installed, relative to this library.
fs::path package_parent() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&package_parent), &info) == 0 || info.dli_fname == nullptr)
    throw PluginError("python_plugins: cannot find its own library file");
  const fs::path here = fs::path(info.dli_fname).parent_path();
  for (const char* rel : {KBSIM_PACKAGE_FROM_BUILD, KBSIM_PACKAGE_FROM_INSTALL}) {
    fs::path p = (here / rel).lexically_normal();
    if (fs::exists(p / "kbsim" / "_plugins.py")) return p;
  }
  throw PluginError("python_plugins: the Python package kbsim is not beside this kbsim (looked in " +
                    (here / KBSIM_PACKAGE_FROM_BUILD).lexically_normal().string() + " and " +
                    (here / KBSIM_PACKAGE_FROM_INSTALL).lexically_normal().string() + ")");
}

PyModuleDef g_module_def{};

/// kbsim._kbsim for the embedded interpreter: the classes Python drives a bench with; what would run a command of
/// its own inside this one says it cannot.
py::module_ host_module() {
  py::module_ m = py::module_::create_extension_module(
      "kbsim._kbsim", "kbsim's bindings inside a kbsim process (Python plugins)", &g_module_def);
  bind_calls(m);
  bind_tl(m);
  bind_blocks(m);
  m.def("set_bin_dir", [](const std::string&) {});
  auto refuse = [](const py::args&, const py::kwargs&) {
    raise(static_cast<int>(ExitCode::kUsage),
          "a Python plugin runs inside a kbsim run: it cannot start another (kbsim.run, kbsim.Session); use its "
          "context's run_bench or run_points");
  };
  m.def("command_line", refuse);
  m.def("Session", refuse);
  return m;
}

// A sweep's points run in processes forked from the bench's thread (`-j N`), which does not hold the interpreter's
// lock: take it around the fork, so the child's interpreter is whole (no lock held by a thread it lacks) and its
// buffered output is not printed twice. A fork Python makes itself (os.fork, subprocess) prepares it on its own.
thread_local PyGILState_STATE t_fork_gil;
thread_local bool t_fork_held = false;

void flush(const char* stream) {
  if (PyObject* f = PySys_GetObject(stream)) {  // borrowed
    PyObject* r = PyObject_CallMethod(f, "flush", nullptr);
    Py_XDECREF(r);
    PyErr_Clear();
  }
}

void before_fork() {
  if (PyGILState_Check()) return;
  t_fork_gil = PyGILState_Ensure();
  t_fork_held = true;
  flush("stdout");
  flush("stderr");
  PyOS_BeforeFork();
}

void after_fork(bool child) {
  if (!std::exchange(t_fork_held, false)) return;
  child ? PyOS_AfterFork_Child() : PyOS_AfterFork_Parent();
  PyGILState_Release(t_fork_gil);
}

/// Start the interpreter (once) and make the package importable. A process whose interpreter kbsim did not start
/// (a kbsim.run from Python) loads no Python plugin in process: kbsim.run runs such a run as a kbsim process.
void start_python(const fs::path& file) {
  static std::once_flag once;
  static bool ours = false;
  std::call_once(once, [] {
    if (Py_IsInitialized()) return;
    ours = true;
    // Extension modules (numpy's) take the interpreter's symbols from the process: make them global, as they are
    // in the python3 executable (this library was loaded with its dependencies local).
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&Py_InitializeFromConfig), &info) != 0 && info.dli_fname != nullptr)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // Ctrl-C stays the run's (it stops the run)
    config.parse_argv = 0;
    // Set and dict orders of strings are the same in every run and on every rank of a split run (what an
    // algorithm's wiring or a block iterates), unless PYTHONHASHSEED says otherwise.
    if (std::getenv("PYTHONHASHSEED") == nullptr) {
      config.use_hash_seed = 1;
      config.hash_seed = 0;
    }
    // The interpreter this kbsim was built with (Debian's), whatever python3 comes first on PATH.
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, KBSIM_PYTHON_EXECUTABLE);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
      throw PluginError(std::string("python_plugins: the embedded Python cannot start: ") +
                        (status.err_msg ? status.err_msg : "?"));
    struct Release {  // however the rest goes, the lock is taken by whichever thread needs Python next
      ~Release() { PyEval_SaveThread(); }
    } release;
    pthread_atfork(
        &before_fork, [] { after_fork(false); }, [] { after_fork(true); });
    py::module_ sys = py::module_::import("sys");
    sys.attr("path").attr("insert")(0, package_parent().string());
    sys.attr("modules")["kbsim._kbsim"] = host_module();
    py::module_::import("kbsim._plugins");
  });
  if (!ours)
    throw PluginError(file.string() +
                      ": Python plugins run in a kbsim process, not in this interpreter (kbsim.run runs a run with "
                      "Python plugins as one; kbsim.testing.Harness tests a block of a plugin file with block(cls))");
}

const PluginDescriptor* load_here(const fs::path& file);

/// Python runs on the thread's Python stack, wherever discovery (or a first use mid-run) calls from.
const PluginDescriptor* load(const fs::path& file) {
  const PluginDescriptor* d = nullptr;
  on_python_stack([&] { d = load_here(file); });
  return d;
}

const PluginDescriptor* load_here(const fs::path& file) {
  try {
    start_python(file);
  } catch (py::error_already_set& e) {
    const py::gil_scoped_acquire gil;
    throw PluginError(file.string() + ": the embedded Python cannot start: " + py::str(e.value()).cast<std::string>());
  }
  const py::gil_scoped_acquire gil;
  py::list declared;
  try {
    declared = py::module_::import("kbsim._plugins").attr("load_file")(file.string());
  } catch (py::error_already_set& e) {
    if (e.matches(py::module_::import("kbsim._plugins").attr("PluginFileError")))
      throw PluginError(py::str(e.value()).cast<std::string>());
    throw PluginError(file.string() + ": " + py::str(e.value()).cast<std::string>());
  }
  static std::deque<PluginDescriptor> descriptors;  // alive until the process ends, as a library's
  static std::deque<std::string> names;
  const std::string& name = names.emplace_back(file.filename().string());
  PluginDescriptor& d = descriptors.emplace_back(
      PluginDescriptor{kAbiVersion, "python " PY_VERSION, name.c_str(), {}, {}, {}, {}, {}, {}, {}, {}, {}});
  const std::string path = fs::weakly_canonical(file).string();
  for (const py::handle& item : declared) {
    auto [kind, name, summary, params, extra] =
        item.cast<std::tuple<std::string, std::string, std::string, py::list, py::tuple>>();
    if (kind == "kernel") {
      d.extensions.push_back({std::string(kKernelExtension), name, summary,
                              std::make_shared<const tl::KernelFn>(python_kernel(path, name))});
    } else if (kind == "algorithm") {
      auto [topologies, kinds] = extra.cast<std::pair<std::vector<std::string>, std::vector<std::string>>>();
      ccl::add_algorithm(d, {name, summary, param_specs(params), std::move(topologies), std::move(kinds)},
                         [path, algo = name] { return new PythonAlgorithm(path, algo); });
    } else if (kind == "component") {
      d.components.push_back(component_type(path, item));
    } else if (kind == "bench") {
      BenchInfo info{name, summary, param_specs(params)};
      info.reads_topology = true;  // a Python bench runs on the configured system
      d.benches.push_back({std::move(info), [path, bench = name] { return new PythonBench(path, bench); }});
    }
  }
  return &d;
}

const PluginFileLoader g_loader{&load};

}  // namespace

}  // namespace kbsim::python

KBSIM_PLUGIN("python_plugins") {
  plugin.extensions.push_back(
      {std::string(kbsim::PluginFileLoader::kKind), "py",
       "runs plugin files written in Python (benches, kernels, CCL algorithms, blocks), in an embedded interpreter",
       std::shared_ptr<const void>(&kbsim::python::g_loader, [](const void*) {})});
  kbsim::add_message<kbsim::python::PyMessage>(plugin);  // a block's messages cross between split processes
}
