// A system and what components see of the core (the Simulator interface): one
// component per node of an elaboration (component/elaboration.hpp), one Link
// per directed edge, message/flit delivery, routing, the op-log hooks and the
// per-system service cache.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "component/crossing.hpp"
#include "component/elaboration.hpp"
#include "component/op_log.hpp"
#include "component/route_table.hpp"
#include "component/split.hpp"
#include "fabric/link.hpp"
#include "kbsim/bench.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/plugin.hpp"
#include "sim/engine.hpp"

namespace kbsim::core {

class Registry;

class Simulation final : public Simulator, public System, private EventTarget {
 public:
  /// Build a system of `elaboration`: instantiate every component, then call setup() on each in node order.
  /// `routes`: a table shared with other systems of this elaboration (nullptr: a table of its own).
  /// `split`: this rank's part of a system split over ranks (nullptr: the whole system, in this process).
  Simulation(std::shared_ptr<const Elaboration> elaboration, const Registry& registry,
             std::shared_ptr<RouteTable> routes = nullptr, const Split* split = nullptr);
  /// The same, elaborating `graph` first.
  Simulation(const Graph& graph, const Registry& registry) : Simulation(elaborate(graph, registry), registry) {}
  ~Simulation();

  using Node = Elaboration::Node;
  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  const std::shared_ptr<const Elaboration>& elaboration() const noexcept { return el_; }
  /// A node's statistics, parallel to its type's info.stats.
  std::span<const Stat> node_stats(NodeIndex n) const noexcept {
    return {stats_.data() + el_->stat_begin[n], stats_.data() + el_->stat_begin[n + 1]};
  }
  /// Links in edge order (the topology's).
  const std::vector<Link>& links() const noexcept { return links_; }
  /// What happened on `link` in this system: messages, flits, bytes, busy time.
  Traffic use(const Link& link) const noexcept {
    const Load& l = loads_[link.wire];
    return {wires_[link.wire].messages, l.flits, l.bytes, l.busy};
  }

  // Simulator
  /// Inside a handler, the event's time; outside (the bench, the host), in a split system, the time the last run
  /// ended at, which is every rank's (a rank's own clock may have gone past it, see split.cpp).
  Tick now() const noexcept override { return split_ && !engine_.dispatching() ? split_->host_now : engine_.now(); }
  void send(NodeIndex from, PortIndex out, Ref<Message> msg, Tick at) override;
  void forward(NodeIndex from, PortIndex out, const Flit& flit, Tick at) override;
  EventId schedule(NodeIndex self, Tick at, std::uint64_t tag, Ref<Message> msg, std::uint8_t priority) override;
  void cancel(EventId id) noexcept override { engine_.cancel(id); }
  const Route& route(NodeIndex from, NodeIndex to, ViewId view) override;
  ViewId find_view(std::string_view name) const override;
  std::span<const RawParam> attrs() const noexcept override { return attrs_; }
  NodeIndex find_node(std::string_view id) const override;
  NodeIndex lookup_node(std::string_view id) const noexcept override {
    auto it = index_.find(id);
    return it == index_.end() ? kNoNode : it->second;
  }
  std::string_view node_id(NodeIndex n) const noexcept override { return nodes_[n].id; }
  ComponentContext context(NodeIndex n) const noexcept override {
    const Node& node = nodes_[n];
    return {node.id, node.impl, n, &node.params, node.in, node.out, const_cast<Simulation*>(this), engine_.clock()};
  }
  Stat& stat(NodeIndex self, std::string_view name) override;
  void set_transit_cost(NodeIndex self, Tick cost) override;
  void log(NodeIndex self, LogLevel level, std::string_view text) override;
  void request_stop() noexcept override;
  Tick control_latency(const Route& route) const override;
  Component& component(NodeIndex n) override { return *components_[n]; }
  Service* find_service(std::string_view name) override;
  void op_resume(NodeIndex self, const Message& msg) override {
    if (oplog_ && msg.data_op()) oplog_->restart(self, msg, now());
  }

