#include "python_bench.hpp"

#include <pybind11/embed.h>

#include <exception>
#include <variant>

#include "channel.hpp"
#include "kbsim/errors.hpp"
#include "python_kernel.hpp"

namespace py = pybind11;

namespace kbsim::python {

void PythonBench::run(BenchContext& ctx) {
  auto channel = std::make_shared<Channel>();
  struct Held {  // the run's Python object, let go of with the interpreter's lock however this ends
    py::object run;
    ~Held() {
      on_python_stack([this] {
        const py::gil_scoped_acquire gil;
        run = py::object();
      });
    }
  } held;
  py::object& run = held.run;
  on_python_stack([&] {
    const py::gil_scoped_acquire gil;
    run =
        py::module_::import("kbsim._plugins")
            .attr("start_bench")(file_, name_, params_dict(ctx.params()), params_dict(ctx.flags()), py::cast(channel));
  });
  std::exception_ptr failed;
  try {
    channel->serve(ctx, /*build=*/false);
  } catch (...) {
    failed = std::current_exception();
  }
  // Python's thread waits for the end (its close or its error was its last order), or is told the bench failed.
  std::string why;
  int code = 0;
  if (failed) {
    try {
      std::rethrow_exception(failed);
    } catch (const Error& e) {
      why = e.what();
      code = static_cast<int>(e.code());
    } catch (const std::exception& e) {
      why = e.what();
      code = static_cast<int>(ExitCode::kPlugin);
    } catch (...) {
      code = static_cast<int>(ExitCode::kInternal);
    }
  }
  channel->post_end(code, why);
  std::string bad_metrics;
  on_python_stack([&] {
    const py::gil_scoped_acquire gil;
    run.attr("join")();
    // The metrics the function left, however it ended (a run stopped by Ctrl-C or --max-wall keeps them).
    try {
      fill_metrics(ctx.metrics(), run.attr("metrics"));
    } catch (const py::builtin_exception& e) {
      bad_metrics = e.what();
    } catch (py::error_already_set& e) {
      bad_metrics = py::str(e.value()).cast<std::string>();
    }
  });
  if (failed) std::rethrow_exception(failed);
  if (!bad_metrics.empty()) throw std::runtime_error(file_ + ": " + bad_metrics);
}

}  // namespace kbsim::python
