#include "block.hpp"

#include <pybind11/stl.h>

#include <utility>
#include <vector>

#include "channel.hpp"
#include "kbsim/bytes.hpp"
#include "kbsim/errors.hpp"
#include "python_stack.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

/// References of messages' data that ended while Python was not running: let go of the next time it runs.
std::vector<PyObject*>& released() {
  thread_local std::vector<PyObject*> objects;
  return objects;
}

void let_go() {  // needs the interpreter's lock
  std::vector<PyObject*>& r = released();
  while (!r.empty()) {
    PyObject* o = r.back();
    r.pop_back();
    Py_DECREF(o);
  }
}

/// A message as Python holds it.
struct MessageRef {
  Ref<Message> ref;
  Alive alive;  ///< of the system its route belongs to (none: it has no route Python gave it)
};

/// A route or a statistic as Python holds it: readable while its system exists.
template <class T>
struct Held {
  T* item;
  Alive alive;
  T& get() const {
    if (!alive || !*alive) throw py::value_error("the system this belongs to no longer exists (its run has ended)");
    return *item;
  }
};
using RouteRef = Held<const Route>;
using StatRef = Held<Stat>;

/// Python code of the block's file, with the lock: messages' data let go of first.
void in_python(const std::string& file, const std::function<void()>& fn) {
  call_python(file, [&] {
    let_go();
    fn();
  });
}

}  // namespace

PyMessage::~PyMessage() {
  if (!data) return;
  if (PyGILState_Check())
    Py_DECREF(data);  // Python is running (it let go of the message): let go of its data now
  else
    released().push_back(data);  // the next time Python runs
}

void PyMessage::save(ByteWriter& w) const {
  std::string bytes, error;
  on_python_stack([&] {
    const py::gil_scoped_acquire gil;
    py::object value = data ? py::reinterpret_borrow<py::object>(data) : py::none();
    try {
      bytes = py::module_::import("pickle").attr("dumps")(value, 4).cast<std::string>();
    } catch (py::error_already_set& e) {
      error = py::str(e.value()).cast<std::string>();
    }
  });
  if (!error.empty())
    throw SimError("a python.Message sent by " + std::string(sender()) +
                   " must cross between the processes of a split run, but its data cannot be pickled: " + error);
  w.put_string(bytes);
}

void PyMessage::load(ByteReader& r) {
  const std::string_view bytes = r.get_bytes();
  std::string error;
  on_python_stack([&] {
    const py::gil_scoped_acquire gil;
    try {
      py::object value = py::module_::import("pickle").attr("loads")(py::bytes(bytes.data(), bytes.size()));
      if (data) Py_DECREF(data);
      data = value.is_none() ? nullptr : value.release().ptr();
    } catch (py::error_already_set& e) {
      error = py::str(e.value()).cast<std::string>();
    }
  });
  if (!error.empty())
    throw SimError("a python.Message that crossed from another process cannot be unpickled here: " + error);
}

PythonBlock::PythonBlock(const ComponentContext& ctx, std::string file, const std::string& type)
    : Component(ctx), file_(std::move(file)) {
  in_python(file_, [&] { obj_ = py::module_::import("kbsim._plugins").attr("make_block")(file_, type, this); });
}

PythonBlock::~PythonBlock() {
  *alive_ = false;  // its routes and statistics, kept by Python, say so when read
  on_python_stack([this] {
    const py::gil_scoped_acquire gil;
    try {
      if (obj_) obj_.attr("_c") = py::none();  // a block kept by Python outlives its component: it says so if used
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("kbsim: letting go of a Python block");
    }
    obj_ = py::object();
    let_go();
  });
}

void PythonBlock::setup() {
  in_python(file_, [&] { obj_.attr("setup")(); });
}

void PythonBlock::on_message(PortIndex in, Ref<Message> msg) {
  in_python(file_, [&] { obj_.attr("on_message")(in, MessageRef{std::move(msg), alive_}); });
}

void PythonBlock::on_timer(std::uint64_t tag, Ref<Message> msg) {
  in_python(file_, [&] {
    obj_.attr("on_timer")(tag, msg ? py::cast(MessageRef{std::move(msg), alive_}) : py::none());
  });
}

void PythonBlock::finish() {
  in_python(file_, [&] { obj_.attr("finish")(); });
}

void PythonBlock::send_message(PortIndex out, Ref<Message> msg, Tick delay) {
  if (out >= outs().size())
    throw py::index_error("send: out-port " + std::to_string(out) + " of " + std::string(id()) + ", which has " +
                          std::to_string(outs().size()));
  send(out, std::move(msg), delay);
}

const Route& PythonBlock::route(const std::string& to, const std::string& view) {
  return route_to(find_node(to), view.empty() ? ViewId{0} : find_view(view));
}

Stat& PythonBlock::statistic(const std::string& name) {
  return stat(StatDef{name.c_str(), StatKind::kCounter, "", ""});
}

std::string PythonBlock::rejection(const std::string& param, const std::string& what) const {
  try {
    params().check(false, param, what);
  } catch (const ConfigError& e) {
    return e.what();  // where the value was given, as a C++ component's check says it
  }
  return what;
}

std::string PythonBlock::failure(const std::string& what) const {
  try {
    fail(what);
  } catch (const SimError& e) {
    return e.what();  // the words a C++ component's fail() would use
  }
}

py::object message_object(Ref<Message> msg, Alive alive) {
  return py::cast(MessageRef{std::move(msg), std::move(alive)});
}

Ref<Message> message_ref(const py::handle& msg) { return msg.cast<const MessageRef&>().ref; }