  // System
  void run_until(Tick t) override;
  void run() override { run_until(kNever); }
  void finish() override;
  std::uint64_t events() const noexcept override { return engine_.events() + (split_ ? split_->other_events : 0); }
  std::size_t node_count() const noexcept override { return nodes_.size(); }
  /// A split system's: the windows its runs took (each one exchange among the ranks); 0 when not split.
  std::uint64_t windows() const noexcept { return split_ ? split_->windows : 0; }
  /// How this system is split over ranks (partition nullptr: it is not).
  const Split& split() const noexcept {
    static const Split whole;
    return split_ ? split_->split : whole;
  }
  const Stat& stat(std::string_view node, std::string_view name) const override;
  Component& component(std::string_view node) override { return *components_[find_node(node)]; }
  bool idle() const noexcept override { return split_ ? split_->idle : engine_.empty(); }
  bool is_split() const noexcept override { return split_ != nullptr; }
  std::vector<std::string> waiting() override;
  RouteInfo route_info(std::string_view from, std::string_view to, std::string_view view) override;
  std::vector<LinkUse> link_use() const override;
  std::string_view view_name(ViewId view) const override { return view_names_.at(view); }
  void provide(std::string_view name, Service& service) override;
  void share(ReplicatedService& news) override { shared_.push_back(&news); }
  void unshare(ReplicatedService& news) noexcept override { std::erase(shared_, &news); }
  OpLogView* op_log() noexcept override { return oplog_; }
  std::vector<const Extension*> extensions(std::string_view kind) const override;
  /// Call finish() on every service this system created, newest first (once).
  void finish_services();

  /// Log data operations into `log` (nullptr = off, the default: then the
  /// timing pass does no op-log work at all).
  /// (A split system holds its records for merging across ranks: see op_log.hpp.)
  void set_op_log(OpLog* log);

 private:
  Tick on_event(Event& ev) override;
  Tick dispatch(Component& c, Event& ev);
  friend class Engine;  // runs on_event directly (Engine::run_until(limit, this))

