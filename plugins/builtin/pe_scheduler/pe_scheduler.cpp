// builtin.pe_scheduler: the only dispatcher of a PE (docs/model.md, "The PE").
// PE_CPU sends it pe::Command messages; each becomes a pipeline of tiles: a
// simple command (DMA read/write, GEMM, MATH) is one tile of one stage, a
// composite one the tile plan of gemm_plan / math_plan (docs/model.md,
// "Commands and tiles"; a tile size of 0 in the spec means this scheduler's
// tile_* parameter).
//
// The reference's three queues (ADR-0014 D2) are named structures here, each
// with one writer, this scheduler:
// - SubmissionQueue: the commands PE_CPU submitted, in arrival order, until
//   the feeder takes them;
// - InflightTable: one entry per command the feeder has taken, with its tiles
//   outstanding (fed and not back), until every tile is back; the engines
//   only report tiles back (their tokens), the scheduler alone completes;
// - CompletionQueue: commands whose tiles are all back, until returned to
//   their sender with done = true (at once, in this model).
// Their depths are statistics (peaks and time-weighted means).
//
// One feeder serves the commands in arrival order: all tiles of a command are
// fed before the next command's feed starts (feeds never interleave), while
// earlier commands' tiles may still be running downstream. A tile is fed as a
// TileToken to the engine of its first stage and routes itself from there; at
// most max_inflight_tiles tiles of the command being fed are outstanding (the
// scheduler-reserved TCM tile buffers).
#include <array>
#include <vector>

#include "kbsim/fifo.hpp"
#include "kbsim/pe/command.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::Tick;
using kbsim::pe::Command;
using kbsim::pe::CommandKind;
using kbsim::pe::Pipeline;
using kbsim::pe::TileToken;

constexpr kbsim::IntParam kTileM{"tile_m", 32, "GEMM / MATH tile rows when the command leaves them 0"};
constexpr kbsim::IntParam kTileK{"tile_k", 64, "GEMM tile depth when the command leaves it 0"};
constexpr kbsim::IntParam kTileN{"tile_n", 32, "GEMM / MATH tile columns when the command leaves them 0"};
constexpr kbsim::IntParam kMaxInflightTiles{"max_inflight_tiles", 4,
                                            "tiles of the command being fed that may be in flight (TCM tile buffers)"};
constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "dispatch time per command, before its first tile is fed"};
constexpr kbsim::NodeParam kDma{"dma", "pe_dma", "the DMA engine of its PE (a PE template name means that sibling)"};
constexpr kbsim::NodeParam kFetchStore{"fetch_store", "pe_fetch_store", "the fetch/store engine of its PE"};
constexpr kbsim::NodeParam kGemm{"gemm", "pe_gemm", "the GEMM engine of its PE"};
constexpr kbsim::NodeParam kMath{"math", "pe_math", "the MATH engine of its PE"};

/// The depth of a queue over time: its peak (a counter) and its time-weighted mean (a value, folded at finish).
class Depth {
 public:
  Depth(kbsim::Stat& peak, kbsim::Stat* mean) : peak_(peak), mean_(mean) {}
  std::uint64_t get() const noexcept { return depth_; }
  void set(Tick now, std::uint64_t depth) {
    area_ += static_cast<double>(depth_) * static_cast<double>(now - since_);
    since_ = now;
    depth_ = depth;
    if (depth > peak_.count) peak_.count = depth;
  }
  void finish(Tick now) {
    set(now, depth_);
    if (mean_) mean_->value = now > 0 ? area_ / static_cast<double>(now) : 0.0;
  }

 private:
  kbsim::Stat& peak_;
  kbsim::Stat* mean_;
  std::uint64_t depth_ = 0;
  Tick since_ = 0;
  double area_ = 0.0;  ///< depth x ps
};

