// The op log of a split system (split/split_log.cpp), the ranks being threads: every rank's log holds the
// records of one process, in its order. In-process components: a fan that sends a wave of data operations on all
// its out-ports at once (the last port first), passers that hand each on at once (so their records tie with each
// other's at one instant, on two ranks), and sinks that keep what they get (their records stay open), one stopping
// the run at every n-th, one restarting each operation (op_resume) a while after it came.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "component/op_log.hpp"
#include "harness.hpp"
#include "kbsim/plugin.hpp"
#include "split/split_executor.hpp"
#include "thread_transport.hpp"

namespace kbsim {
namespace {

struct WavePayload final : OpPayload {
  static constexpr std::string_view kName = "test.split_log.wave";
  explicit WavePayload(std::uint32_t w) : wave(w) {}
  std::uint32_t wave;
  std::string_view payload_name() const noexcept override { return kName; }
  void save(ByteWriter& w) const override { w.put(wave); }
  static std::shared_ptr<const OpPayload> load(ByteReader& r) {
    return std::make_shared<WavePayload>(r.get<std::uint32_t>());
  }
};

struct Work final : Message {
  static constexpr std::string_view kName = "test.split_log.Work";
  static constexpr TypeId kType = type_id(kName);
  Work() : Message(kType, true) {}
  std::uint32_t wave = 0;
  bool describe_op(OpRecord& r) const override {
    r.kind = "memory";
    r.name = "work";
    r.param("wave", wave);
    r.data = std::make_shared<WavePayload>(wave);
    return true;
  }
  void save(ByteWriter& w) const override { w.put(wave); }
  void load(ByteReader& r) override { wave = r.get<std::uint32_t>(); }
};

class Fan : public Component {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_split_log_fan";
    i.summary = "every ns, a wave of work on all out-ports, the last port first";
    i.ports = {{"*", "any link"}};
    i.params = {param_int("waves", 1, "how many")};
    return i;
  }
  void setup() override { on_timer(0, {}); }  // (the first wave from setup: it crosses before the op log is on)
  void on_timer(std::uint64_t wave, Ref<Message>) override {
    for (PortIndex p = static_cast<PortIndex>(out_ports().size()); p-- > 0;) {
      auto w = make_message<Work>();
      w->wave = static_cast<std::uint32_t>(wave);
      send(p, std::move(w));
    }
    if (static_cast<std::int64_t>(wave) + 1 < params().get_int("waves")) schedule(ns_to_ticks(1), wave + 1);
  }
};

class Pass : public Component {
 public:
  using Component::Component;
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_split_log_pass";
    i.summary = "hands each message on at once";
    i.ports = {{"*", "any link"}};
    return i;
  }
  void on_message(PortIndex, Ref<Message> msg) override { send(0, std::move(msg)); }
};

class Sink : public Component {
 public:
  explicit Sink(const ComponentContext& c) : Component(c), core_(c.sim) {}
  static ComponentInfo info() {
    ComponentInfo i;
    i.type = "test_split_log_sink";
    i.summary = "keeps what it gets; stops the run at every n-th; restarts each a while after";
    i.ports = {{"*", "any link"}};
    i.params = {param_int("stop_every", 0, "0: never"), param_int("resume_ns", 0, "0: never")};
    return i;
  }
  void on_message(PortIndex, Ref<Message> msg) override {
    kept_.push_back(std::move(msg));  // (its record stays open; a message freed here would be made again there)
    if (const auto n = params().get_int("stop_every"); n > 0 && static_cast<std::int64_t>(kept_.size()) % n == 0)
      request_stop();
    if (const auto ns = params().get_int("resume_ns"); ns > 0) schedule(ns_to_ticks(ns), kept_.size() - 1);
  }
  void on_timer(std::uint64_t k, Ref<Message>) override { core_->op_resume(index(), *kept_[k]); }

 private:
  Simulator* core_;  ///< (op_resume, as a shared resource's service calls it)
  std::vector<Ref<Message>> kept_;
};

/// fan -> p0..p3 (1 ns) -> sink (2 ns), and fan -> keep (1 ns); the passers' records at each wave's instant tie
/// on everything but the order the fan sent to them.
constexpr const char* kTopology = R"(
nodes:
  - { id: fan, impl: test.fan, params: { waves: 12 } }
  - { id: p0, impl: test.pass }
  - { id: p1, impl: test.pass }
  - { id: p2, impl: test.pass }
  - { id: p3, impl: test.pass }
  - { id: sink, impl: test.sink, params: { stop_every: 7 } }
  - { id: keep, impl: test.sink, params: { resume_ns: 2 } }