  /// The wire of out-port `out` of `from`; a simulation error if it has no such port.
  Wire& out_wire(NodeIndex from, PortIndex out) {
    const std::uint32_t begin = port_begin_[from], count = port_begin_[from + 1] - begin;
    if (out >= count) [[unlikely]]
      no_port(from, out);
    return wires_[begin + out];
  }
  [[noreturn]] void no_port(NodeIndex from, PortIndex out) const;
  std::span<const Wire> out_wires(NodeIndex n) const noexcept {
    return {wires_.data() + port_begin_[n], wires_.data() + port_begin_[n + 1]};
  }
  /// An event scheduled by node `from`, ordered among those of its time and priority as docs/architecture.md,
  /// "The order of simultaneous events", says.
  Event& new_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                   EventId* id = nullptr);
  /// new_event without a tie: where placing_ is off (a plain wire's send, which a placing system never takes).
  Event& untied_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                      EventId* id = nullptr);
  /// The order of an event scheduled by `from` for `at` (what new_event gives it).
  Order order_for(Tick at, NodeIndex from);
  // A split system (Split): this rank's nodes run; a message on a link to another rank's node is written to that
  // rank's outbox and exchanged at the window's end; the statistics of every node are gathered after each run.
  bool owned(NodeIndex n) const noexcept {
    return !split_ || split_->split.partition->rank_of[n] == split_->split.rank;
  }
  /// Start a record for the rank across `link`: what arrives at `at`, of kind `kind` (split.cpp).
  ByteWriter remote_record(const Link& link, Tick at, std::uint8_t kind);
  /// A message sent on a cut link: whole, or as a train of flits to a receiver of flits.
  void send_remote(const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start);
  /// In a split system, `from` schedules outside any handler (the bench acting through its interface, the same way
  /// on every rank; what another rank's component does so is dropped by its Shadow): SimError if this rank has
  /// simulated past the time the bench is at (split.cpp).
  void host_acts(NodeIndex from);
  /// A message's bytes for another rank, with whose object it is (see split.cpp), and the message they make here.
  void encode_crossing(const Message& msg, ByteWriter& w);
  Ref<Message> decode_crossing(ByteReader& r);
  /// A flit forwarded on a cut link, arriving at `arrive`.
  void forward_remote(const Link& link, const Flit& flit, Tick arrive);
  void receive(std::string_view bytes);
  /// Run this process's events up to `t` (the engine's loop, with this simulation's handler inlined into it).
  /// Returns whether a stop (request_stop) ended it.
  bool run_events(Tick t, bool advance = true);
  void run_split(Tick t);
  /// Every rank gets every node's statistics and link's traffic, and the op log's records up to `last` (those after
  /// it wait for a later run, which at the job's end never comes); returns the latest time any rank is at.
  Tick gather_statistics(const Place& last);
  /// The end of the bench's present stage (before any event of its next run), or of its run at `t`, as a Place.
  Place bench_end() const;
  Place run_end(Tick t) const;
  /// Where a record made now stands (OpLog::hold).
  Place place() const;
  /// new_event in a split system: its order's last tie, its scheduler's count, is kept by its slot.
  [[gnu::noinline]] Event& tied_event(Tick at, std::uint8_t priority, EventKind kind, Component* to, NodeIndex from,
                                      EventId* id);
  /// An event of a split system whose op log is kept runs: this rank's place moves on to it if it is further.
  [[gnu::noinline]] void place_event(std::uint32_t priority);
  /// Write this rank's records that a run settled at `last` (OpLog::settle) after its statistics, and go on to
  /// the next epoch.
  OpLog::Settled send_records(ByteWriter& w, const Place& last);
  /// The records a run settled on every rank (each rank's `readers`, after its statistics; this rank's in `mine`),
  /// merged in the order one process logs them, go to the op log's sinks.
  void merge_records(OpLog::Settled mine, std::vector<ByteReader>& readers);
  /// The loader of payloads named `name` (add_payload), found once; SimError naming the record `whose` if none.
  const OpPayloadType& payload_type(std::string_view name, const OpRecord& whose);
  void save_record(ByteWriter& w, const OpRecord& r);
  OpRecord load_record(ByteReader& r, unsigned rank);
  /// SimError unless rank `rank`, which keeps an op log if `placing`, does as this one.
  void same_log(unsigned rank, bool placing) const;
  /// Keep this rank's first error to tell every rank at the next collective (split systems).
  void hold_failure(const Error& e);
  std::string failure_bytes() const;
  /// A root for an event scheduled by `from` outside any handler: from's index, then from's count of them.
  [[gnu::noinline]] std::uint32_t fresh_root(NodeIndex from);
  static constexpr unsigned kNodeBits = 24;  ///< a system holds at most 2^24 nodes: an event's lane keeps its node
  static constexpr Tick kMaxOrderDelay = (Tick{1} << (64 - kNodeBits)) - 1;
  void send_general(Wire& wire, NodeIndex from, Ref<Message> msg, Tick at);
  void deliver(const Wire& wire, const Link& link, Ref<Message> msg, std::uint32_t hop, Link::Shape shape, Tick start);
  [[noreturn]] void fail(NodeIndex node, const std::string& what) const;
  /// Run plugin code of `n` (its factory, setup or finish): any fault other than a kbsim::Error becomes a
  /// PluginError naming the node, its implementation and library, the stage and the sim time.
  template <class F>
  void guard(const Node& n, const char* stage, F&& f) const;
  [[noreturn]] void plugin_fault(const Node& n, const char* stage, const std::string& what) const;
  /// "impl, library name" of a node, for fault messages.
  std::string library_of(const Node& n) const;
  /// The receiving port of `link` declares the message types it accepts: fail unless `msg` is one.
  void check_type(const Link& link, const Message& msg) const;

  // What the graph elaborated to (shared with other systems of an equal graph), and views of it.
  std::shared_ptr<const Elaboration> el_;
  const std::vector<Node>& nodes_;
  const std::string_view* ids_;  ///< per node (the elaboration's; a pointer: one load less on every send)
  const std::unordered_map<std::string_view, NodeIndex>& index_;
  const std::uint32_t* port_begin_;  ///< per node, and one past the last (the elaboration's)
  const std::vector<std::string>& view_names_;
  const std::vector<std::string>& link_kinds_;
  const std::vector<Link>& links_;
  const RouteMetric metric_;
  const std::vector<NodeIndex>& id_rank_;
  const std::vector<NodeIndex>& by_rank_;
  const std::vector<RawParam>& attrs_;
  const std::vector<std::vector<TypeId>>& accepts_;
  const std::vector<std::vector<std::string>>& accepts_names_;

  // This system's own state.
  Engine engine_;
  std::vector<Wire> wires_;                             ///< every out-port's wire, node by node
  std::vector<Load> loads_;                             ///< parallel to wires_
  std::vector<std::unique_ptr<Component>> components_;  ///< per node
  std::vector<Stat> stats_;                             ///< every node's statistics (node_stats)
  std::vector<Tick> transit_;                           ///< per node: the cost routing charges to pass it
  std::vector<std::uint32_t> fresh_roots_;              ///< per node: events it scheduled outside any handler
  /// The routes this system uses: shared with the other systems of its elaboration while its transit costs
  /// are theirs (see route_table.hpp); tables it left are kept, as messages may still point to their routes.
  std::shared_ptr<RouteTable> routes_;
  bool routes_bound_ = false;  ///< whether this system has routed yet (and so holds to routes_->transit)
  std::vector<std::shared_ptr<RouteTable>> left_;
  /// routes_, made this system's own (or fresh) when its transit costs are not the table's.
  RouteTable& route_table();
  /// Leave routes_ for a fresh table of this system's own, under its current transit costs.
  void own_routes();
  /// The search from `from`, run until `to` is settled (or nothing is left): the table's scratch, holding its marks.
  const RouteTable::Stamped* search(RouteTable& table, NodeIndex from, NodeIndex to, ViewId view);
  bool finished_ = false;
  const Registry& registry_;
  /// Services by name: provided ones (not owned) and created ones (owned, in creation order).
  std::vector<std::pair<std::string, Service*>> services_;
  std::vector<std::unique_ptr<Service>> owned_services_;
  std::vector<ReplicatedService*> shared_;  ///< a bench's own (share), in the order it shared them
  bool services_finished_ = false;
  OpLog* oplog_ = nullptr;
  /// A split system with an op log: events keep their scheduler's count (SplitState::ties), and records are placed
  /// (place_event). (With oplog_ set, no send takes the untied hot path.)
  bool placing_ = false;
  /// A split system's state (split.hpp); nullptr when not split.
  struct SplitState {
    Split split;
    std::vector<std::string> outbox;        ///< per rank: messages for it, as bytes (emptied once sent)
    Transport::Exchanged received;          ///< the last window's exchange (its buffers kept for the next)
    Tick outbox_next = kNever;              ///< the earliest arrival in the outboxes
    std::uint64_t windows = 0;              ///< exchanges so far
    ExitCode failure_code = ExitCode::kOk;  ///< this rank's error (kOk: none)
    std::string failure;
    bool failure_named = false;          ///< the failure's words name the rank it happened on (a RankError)
    std::uint64_t other_events = 0;      ///< events the other ranks ran (gathered after a run)
    std::unique_ptr<RouteStore> routes;  ///< the routes of received messages
    /// Messages whose first flits came from another rank and whose last have not: by link and sender's address.
    std::map<std::pair<std::uint32_t, std::uintptr_t>, Ref<Message>> in_flight;
    /// Requests that left this rank and will come back answered, by tag: the answer is loaded into the object.
    std::unordered_map<std::uint64_t, Ref<Message>> away;
    std::uint64_t next_tag = 0;
    /// Requests that came from another rank, until they leave again: their home rank and its tag.
    struct Visitor {
      std::uint32_t home;
      std::uint64_t tag;
      Ref<Message> msg;
    };
    std::unordered_map<const Message*, Visitor> visitors;
    Tick host_now = 0;        ///< the time the last run ended at, on every rank (now() outside handlers)
    bool idle = true;         ///< nothing was pending on any rank when the last run ended, and nobody scheduled since
    bool stop_asked = false;  ///< the bench asked for a stop outside a run (request_stop)
    bool may_act = true;      ///< the bench may act on this rank's components now (host_acts)
    std::unique_ptr<Shadow> shadow;  ///< the core as other ranks' components see it
    /// By engine slot: its event's scheduling node's count of the events it scheduled (placing_; 0 for events the
    /// setup scheduled before the op log was set, whose roots are their own).
    std::vector<std::uint64_t> ties;
    void tie(std::uint32_t slot, std::uint64_t count) {
      if (slot >= ties.size()) ties.resize(std::max<std::size_t>(slot + 1, 2 * ties.size()));
      ties[slot] = count;
    }
    std::vector<std::uint64_t> scheduled;  ///< per node: events it scheduled
    std::uint32_t epoch = 0;               ///< the bench's runs so far (Place::epoch)
    Place pos;                             ///< the furthest event this rank ran (in this epoch, if it is this one's)
    std::map<std::string, const OpPayloadType*, std::less<>> payloads;  ///< loaders found so far
  };
  static constexpr std::uint32_t kNoHome = ~std::uint32_t{0};
  std::unique_ptr<SplitState> split_;
};

[[gnu::always_inline]] inline Order Simulation::order_for(Tick at, NodeIndex from) {
  // The root: the running event's if a handler schedules this, else a root of its own (setup, a bench, the host).
  // Then the earlier scheduled first (the longer delay; delays from 2^40 ps, about 1.1 s, on count as equal), then
  // the lower scheduling node; what is still equal comes from one node, in the order it scheduled.
  const std::uint32_t root = engine_.dispatching() ? engine_.running_root() : fresh_root(from);
  const Tick delay = std::min<Tick>(at - engine_.now(), kMaxOrderDelay);
  return {root, (kMaxOrderDelay - delay) << kNodeBits | from};
}

}  // namespace kbsim::core