/// A first-in first-out queue of commands with its depth recorded: the SubmissionQueue (commands PE_CPU submitted,
/// waiting for the feeder, in arrival order) and the CompletionQueue (commands whose every tile is back, until
/// returned to their sender) of ADR-0014 D2.
class CommandQueue {
 public:
  explicit CommandQueue(Depth depth) : depth_(depth) {}
  bool empty() const noexcept { return q_.empty(); }
  void push(Tick now, Ref<Command> cmd) {
    q_.push_back(std::move(cmd));
    depth_.set(now, q_.size());
  }
  Ref<Command> pop(Tick now) {
    Ref<Command> cmd = std::move(q_.front());
    q_.pop_front();
    depth_.set(now, q_.size());
    return cmd;
  }
  void finish(Tick now) { depth_.finish(now); }

 private:
  kbsim::Fifo<Ref<Command>> q_;
  Depth depth_;
};
using SubmissionQueue = CommandQueue;
using CompletionQueue = CommandQueue;

/// The commands the feeder took and whose tiles are not all back (ADR-0014 D2), in the order taken, each with its
/// tiles outstanding (its pipeline's fed - completed). Owned by the scheduler; the engines only hand tiles back.
class InflightTable {
 public:
  struct Entry {
    Ref<Pipeline> pipe;
  };
  InflightTable(Depth commands, Depth tiles) : commands_(commands), tiles_(tiles) {}

  void add(Tick now, Ref<Pipeline> pipe) {
    entries_.push_back({std::move(pipe)});
    commands_.set(now, entries_.size());
  }
  /// The entry of `pipe`; nullptr if it has none.
  Entry* find(const Pipeline& pipe) noexcept {
    for (Entry& e : entries_)
      if (e.pipe.get() == &pipe) return &e;
    return nullptr;
  }
  void tile_fed(Tick now, Entry& e) {
    ++e.pipe->fed;
    tiles_.set(now, tiles_.get() + 1);
  }
  /// A tile of `e` is back; true when it was the command's last.
  bool tile_back(Tick now, Entry& e) {
    ++e.pipe->completed;
    tiles_.set(now, tiles_.get() - 1);
    return e.pipe->completed == e.pipe->tiles.size();
  }
  /// Take `e` out (its command is complete).
  Ref<Pipeline> remove(Tick now, Entry& e) {
    Ref<Pipeline> pipe = std::move(e.pipe);
    entries_.erase(entries_.begin() + (&e - entries_.data()));
    commands_.set(now, entries_.size());
    return pipe;
  }
  void finish(Tick now) {
    commands_.finish(now);
    tiles_.finish(now);
  }

 private:
  std::vector<Entry> entries_;  ///< a handful: the command being fed and those still draining
  Depth commands_, tiles_;
};

