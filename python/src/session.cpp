#include "session.hpp"

#include <pybind11/stl.h>

#include "cli/common.hpp"
#include "kbsim/errors.hpp"
#include "sim/watch.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

thread_local Session* t_session = nullptr;  // the session whose run this thread runs

class SessionBench final : public Bench {
 public:
  static BenchInfo info() {
    BenchInfo i{"python-session",
                "the system a kbsim.Session drives from Python (open one with kbsim.Session(); not for the command "
                "line)",
                {}};
    i.reads_topology = true;
    return i;
  }
  void run(BenchContext& ctx) override {
    if (!t_session)
      throw BenchError("BAD_USE", "python-session is kbsim.Session's bench: open a kbsim.Session from Python");
    try {
      t_session->serve(ctx, /*build=*/true);
    } catch (...) {
      if (core::watch::stop_requested()) return;  // interrupted: what the session reached is its result
      throw;
    }
  }
};

}  // namespace

void add_session_bench() {
  cli::add_host_bench({SessionBench::info(), []() -> Bench* { return new SessionBench(); }});
}

Session::Session(std::vector<std::string> args) {
  args.insert(args.begin(), {"run", "--bench", "python-session"});
  job_ = std::make_unique<Job>(
      std::move(args), /*quiet=*/false, [this] { t_session = this; },
      [this](int code, const std::string& error) { post_end(code, error); });
  start();
}

Session::~Session() {
  if (!ended_) {
    const Silenced silenced;  // the run's summary is not printed for a session nobody closed
    {
      py::gil_scoped_release unlocked;
      post_close();
    }
    end();
  }
}

Event Session::order_quietly(Order o) {
  // The run's printed summary, once the bench has returned, is not Python's to see (results.json has it all).
  std::optional<Silenced> silenced;
  if (o.kind == Order::kClose) silenced.emplace();
  return order(std::move(o));
}

void Session::end() {
  Channel::end();
  if (job_) {
    py::gil_scoped_release unlocked;
    job_.reset();  // the run's thread has ended or is ending: another run may start
  }
}

void bind_session(py::module_& m) {
  py::class_<Session, Channel, std::shared_ptr<Session>>(m, "Session")
      .def(py::init<std::vector<std::string>>(), py::arg("args"))
      .def(
          "order",
          [](Session& s, int kind, int executor, const std::shared_ptr<Call>& call, std::string message) {
            return s.order_quietly(Order{static_cast<Order::Kind>(kind), executor, call, std::move(message), 0});
          },
          py::arg("kind"), py::arg("executor"), py::arg("call") = nullptr, py::arg("message") = "");
}

}  // namespace kbsim::python
