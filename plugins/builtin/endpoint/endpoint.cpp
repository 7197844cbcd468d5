// builtin.endpoint: a traffic source and sink. As a source it sends `count`
// packets of `send_bytes` to node `send_to` along the routed path, starting at
// `start_ns`, one every `interval_ns`. As a sink it records each packet's
// end-to-end latency.
#include <algorithm>

#include "kbsim/plugin.hpp"

namespace {

constexpr kbsim::NodeParam kSendTo{"send_to", "", "destination node id; empty: send nothing"};
constexpr kbsim::IntParam kSendBytes{"send_bytes", 4096, "payload bytes per packet"};
constexpr kbsim::IntParam kCount{"count", 1, "packets to send"};
constexpr kbsim::FloatParam kStartNs{"start_ns", 0.0, "time of the first packet"};
constexpr kbsim::FloatParam kIntervalNs{"interval_ns", 0.0, "time between packets (0: all at once)"};

struct Packet final : kbsim::Message {
  static constexpr std::string_view kName = "endpoint.Packet";
  static constexpr kbsim::TypeId kType = kbsim::type_id(kName);
  Packet() : Message(kType) {}
  kbsim::Tick sent_at = 0;
  void save(kbsim::ByteWriter& w) const override { w.put(sent_at); }
  void load(kbsim::ByteReader& r) override { sent_at = r.get<kbsim::Tick>(); }
};

class Endpoint final : public kbsim::Component {
 public:
  explicit Endpoint(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        sent_(stat(kStatSent)),
        received_(stat(kStatReceived)),
        bytes_(stat(kStatBytesReceived)),
        lat_min_(stat(kStatLatencyMinNs)),
        lat_max_(stat(kStatLatencyMaxNs)),
        lat_sum_(stat(kStatLatencySumNs)),
        last_(stat(kStatLastArrivalNs)) {
    const auto& p = params();
    p.check(p.get(kSendBytes) >= 0, kSendBytes, "must be >= 0");
    p.check(p.get(kCount) >= 0, kCount, "must be >= 0");
    p.check(p.get(kStartNs) >= 0, kStartNs, "must be >= 0");
    p.check(p.get(kIntervalNs) >= 0, kIntervalNs, "must be >= 0");
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatSent{"sent", kbsim::StatKind::kCounter, "packets", "packets sent"};
  static constexpr kbsim::StatDef kStatReceived{"received", kbsim::StatKind::kCounter, "packets", "packets received"};
  static constexpr kbsim::StatDef kStatBytesReceived{"bytes_received", kbsim::StatKind::kCounter, "bytes",
                                                     "payload bytes received"};
  static constexpr kbsim::StatDef kStatLatencyMinNs{"latency_min_ns", kbsim::StatKind::kValue, "ns",
                                                    "shortest end-to-end latency"};
  static constexpr kbsim::StatDef kStatLatencyMaxNs{"latency_max_ns", kbsim::StatKind::kValue, "ns",
                                                    "longest end-to-end latency"};
  static constexpr kbsim::StatDef kStatLatencySumNs{"latency_sum_ns", kbsim::StatKind::kValue, "ns",
                                                    "sum of end-to-end latencies"};
  static constexpr kbsim::StatDef kStatLastArrivalNs{"last_arrival_ns", kbsim::StatKind::kValue, "ns",
                                                     "arrival time of the last packet"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "endpoint";
    i.summary = "traffic source and sink: sends packets along routed paths and records their latency";
    i.params = {kSendTo, kSendBytes, kCount, kStartNs, kIntervalNs};
    i.ports = {{"*", "any link; packets leave on the first hop of their route"}};
    i.stats = {kStatSent,         kStatReceived,     kStatBytesReceived, kStatLatencyMinNs,
               kStatLatencyMaxNs, kStatLatencySumNs, kStatLastArrivalNs};
    return i;
  }

  void setup() override {
    const kbsim::NodeIndex to = params().get(kSendTo);  // the core checked it names a node
    if (to == kbsim::kNoNode || params().get(kCount) == 0) return;
    params().check(to != index(), kSendTo, "names this endpoint itself; give another node");
    route_ = &route_to(to);
    schedule(kbsim::ns_to_ticks(params().get(kStartNs)));
  }

  void on_timer(std::uint64_t, kbsim::Ref<kbsim::Message>) override {
    auto pkt = kbsim::make_message<Packet>();
    pkt->bytes = static_cast<std::uint64_t>(params().get(kSendBytes));
    pkt->route = route_;
    pkt->sent_at = now();
    send(route_->ports.front(), std::move(pkt));
    if (++sent_.count < static_cast<std::uint64_t>(params().get(kCount)))
      schedule(kbsim::ns_to_ticks(params().get(kIntervalNs)));
  }

  void on_message(kbsim::PortIndex, kbsim::Ref<kbsim::Message> msg) override {
    const Packet& pkt = msg->as<Packet>();
    double lat = kbsim::ticks_to_ns(now() - pkt.sent_at);
    lat_min_.value = received_.count == 0 ? lat : std::min(lat_min_.value, lat);
    lat_max_.value = std::max(lat_max_.value, lat);
    lat_sum_.value += lat;
    last_.value = kbsim::ticks_to_ns(now());
    ++received_.count;
    bytes_.count += pkt.bytes;
  }

 private:
  const kbsim::Route* route_ = nullptr;
  kbsim::Stat &sent_, &received_, &bytes_, &lat_min_, &lat_max_, &lat_sum_, &last_;
};

}  // namespace

KBSIM_PLUGIN("endpoint") {
  kbsim::add_component<Endpoint>(plugin);
  kbsim::add_message<Packet>(plugin);
}
