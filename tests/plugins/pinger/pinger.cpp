// The SDK guide's pinger (sdk/README.md, section 2), built as a test plugin: the C++ twin of
// examples/python_plugins/pinger.py. python/tests/test_plugin_blocks.py checks that the code below is the guide's.

#include "kbsim/plugin.hpp"

namespace {

struct Ping final : kbsim::Message {
  static constexpr std::string_view kName = "acme.Ping";  // errors and port declarations name it
  static constexpr kbsim::TypeId kType = kbsim::type_id(kName);
  Ping() : Message(kType) {}
  kbsim::Tick sent_at = 0;
};

// Each parameter is declared once: info() lists it, the component reads it.
constexpr kbsim::StringParam kSendTo{"send_to", "", "destination node id; empty: only receive"};
constexpr kbsim::IntParam kCount{"count", 4, "pings to send"};
constexpr kbsim::FloatParam kInterval{"interval_ns", 10.0, "time between pings"};
constexpr kbsim::IntParam kPingBytes{"ping_bytes", 64, "payload bytes per ping"};

class Pinger final : public kbsim::Component {
 public:
  explicit Pinger(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        interval_(kbsim::ns_to_ticks(params().get(kInterval))),
        sent_(stat(kStatSent)),
        received_(stat(kStatReceived)),
        latency_(stat(kStatLatency)) {
    params().check(params().get(kCount) >= 0, kCount, "must be >= 0");
  }

  // Each statistic is declared once: info() lists it, the constructor binds it.
  static constexpr kbsim::StatDef kStatSent{"sent", kbsim::StatKind::kCounter, "pings", "pings sent"};
  static constexpr kbsim::StatDef kStatReceived{"received", kbsim::StatKind::kCounter, "pings", "pings received"};
  static constexpr kbsim::StatDef kStatLatency{"latency_mean_ns", kbsim::StatKind::kValue, "ns", "mean ping latency"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "acme_pinger";
    i.summary = "sends pings to another node and measures their latency";
    i.params = {kSendTo, kCount, kInterval, kPingBytes};
    i.ports = {{"*", "any link"}};
    i.stats = {kStatSent, kStatReceived, kStatLatency};
    return i;
  }

  void setup() override {  // the whole graph exists: routes can be computed
    const std::string& to = params().get(kSendTo);
    if (to.empty() || params().get(kCount) == 0) return;
    route_ = &route_to(find_node(to));
    schedule(0);  // on_timer at t = 0
  }

  void on_timer(std::uint64_t, kbsim::Ref<kbsim::Message>) override {
    auto ping = kbsim::make_message<Ping>();
    ping->bytes = static_cast<std::uint64_t>(params().get(kPingBytes));
    ping->route = route_;  // transit nodes follow it
    ping->sent_at = now();
    send(route_->ports.front(), std::move(ping));
    if (++sent_.count < static_cast<std::uint64_t>(params().get(kCount))) schedule(interval_);
  }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    const Ping& ping = msg->as<Ping>();  // throws on another payload type
    latency_.value += kbsim::ticks_to_ns(now() - ping.sent_at);
    ++received_.count;
  }

  void finish() override {
    if (received_.count > 0) latency_.value /= static_cast<double>(received_.count);
  }

 private:
  kbsim::Tick interval_;
  const kbsim::Route* route_ = nullptr;
  kbsim::Stat& sent_;
  kbsim::Stat& received_;
  kbsim::Stat& latency_;
};

}  // namespace

// The library's one entry point: its name, and every type it provides.
KBSIM_PLUGIN("acme_pinger") { kbsim::add_component<Pinger>(plugin); }
