// Messages inside a PE (ADR-0014): commands from PE_CPU to PE_SCHEDULER and
// back, tile tokens that route themselves from engine to engine, and TCM
// access requests.
#pragma once

#include <array>
#include <string>

#include "kbsim/component.hpp"
#include "kbsim/message.hpp"
#include "kbsim/pe/plan.hpp"

namespace kbsim::pe {

/// The id of the PE part `part` next to node `node_id` (both in "<pe prefix>.<part>").
inline std::string sibling(std::string_view node_id, std::string_view part) {
  auto dot = node_id.rfind('.');
  return dot == std::string_view::npos ? std::string(part)
                                       : std::string(node_id.substr(0, dot + 1)) + std::string(part);
}

enum class CommandKind : std::uint8_t { kDmaRead, kDmaWrite, kGemm, kMath, kCompositeGemm, kCompositeMath };

/// One PE command. PE_CPU sends it to PE_SCHEDULER; the scheduler sends the
/// same object back, with the results filled in, when every tile is done.
class Command : public Message {
 public:
  static constexpr TypeId kType = type_id("pe.Command");
  Command() noexcept : Message(kType) {}

  CommandKind kind = CommandKind::kDmaRead;
  std::uint64_t id = 0;
  Stage stage;        ///< simple commands: their one stage (composite = false)
  GemmPlanSpec gemm;  ///< kCompositeGemm
  MathPlanSpec math;  ///< kCompositeMath
  NodeIndex reply_to = 0;

  // --- results ---
  bool done = false;
  bool ok = true;
  std::string error;                     ///< first failure of any stage
  std::uint64_t pa = 0;                  ///< simple DMA: the physical address the DMA resolved
  std::uint32_t tiles = 0;               ///< tiles the command ran as
  Tick t_submit = 0;                     ///< accepted by the scheduler
  Tick t_first = kNever;                 ///< earliest stage start
  Tick t_last = 0;                       ///< latest stage end
  std::array<Tick, kStageTypes> busy{};  ///< engine time per stage type, summed over tiles

  bool is_composite() const noexcept {
    return kind == CommandKind::kCompositeGemm || kind == CommandKind::kCompositeMath;
  }
};

/// The shared state of one command's tiles. Refcounted like a message, never sent.
class Pipeline : public Message {
 public:
  static constexpr TypeId kType = type_id("pe.Pipeline");
  Pipeline() noexcept : Message(kType) {}

  Ref<Command> command;
  std::vector<TilePlan> tiles;
  std::array<NodeIndex, kRoles> nodes{};  ///< the engine node of each role
  NodeIndex scheduler = 0;
  std::uint32_t fed = 0, completed = 0;

  void record(StageType t, Tick start, Tick end) {
    Command& c = *command;
    c.busy[static_cast<std::size_t>(t)] += end - start;
    c.t_first = std::min(c.t_first, start);
    c.t_last = std::max(c.t_last, end);
  }
  void fail(std::string error) {
    if (command->ok) {
      command->ok = false;
      command->error = std::move(error);
    }
  }
};

/// One tile moving through its stages. Exactly one component owns it at a time.
class TileToken : public Message {
 public:
  static constexpr TypeId kType = type_id("pe.TileToken");
  TileToken() noexcept : Message(kType) {}

  Ref<Pipeline> pipe;
  std::uint32_t tile = 0;
  std::uint32_t stage = 0;  ///< index of the current stage; == stage count once complete

  const TilePlan& plan() const noexcept { return pipe->tiles[tile]; }
  const Stage& current() const noexcept { return plan().stages[stage]; }
  bool complete() const noexcept { return stage >= plan().stages.size(); }
};

/// A TCM access by PE_FETCH_STORE (ADR-0040): PE_TCM answers with the same
/// object once its read or write channel has moved the bytes.
class TcmRequest : public Message {
 public:
  static constexpr TypeId kType = type_id("pe.TcmRequest");
  TcmRequest() noexcept : Message(kType) {}

  bool write = false;
  std::uint64_t nbytes = 0;
  NodeIndex from = 0;
  bool is_response = false;
  Ref<TileToken> token;  ///< the tile the access is for
  Tick t_start = 0;
};

/// Base of the engines a tile passes through (DMA, FETCH/STORE, GEMM, MATH),
/// on top of `Base` (Component, or e.g. ahbm::MemoryNode for PE_DMA).
/// The engine implements accept(); when it finishes the token's current
/// stage it calls finish_stage(), which records the stage's time and hands the
/// token to the next stage's engine (itself included), or back to the
/// scheduler after the last stage.
template <class Base>
class StageEngineOf : public Base {
 public:
  using Base::Base;

  void on_message(PortIndex in, Ref<Message> msg) override {
    if (msg->is<TileToken>()) return accept(Ref<TileToken>(static_cast<TileToken*>(msg.get())), false);
    on_other(in, std::move(msg));
  }

 protected:
  /// A tile arrived whose current stage this engine runs. `chained` when the
  /// previous stage ran on this same engine (the local loop of ADR-0014).
  virtual void accept(Ref<TileToken> token, bool chained) = 0;
  /// Any other message (e.g. a TCM or fabric response).
  virtual void on_other(PortIndex in, Ref<Message> msg) {
    (void)in;
    (void)msg;
    this->fail("received a message that is not a tile token");
  }

  /// The current stage ran from `start` to now.
  void finish_stage(Ref<TileToken> t, Tick start) {
    t->pipe->record(t->current().type, start, this->now());
    ++t->stage;
    pass_on(std::move(t));
  }
  /// The current stage failed: the command fails with `error`, the tile ends here.
  void abort_tile(Ref<TileToken> t, std::string error) {
    t->pipe->fail(std::move(error));
    t->stage = static_cast<std::uint32_t>(t->plan().stages.size());
    pass_on(std::move(t));
  }

 private:
  void pass_on(Ref<TileToken> t) {
    NodeIndex next =
        t->complete() ? t->pipe->scheduler : t->pipe->nodes[static_cast<std::size_t>(role_of(t->current().type))];
    if (next == this->index()) return accept(std::move(t), true);
    PortIndex out = this->out_port_to(next);
    if (out == kNoPort)
      this->fail("no PE-internal link to " + std::string(this->node_id(next)) +
                 " for the next tile stage; add it to cube.pe_template.links");
    this->send(out, std::move(t));
  }
};

class StageEngine : public StageEngineOf<Component> {
 public:
  using StageEngineOf::StageEngineOf;
};

}  // namespace kbsim::pe
