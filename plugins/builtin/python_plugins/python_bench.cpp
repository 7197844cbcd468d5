#include "python_bench.hpp"

#include <pybind11/embed.h>

#include <exception>
#include <variant>

#include "channel.hpp"
#include "kbsim/errors.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

py::dict to_dict(const Params& params) {
  py::dict out;
  for (const ParamEntry& e : params.entries())
    out[py::str(e.name)] = std::visit([](const auto& v) { return py::cast(v); }, e.value);
  return out;
}

}  // namespace

void PythonBench::run(BenchContext& ctx) {
  auto channel = std::make_shared<Channel>();
  py::object thread;
  {
    const py::gil_scoped_acquire gil;
    thread = py::module_::import("kbsim._plugins")
                 .attr("start_bench")(file_, name_, to_dict(ctx.params()), to_dict(ctx.flags()), py::cast(channel));
  }
  std::exception_ptr failed;
  try {
    channel->serve(ctx, /*build=*/false);
  } catch (...) {
    failed = std::current_exception();
  }
  // Python's thread waits for the end (its close or its error was the last order), or is told the bench failed.
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
  {
    const py::gil_scoped_acquire gil;
    thread.attr("join")();
    thread = py::object();
    py::module_::import("sys").attr("stdout").attr("flush")();
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace kbsim::python