class PeScheduler final : public kbsim::Component {
 public:
  explicit PeScheduler(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        tile_m_(static_cast<std::uint32_t>(params().get(kTileM))),
        tile_k_(static_cast<std::uint32_t>(params().get(kTileK))),
        tile_n_(static_cast<std::uint32_t>(params().get(kTileN))),
        max_inflight_(static_cast<std::uint32_t>(params().get(kMaxInflightTiles))),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))),
        submitted_({stat(kStatSubmissionPeak), &stat(kStatSubmissionMean)}),
        inflight_({stat(kStatInflightCommandsPeak), nullptr},
                  {stat(kStatInflightTilesPeak), &stat(kStatInflightTilesMean)}),
        completed_({stat(kStatCompletionPeak), nullptr}),
        commands_(stat(kStatCommands)),
        tiles_(stat(kStatTiles)),
        composite_(stat(kStatCompositeCommands)),
        returned_(stat(kStatCompleted)) {
    for (const kbsim::IntParam& p : {kTileM, kTileK, kTileN, kMaxInflightTiles})
      params().check(params().get(p) > 0 && params().get(p) <= 1 << 20, p, "must be in 1 .. 1048576");
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatCommands{"commands", kbsim::StatKind::kCounter, "commands", "commands accepted"};
  static constexpr kbsim::StatDef kStatTiles{"tiles", kbsim::StatKind::kCounter, "tiles", "tiles fed"};
  static constexpr kbsim::StatDef kStatCompositeCommands{"composite_commands", kbsim::StatKind::kCounter, "commands",
                                                         "composite commands accepted"};
  static constexpr kbsim::StatDef kStatCompleted{"completed_commands", kbsim::StatKind::kCounter, "commands",
                                                 "commands returned to their sender, done"};
  static constexpr kbsim::StatDef kStatSubmissionPeak{"submission_queue_peak", kbsim::StatKind::kCounter, "commands",
                                                      "most commands waiting in the submission queue at once"};
  static constexpr kbsim::StatDef kStatSubmissionMean{"submission_queue_mean", kbsim::StatKind::kValue, "commands",
                                                      "commands waiting in the submission queue, time-weighted mean"};
  static constexpr kbsim::StatDef kStatInflightCommandsPeak{
      "inflight_commands_peak", kbsim::StatKind::kCounter, "commands",
      "most commands in the in-flight table at once (being fed or with tiles outstanding)"};
  static constexpr kbsim::StatDef kStatInflightTilesPeak{"inflight_tiles_peak", kbsim::StatKind::kCounter, "tiles",
                                                         "most tiles outstanding at once, over all commands"};
  static constexpr kbsim::StatDef kStatInflightTilesMean{"inflight_tiles_mean", kbsim::StatKind::kValue, "tiles",
                                                         "tiles outstanding, time-weighted mean"};
  static constexpr kbsim::StatDef kStatCompletionPeak{"completion_queue_peak", kbsim::StatKind::kCounter, "commands",
                                                      "most commands in the completion queue at once"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_scheduler";
    i.summary = "PE dispatcher: turns commands into tile pipelines and feeds them one command at a time";
    i.params = {kTileM, kTileK, kTileN, kMaxInflightTiles, kOverheadNs, kDma, kFetchStore, kGemm, kMath};
    i.ports = {{"pe_internal",
                "PE-internal links: commands from and back to pe_cpu, tile tokens to and from the engines",
                kbsim::message_types<Command, TileToken>()}};
    i.stats = {kStatCommands,          kStatTiles,          kStatCompositeCommands,    kStatCompleted,
               kStatSubmissionPeak,    kStatSubmissionMean, kStatInflightCommandsPeak, kStatInflightTilesPeak,
               kStatInflightTilesMean, kStatCompletionPeak};
    return i;
  }

  void setup() override {
    for (std::size_t r = 0; r < kbsim::pe::kRoles; ++r) {
      const std::string_view role = kbsim::pe::role_component(static_cast<kbsim::pe::Role>(r));
      engines_[r] = params().get_node(role.substr(3));  // "pe_gemm" -> parameter "gemm"
      if (engines_[r] == kbsim::kNoNode) fail("needs an engine for role " + std::string(role));
    }
  }

  void on_message(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (msg->is<TileToken>()) return tile_done(msg->as<TileToken>());
    if (!msg->is<Command>()) fail("received a message that is neither a PE command nor a tile token");
    Ref<Command> cmd(&msg->as<Command>());
    cmd->t_submit = now();
    ++commands_.count;
    if (cmd->is_composite()) ++composite_.count;
    submitted_.push(now(), std::move(cmd));
    if (!feeding_) next_command();
  }

  void on_timer(std::uint64_t, Ref<kbsim::Message>) override {
    dispatching_ = false;
    feed();
  }

  void finish() override {
    submitted_.finish(now());
    inflight_.finish(now());
    completed_.finish(now());
  }

 private:
  /// The feeder: take the next submitted command into the in-flight table and start feeding it (after the
  /// dispatch overhead).
  void next_command() {
    if (submitted_.empty()) return;
    feeding_ = plan(submitted_.pop(now()));
    inflight_.add(now(), feeding_);
    if (overhead_ > 0) {
      dispatching_ = true;
      schedule(overhead_);
      return;
    }
    feed();
  }

  Ref<Pipeline> plan(Ref<Command> cmd) {
    Ref<Pipeline> p = kbsim::make_message<Pipeline>();
    auto or_param = [](std::uint32_t given, std::uint32_t param) { return given ? given : param; };
    switch (cmd->kind) {
      case CommandKind::kCompositeGemm: {
        kbsim::pe::GemmPlanSpec s = cmd->gemm;
        s.tile_m = or_param(s.tile_m, tile_m_);
        s.tile_k = or_param(s.tile_k, tile_k_);
        s.tile_n = or_param(s.tile_n, tile_n_);
        if (cmd->data) cmd->data->tile_k = s.tile_k;  // k_tile epilogues apply per tile of this depth
        p->tiles = kbsim::pe::gemm_plan(s);
        break;
      }
      case CommandKind::kCompositeMath: {
        kbsim::pe::MathPlanSpec s = cmd->math;
        s.tile_m = or_param(s.tile_m, tile_m_);
        s.tile_n = or_param(s.tile_n, tile_n_);
        p->tiles = kbsim::pe::math_plan(s);
        break;
      }
      default: {
        kbsim::pe::Stage s = cmd->stage;
        s.composite = false;
        p->tiles = {kbsim::pe::TilePlan{{s}}};
      }
    }
    p->command = std::move(cmd);
    p->nodes = engines_;
    p->scheduler = index();
    return p;
  }

  /// Feed tiles of the command being fed while tile buffers are free.
  void feed() {
    Pipeline& p = *feeding_;
    InflightTable::Entry* e = inflight_.find(p);
    if (!e) fail("the command being fed has no in-flight entry");
    while (p.fed < p.tiles.size() && e->pipe->fed - e->pipe->completed < max_inflight_) {
      Ref<TileToken> t = kbsim::make_message<TileToken>();
      t->pipe = feeding_;
      t->tile = p.fed;
      inflight_.tile_fed(now(), *e);
      ++tiles_.count;
      kbsim::NodeIndex engine = p.nodes[static_cast<std::size_t>(kbsim::pe::role_of(t->current().type))];
      kbsim::PortIndex out = out_port_to(engine);
      if (out == kbsim::kNoPort)
        fail("no PE-internal link to " + std::string(node_id(engine)) +
             " to feed a tile; add it to cube.pe_template.links");
      send(out, std::move(t));
    }
    if (p.fed < p.tiles.size()) return;  // wait for a tile buffer
    feeding_ = nullptr;
    next_command();
  }

  /// A tile is back (its last stage done): only here does a command's completion state change.
  void tile_done(TileToken& t) {
    if (!t.complete()) fail("received a tile token with stages left to run");
    Ref<Pipeline> p = t.pipe;
    InflightTable::Entry* e = inflight_.find(*p);
    if (!e) fail("received a tile token of a command that is not in flight");
    if (inflight_.tile_back(now(), *e)) {
      Ref<Pipeline> done = inflight_.remove(now(), *e);
      done->command->tiles = done->completed;
      completed_.push(now(), done->command);
      return_completed();
    }
    if (p.get() == feeding_.get() && !dispatching_) feed();
  }

  /// Return the completion queue's commands to their senders, done.
  void return_completed() {
    while (!completed_.empty()) {
      Ref<Command> cmd = completed_.pop(now());
      cmd->done = true;
      kbsim::PortIndex out = out_port_to(cmd->reply_to);
      if (out == kbsim::kNoPort)
        fail("no PE-internal link back to " + std::string(node_id(cmd->reply_to)) + " to complete command " +
             std::to_string(cmd->id));
      ++returned_.count;
      send(out, std::move(cmd));
    }
  }

  std::uint32_t tile_m_, tile_k_, tile_n_, max_inflight_;
  Tick overhead_;
  std::array<kbsim::NodeIndex, kbsim::pe::kRoles> engines_{};
  SubmissionQueue submitted_;
  InflightTable inflight_;
  CompletionQueue completed_;
  Ref<Pipeline> feeding_;     ///< the command whose tiles are being fed (in the in-flight table)
  bool dispatching_ = false;  ///< its dispatch overhead is running
  kbsim::Stat &commands_, &tiles_, &composite_, &returned_;
};

}  // namespace

KBSIM_PLUGIN("pe_scheduler") { kbsim::add_component<PeScheduler>(plugin); }
