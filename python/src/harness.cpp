#include "harness.hpp"

#include <pybind11/stl.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "block.hpp"
#include "channel.hpp"
#include "kbsim/testing.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

/// A neighbour that keeps what reaches it: (time, message).
class Recorder final : public testkit::Neighbour {
 public:
  void received(Tick at, Message& msg) override { got.emplace_back(at, Ref<Message>(&msg)); }
  std::vector<std::pair<Tick, Ref<Message>>> got;
  Alive alive;  ///< its harness's system
};

struct PyHarness {
  std::deque<Recorder> neighbours;  // the harness keeps their addresses (so it goes first)
  std::unique_ptr<testkit::Harness> h;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);  // of its system, for the routes of what it recorded
  PyHarness() = default;
  PyHarness(PyHarness&&) = default;
  ~PyHarness() {
    if (alive) *alive = false;
  }
};

std::vector<std::pair<std::string, ParamValue>> values_of(const py::dict& params) {
  std::vector<std::pair<std::string, ParamValue>> out;
  for (const auto& [k, v] : params) {
    const std::string name = py::str(k);
    if (py::isinstance<py::bool_>(v))
      out.emplace_back(name, v.cast<bool>());
    else if (py::isinstance<py::int_>(v))
      out.emplace_back(name, v.cast<std::int64_t>());
    else if (py::isinstance<py::float_>(v))
      out.emplace_back(name, v.cast<double>());
    else
      out.emplace_back(name, py::str(v).cast<std::string>());
  }
  return out;
}

testkit::Link link_of(const py::dict& d) {
  testkit::Link l;
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    if (key == "bandwidth_gbs")
      l.bandwidth_gbs = v.cast<double>();
    else if (key == "latency_ns")
      l.latency_ns = v.cast<double>();
    else if (key == "flit_bytes")
      l.flit_bytes = v.cast<std::uint32_t>();
    else
      throw py::key_error("a link has bandwidth_gbs, latency_ns and flit_bytes, not '" + key + "'");
  }
  return l;
}

/// Run `fn`: a kbsim error it throws is raised as its kbsim.Error subclass (a bad parameter: kbsim.ConfigError).
void guarded(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    raise(static_cast<int>(e.code()), e.what());
  }
}

}  // namespace

void bind_harness(py::module_& m) {
  py::class_<Recorder>(m, "HarnessNeighbour").def_property_readonly("received", [](const Recorder& r) {
    py::list out;
    for (const auto& [at, msg] : r.got) out.append(py::make_tuple(ticks_to_ns(at), message_object(msg, r.alive)));
    return out;
  });
  py::class_<PyHarness>(m, "Harness")
      .def(py::init([](const std::vector<std::string>& plugins, const std::vector<std::string>& components,
                       const std::string& id) {
             testkit::Options o;
             for (const auto& p : plugins) o.plugin_dirs.emplace_back(p);
             for (const auto& c : components) o.components_files.emplace_back(c);
             o.id = id;
             PyHarness h;
             guarded([&] { h.h = std::make_unique<testkit::Harness>(std::move(o)); });
             return h;
           }),
           py::arg("plugins"), py::arg("components"), py::arg("id"))
      .def("component", [](PyHarness& h, const std::string& impl,
                           const py::dict& params) { guarded([&] { h.h->component(impl, values_of(params)); }); })
      .def("block",
           [](PyHarness& h, const std::string& file, const py::handle& declared, const py::dict& params) {
             ComponentType type = component_type(file, declared);
             const std::string name = type.info.type;
             const std::string library = std::filesystem::path(file).filename().string();
             guarded([&] {
               h.h->add_component_type(std::move(type), library);
               h.h->component_type(library, name, values_of(params));
             });
           })
      .def(
          "neighbour",
          [](PyHarness& h, const std::string& id, const std::string& kind, const py::dict& to, const py::dict& from) {
            Recorder& r = h.neighbours.emplace_back();
            r.alive = h.alive;
            guarded([&] { h.h->neighbour(id, kind, r, link_of(to), link_of(from)); });
            return &r;
          },
          py::return_value_policy::reference_internal)
      .def("build", [](PyHarness& h) { guarded([&] { h.h->build(); }); })
      .def("inject",
           [](PyHarness& h, double at_ns, const std::string& from, const py::handle& msg, const std::string& to) {
             guarded([&] { h.h->inject(ns_to_ticks(at_ns), from, message_ref(msg), to); });
           })
      .def("run", [](PyHarness& h,
                     double until_ns) { guarded([&] { h.h->run(until_ns < 0 ? kNever : ns_to_ticks(until_ns)); }); })
      .def_property_readonly("now_ns", [](const PyHarness& h) { return ticks_to_ns(h.h->now()); })
      .def("stat", [](const PyHarness& h, const std::string& name) {
        const Stat* s = nullptr;
        guarded([&] { s = &h.h->stat(name); });
        return py::make_tuple(s->count, s->value);
      });
}

}  // namespace kbsim::python
