// builtin.pe_scheduler: the only dispatcher of a PE (docs/model.md, "The PE").
// PE_CPU sends it pe::Command messages; each becomes a pipeline of tiles: a
// simple command (DMA read/write, GEMM, MATH) is one tile of one stage, a
// composite one the tile plan of gemm_plan / math_plan (docs/model.md,
// "Commands and tiles"; a tile size of 0 in the spec means this scheduler's
// tile_* parameter).
//
// One feeder serves the commands in arrival order: all tiles of a command are
// fed before the next command's feed starts (feeds never interleave), while
// earlier commands' tiles may still be running downstream. A tile is fed as a
// TileToken to the engine of its first stage and routes itself from there; at
// most max_inflight_tiles tiles of the command being fed are in flight (the
// scheduler-reserved TCM tile buffers). When every tile of a command is back,
// the command returns to its sender with done = true.
#include <array>
#include <deque>

#include "kbsim/pe/command.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
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

class PeScheduler final : public kbsim::Component {
 public:
  explicit PeScheduler(const kbsim::ComponentContext& ctx)
      : Component(ctx),
        tile_m_(static_cast<std::uint32_t>(params().get(kTileM))),
        tile_k_(static_cast<std::uint32_t>(params().get(kTileK))),
        tile_n_(static_cast<std::uint32_t>(params().get(kTileN))),
        max_inflight_(static_cast<std::uint32_t>(params().get(kMaxInflightTiles))),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))),
        commands_(stat(kStatCommands)),
        tiles_(stat(kStatTiles)),
        composite_(stat(kStatCompositeCommands)) {
    for (const kbsim::IntParam& p : {kTileM, kTileK, kTileN, kMaxInflightTiles})
      params().check(params().get(p) > 0 && params().get(p) <= 1 << 20, p, "must be in 1 .. 1048576");
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatCommands{"commands", kbsim::StatKind::kCounter, "commands", "commands accepted"};
  static constexpr kbsim::StatDef kStatTiles{"tiles", kbsim::StatKind::kCounter, "tiles", "tiles fed"};
  static constexpr kbsim::StatDef kStatCompositeCommands{"composite_commands", kbsim::StatKind::kCounter, "commands",
                                                         "composite commands accepted"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_scheduler";
    i.summary = "PE dispatcher: turns commands into tile pipelines and feeds them one command at a time";
    i.params = {kTileM, kTileK, kTileN, kMaxInflightTiles, kOverheadNs, kDma, kFetchStore, kGemm, kMath};
    i.ports = {{"pe_internal",
                "PE-internal links: commands from and back to pe_cpu, tile tokens to and from the engines",
                kbsim::message_types<Command, TileToken>()}};
    i.stats = {kStatCommands, kStatTiles, kStatCompositeCommands};
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
    pending_.push_back(std::move(cmd));
    if (!feeding_) next_command();
  }

  void on_timer(std::uint64_t, Ref<kbsim::Message>) override {
    dispatching_ = false;
    feed();
  }

 private:
  /// Take the next pending command and start feeding it (after the dispatch overhead).
  void next_command() {
    if (pending_.empty()) return;
    feeding_ = plan(std::move(pending_.front()));
    pending_.pop_front();
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

  /// Feed tiles of the current command while tile buffers are free.
  void feed() {
    Pipeline& p = *feeding_;
    while (p.fed < p.tiles.size() && p.fed - p.completed < max_inflight_) {
      Ref<TileToken> t = kbsim::make_message<TileToken>();
      t->pipe = feeding_;
      t->tile = p.fed++;
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

  void tile_done(TileToken& t) {
    if (!t.complete()) fail("received a tile token with stages left to run");
    Ref<Pipeline> p = t.pipe;
    ++p->completed;
    if (p->completed == p->tiles.size()) reply(*p);
    if (p.get() == feeding_.get() && !dispatching_) feed();
  }

  void reply(Pipeline& p) {
    Ref<Command> cmd = p.command;
    cmd->done = true;
    cmd->tiles = p.completed;
    kbsim::PortIndex out = out_port_to(cmd->reply_to);
    if (out == kbsim::kNoPort)
      fail("no PE-internal link back to " + std::string(node_id(cmd->reply_to)) + " to complete command " +
           std::to_string(cmd->id));
    send(out, std::move(cmd));
  }

  std::uint32_t tile_m_, tile_k_, tile_n_, max_inflight_;
  kbsim::Tick overhead_;
  std::array<kbsim::NodeIndex, kbsim::pe::kRoles> engines_{};
  std::deque<Ref<Command>> pending_;
  Ref<Pipeline> feeding_;     ///< the command whose tiles are being fed
  bool dispatching_ = false;  ///< its dispatch overhead is running
  kbsim::Stat &commands_, &tiles_, &composite_;
};

}  // namespace

KBSIM_PLUGIN("pe_scheduler") { kbsim::add_component<PeScheduler>(plugin); }
