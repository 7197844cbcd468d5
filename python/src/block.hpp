// Hardware blocks written in Python, for prototyping (kbsim/_blocks.py): a Component whose setup, on_message,
// on_timer and finish call the Python object's, on the thread's Python stack with the interpreter's lock. The
// Python object reaches its component through a BlockCore (now, send, schedule, routes, statistics). Messages it
// makes are python.Message: a size, a route, and any picklable Python value, which a split run pickles across.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "kbsim/component.hpp"
#include "kbsim/message.hpp"
#include "kbsim/plugin.hpp"

namespace kbsim::python {

/// A message made by Python code: `data` is any Python value (a picklable one to cross between processes).
struct PyMessage final : Message {
  static constexpr std::string_view kName = "python.Message";
  static constexpr TypeId kType = type_id(kName);
  PyMessage() : Message(kType) {}
  ~PyMessage() override;
  PyMessage(const PyMessage&) = delete;
  PyMessage& operator=(const PyMessage&) = delete;
  void save(ByteWriter& w) const override;
  void load(ByteReader& r) override;

  PyObject* data = nullptr;  ///< a reference of its own
};

/// Whether the system a route, a statistic or a message's route belongs to still exists: Python may keep them
/// longer (a block's attributes, a harness's records), and reading them then raises instead of reading freed memory.
using Alive = std::shared_ptr<const bool>;

class PythonBlock final : public Component {
 public:
  PythonBlock(const ComponentContext& ctx, std::string file, const std::string& type);
  ~PythonBlock() override;
  PythonBlock(const PythonBlock&) = delete;
  PythonBlock& operator=(const PythonBlock&) = delete;

  void setup() override;
  void on_message(PortIndex in, Ref<Message> msg) override;
  void on_timer(std::uint64_t tag, Ref<Message> msg) override;
  void finish() override;

  // What the Python object calls (BlockCore).
  Tick time() const noexcept { return now(); }
  const Params& parameters() const noexcept { return params(); }
  std::span<const Port> ins() const noexcept { return in_ports(); }
  std::span<const Port> outs() const noexcept { return out_ports(); }
  void send_message(PortIndex out, Ref<Message> msg, Tick delay);
  EventId schedule_timer(Tick delay, std::uint64_t tag, Ref<Message> msg) {
    return schedule(delay, tag, std::move(msg));
  }
  void cancel_timer(EventId id) noexcept { cancel(id); }
  const Route& route(const std::string& to, const std::string& view);
  NodeIndex node(const std::string& id) const { return find_node(id); }
  std::string_view name_of(NodeIndex n) const noexcept { return node_id(n); }
  Stat& statistic(const std::string& name);
  std::string rejection(const std::string& param, const std::string& what) const;
  std::string failure(const std::string& what) const;
  Alive alive() const noexcept { return alive_; }

 private:
  std::string file_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  pybind11::object obj_;  // the Python block (kbsim.Block)
};

/// The component type a plugin file declares, as kbsim._plugins.load_file lists it: ("component", type, summary,
/// params, (ports, stats)).
ComponentType component_type(const std::string& file, const pybind11::handle& declared);

/// A message as Python holds it (kbsim.Message; its route readable while `alive`), and back.
pybind11::object message_object(Ref<Message> msg, Alive alive);
Ref<Message> message_ref(const pybind11::handle& msg);

/// The classes blocks use: BlockCore, Message, Route, StatValue.
void bind_blocks(pybind11::module_& m);

}  // namespace kbsim::python