ComponentType component_type(const std::string& file, const py::handle& declared) {
  auto [kind, name, summary, params, extra] =
      declared.cast<std::tuple<std::string, std::string, std::string, py::list, py::tuple>>();
  auto [ports, stats] =
      extra.cast<std::pair<std::vector<std::pair<std::string, std::string>>,
                           std::vector<std::tuple<std::string, std::string, std::string, std::string>>>>();
  ComponentInfo info{name, summary, param_specs(params), {}, {}, false, false, {}};
  for (auto& [label, doc] : ports) info.ports.push_back({std::move(label), std::move(doc)});
  for (auto& [stat, stat_kind, unit, doc] : stats)
    info.stats.push_back({std::move(stat), stat_kind == "value" ? StatKind::kValue : StatKind::kCounter,
                          std::move(unit), std::move(doc)});
  return {std::move(info), [file, type = name](const ComponentContext& c) { return new PythonBlock(c, file, type); }};
}

void bind_blocks(py::module_& m) {
  // A kbsim error of a call Python makes (no path to a node: ConfigError) is raised as its kbsim.Error subclass,
  // keeping its exit code.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): the signature pybind11 takes
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      set_error(static_cast<int>(e.code()), e.what());
    }
  });
  py::class_<RouteRef>(m, "Route")
      .def_property_readonly("nodes", [](const RouteRef& r) { return r.get().nodes; })
      .def_property_readonly("ports", [](const RouteRef& r) { return r.get().ports; })
      .def_property_readonly("cost", [](const RouteRef& r) { return r.get().cost; });
  py::class_<StatRef>(m, "StatValue")
      .def_property(
          "count", [](const StatRef& s) { return s.get().count; },
          [](const StatRef& s, std::uint64_t v) { s.get().count = v; })
      .def_property(
          "value", [](const StatRef& s) { return s.get().value; },
          [](const StatRef& s, double v) { s.get().value = v; });
  py::class_<MessageRef>(m, "Message")
      .def(py::init([](std::uint64_t bytes, const py::object& data, const RouteRef* route, bool request_channel) {
             auto msg = make_message<PyMessage>();
             msg->bytes = bytes;
             msg->route = route ? &route->get() : nullptr;
             msg->request_channel = request_channel;
             if (!data.is_none()) msg->data = data.inc_ref().ptr();
             return MessageRef{std::move(msg), route ? route->alive : nullptr};
           }),
           py::arg("bytes") = 0, py::arg("data") = py::none(), py::arg("route") = nullptr,
           py::arg("request_channel") = false)
      .def_property(
          "bytes", [](const MessageRef& m) { return m.ref->bytes; },
          [](MessageRef& m, std::uint64_t b) { m.ref->bytes = b; })
      .def_property(
          "route",
          [](const MessageRef& m) -> py::object {
            if (!m.ref->route || !m.alive) return py::none();
            return py::cast(RouteRef{m.ref->route, m.alive});
          },
          [](MessageRef& m, const RouteRef* r) {
            m.ref->route = r ? &r->get() : nullptr;
            m.alive = r ? r->alive : nullptr;
          })
      .def_property_readonly("type", [](const MessageRef& m) { return std::string(m.ref->type_name()); })
      .def_property_readonly("sender", [](const MessageRef& m) { return std::string(m.ref->sender()); })
      .def_property_readonly("data", [](const MessageRef& m) -> py::object {
        if (!m.ref->is<PyMessage>()) return py::none();
        PyObject* d = static_cast<PyMessage&>(*m.ref).data;
        return d ? py::reinterpret_borrow<py::object>(d) : py::none();
      });
  auto ports = [](std::span<const Port> ps) {
    py::list out;
    for (const Port& p : ps) out.append(py::make_tuple(std::string(p.label), std::string(p.peer)));
    return out;
  };
  py::class_<PythonBlock, std::unique_ptr<PythonBlock, py::nodelete>>(m, "BlockCore")
      .def_property_readonly("id", [](const PythonBlock& b) { return std::string(b.id()); })
      .def_property_readonly("now", &PythonBlock::time)
      .def_property_readonly("params", [](const PythonBlock& b) { return params_dict(b.parameters()); })
      .def_property_readonly("in_ports", [ports](const PythonBlock& b) { return ports(b.ins()); })
      .def_property_readonly("out_ports", [ports](const PythonBlock& b) { return ports(b.outs()); })
      .def("send", [](PythonBlock& b, PortIndex out, const MessageRef& msg,
                      double delay_ns) { b.send_message(out, msg.ref, ns_to_ticks(delay_ns)); })
      .def("schedule",
           [](PythonBlock& b, double delay_ns, std::uint64_t tag, const py::object& msg) {
             const EventId e = b.schedule_timer(ns_to_ticks(delay_ns), tag,
                                                msg.is_none() ? kbsim::Ref<Message>() : msg.cast<MessageRef&>().ref);
             return py::make_tuple(e.slot, e.generation);
           })
      .def("cancel",
           [](PythonBlock& b, std::pair<std::uint32_t, std::uint32_t> e) {
             b.cancel_timer({e.first, e.second});
           })
      .def("route_to",
           [](PythonBlock& b, const std::string& to, const std::string& view) {
             return RouteRef{&b.route(to, view), b.alive()};
           })
      .def("find_node", &PythonBlock::node)
      .def("node_id", [](const PythonBlock& b, NodeIndex n) { return std::string(b.name_of(n)); })
      .def("stat",
           [](PythonBlock& b, const std::string& name) {
             return StatRef{&b.statistic(name), b.alive()};
           })
      .def("failure", &PythonBlock::failure)
      .def("rejection", &PythonBlock::rejection);
}

}  // namespace kbsim::python