edges:
  - { src: fan, dst: p0, latency_ns: 1 }
  - { src: fan, dst: p1, latency_ns: 1 }
  - { src: fan, dst: p2, latency_ns: 1 }
  - { src: fan, dst: p3, latency_ns: 1 }
  - { src: fan, dst: keep, latency_ns: 1 }
  - { src: p0, dst: sink, latency_ns: 2 }
  - { src: p1, dst: sink, latency_ns: 2 }
  - { src: p2, dst: sink, latency_ns: 2 }
  - { src: p3, dst: sink, latency_ns: 2 }
)";

/// A record as the log's readers see it, its payload read back.
struct Seen {
  std::uint64_t seq;
  std::string component, name;
  Tick start, end;
  std::uint32_t wave;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> seen(const core::OpLog& log) {
  std::vector<Seen> out;
  for (const OpRecord& r : log.records()) {
    const auto* p = dynamic_cast<const WavePayload*>(r.data.get());
    out.push_back({r.seq, std::string(r.component_id), r.name, r.t_start, r.t_end, p ? p->wave : ~0u});
  }
  return out;
}

/// What the bench does: three runs, each until the sink stops it, and a record of its own (as a host write is)
/// after each; then the job ends (after a stop, as when the bench returns). Returns, after each run, the records
/// open and the earliest start among them (what the data pass reads).
std::vector<std::pair<std::uint64_t, Tick>> drive(System& sim, core::OpLog& log) {
  std::vector<std::pair<std::uint64_t, Tick>> open;
  for (int k = 0; k < 3; ++k) {
    sim.run();
    open.emplace_back(log.open(), log.watermark());
    OpRecord host;
    host.component = sim.find_node("fan");
    host.component_id = sim.node_id(host.component);
    host.name = "host_write";
    host.t_start = host.t_end = sim.now();
    log.record(std::move(host));
  }
  sim.finish();
  return open;
}

class SplitLog : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = test::builtin_registry();
    reg_->add_component_type({Fan::info(), [](const ComponentContext& c) -> Component* { return new Fan(c); }});
    reg_->add_component_type({Pass::info(), [](const ComponentContext& c) -> Component* { return new Pass(c); }});
    reg_->add_component_type({Sink::info(), [](const ComponentContext& c) -> Component* { return new Sink(c); }});
    reg_->map_impl("test.fan", "(in-process)", "test_split_log_fan", "test");
    reg_->map_impl("test.pass", "(in-process)", "test_split_log_pass", "test");
    reg_->map_impl("test.sink", "(in-process)", "test_split_log_sink", "test");
    reg_->add_message_type({Work::kName, Work::kType, []() -> Ref<Message> { return make_message<Work>(); }});
    PluginDescriptor d{};
    add_payload<WavePayload>(d, "a wave number");
    reg_->add_extension(d.extensions.front());
  }
  std::unique_ptr<core::Registry> reg_;
};

TEST_F(SplitLog, EveryRankLogsTheRecordsOfOneProcessInItsOrder) {
  auto serial = test::build_system(*reg_, kTopology);
  core::OpLog want_log(true);
  serial->simulation().set_op_log(&want_log);
  const auto want_open = drive(*serial, want_log);
  const std::vector<Seen> want = seen(want_log);
  EXPECT_GT(want.size(), 3u * 7u);  // the passers' up to the third stop, and the bench's three
  EXPECT_GT(want_log.open(), 21u);  // the sinks' never end
  // At 1 ns, the fan's first wave reaches the passers in the order it sent them: the last port first.
  EXPECT_EQ(want[0].component, "p3");
  EXPECT_EQ(want[3].component, "p0");

  // Ranks by hand: the fan, p0, p2 and keep on rank 0; p1, p3 and the sink (which stops the runs) on rank 1, so
  // rank 0 runs past each stop (its passers log, keep starts and restarts there), and the passers tie across the cut.
  const auto& el = serial->simulation().elaboration();
  core::Partition part;
  part.ranks = 2;
  part.rank_of = {0, 0, 1, 0, 1, 1, 0};
  part.nodes_per_rank = {4, 3};
  part.cut_links = 4;
  part.lookahead = ns_to_ticks(1);
  std::vector<std::vector<Seen>> got(2);
  std::vector<std::uint64_t> open(2);
  std::vector<std::vector<std::pair<std::uint64_t, Tick>>> open_by_run(2);
  test::run_ranks(2, [&](unsigned r, test::ThreadTransport& net) {
    core::Split split{&part, r, &net};
    core::Simulation sim(el, *reg_, nullptr, core::split_executor(split));
    core::OpLog log(true);
    sim.set_op_log(&log);
    open_by_run[r] = drive(sim.system(), log);
    got[r] = seen(log);
    open[r] = log.open();
  });
  for (unsigned r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r], want) << "rank " << r;
    EXPECT_EQ(open[r], want_log.open()) << "rank " << r;
    EXPECT_EQ(open_by_run[r], want_open) << "rank " << r << ": open records and their earliest start, run by run";
  }
}

}  // namespace
}  // namespace kbsim
