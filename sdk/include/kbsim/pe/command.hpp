// Messages inside a PE (docs/model.md, "The PE"): commands from PE_CPU to
// PE_SCHEDULER and back, tile tokens that route themselves from engine to
// engine, and TCM access requests.
#pragma once

#include <array>
#include <string>

#include "kbsim/ahbm/phys_addr.hpp"
#include "kbsim/component.hpp"
#include "kbsim/message.hpp"
#include "kbsim/pe/data_op.hpp"
#include "kbsim/pe/plan.hpp"

namespace kbsim::pe {

/// The id of the PE part `part` next to node `node_id` (both in "<pe prefix>.<part>").
inline std::string sibling(std::string_view node_id, std::string_view part) {
  auto dot = node_id.rfind('.');
  return dot == std::string_view::npos ? std::string(part)
                                       : std::string(node_id.substr(0, dot + 1)) + std::string(part);
}

enum class CommandKind : std::uint8_t { kDmaRead, kDmaWrite, kGemm, kMath, kCompositeGemm, kCompositeMath };

/// "hbm 0x1000 (32, 64) f16": an operand, for op-log parameters.
inline std::string describe_tensor(const OpTensor& t) {
  return std::string(tl::space_name(t.space)) + " " + ahbm::hex(t.addr) + " " + t.shape.str() + " " +
         std::string(dtype_name(t.dtype));
}

/// One PE command. PE_CPU sends it to PE_SCHEDULER; the scheduler sends the
/// same object back, with the results filled in, when every tile is done.
/// A data operation: the scheduler's service of it is one op-log record.
class Command : public Message {
 public:
  static constexpr std::string_view kName = "pe.Command";
  static constexpr TypeId kType = type_id(kName);
  Command() noexcept : Message(kType, true) {}

  CommandKind kind = CommandKind::kDmaRead;
  std::uint64_t id = 0;
  Stage stage;        ///< simple commands: their one stage (composite = false)
  GemmPlanSpec gemm;  ///< kCompositeGemm
  MathPlanSpec math;  ///< kCompositeMath
  NodeIndex reply_to = 0;
  /// What the data pass computes for it: set by the issuer; the scheduler
  /// completes it (the tile depth it chose) when it accepts the command.
  std::shared_ptr<DataOp> data;

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

  bool describe_op(OpRecord& r) const override {
    if (done) return false;
    r.data = data;
    switch (kind) {
      case CommandKind::kDmaRead:
      case CommandKind::kDmaWrite:
        r.kind = OpKind::kMemory;
        r.name = kind == CommandKind::kDmaRead ? "dma_read" : "dma_write";
        r.param(kind == CommandKind::kDmaRead ? "src_addr" : "dst_addr", stage.addr);
        r.param("nbytes", stage.nbytes);
        break;
      case CommandKind::kGemm:
        r.kind = OpKind::kGemm;
        r.name = "gemm_" + std::string(data && !data->in.empty() ? dtype_name(data->in[0].dtype) : "f16");
        r.param("m", stage.m), r.param("k", stage.k), r.param("n", stage.n);
        break;
      case CommandKind::kMath:
        r.kind = OpKind::kMath;
        r.name = tl::math_op_name(stage.op);
        r.param("m", stage.m), r.param("n", stage.n);
        break;
      case CommandKind::kCompositeGemm:
        r.kind = OpKind::kGemm;
        r.name = "composite_gemm";
        r.param("m", gemm.m), r.param("k", gemm.k), r.param("n", gemm.n);
        r.param("tile",
                std::to_string(gemm.tile_m) + "x" + std::to_string(gemm.tile_k) + "x" + std::to_string(gemm.tile_n));
        r.param("a_pinned", gemm.a_pinned), r.param("b_pinned", gemm.b_pinned);
        break;
      case CommandKind::kCompositeMath:
        r.kind = OpKind::kMath;
        r.name = "composite_math";
        r.param("op", tl::math_op_name(math.op));
        r.param("m", math.m), r.param("n", math.n);
        break;
    }
    r.param("command", id);
    if (data) {
      for (std::size_t i = 0; i < data->in.size(); ++i) r.param("in" + std::to_string(i), describe_tensor(data->in[i]));
      r.param("out", describe_tensor(data->out));
    }
    return true;
  }
};

/// The shared state of one command's tiles. Refcounted like a message, never sent.
class Pipeline : public Message {
 public:
  static constexpr std::string_view kName = "pe.Pipeline";
  static constexpr TypeId kType = type_id(kName);
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
/// A data operation: each engine's service of a stage is a record
/// ("TileToken/GEMM", ...; timeline only), and a tile's records form a flow.
class TileToken : public Message {
 public:
  static constexpr std::string_view kName = "pe.TileToken";
  static constexpr TypeId kType = type_id(kName);
  TileToken() noexcept : Message(kType, true) {}

  Ref<Pipeline> pipe;
  std::uint32_t tile = 0;
  std::uint32_t stage = 0;  ///< index of the current stage; == stage count once complete

  const TilePlan& plan() const noexcept { return pipe->tiles[tile]; }
  const Stage& current() const noexcept { return plan().stages[stage]; }
  bool complete() const noexcept { return stage >= plan().stages.size(); }

  bool describe_op(OpRecord& r) const override {
    if (complete()) return false;
    const Stage& s = current();
    r.kind = OpKind::kUnknown;
    r.name = "TileToken/";
    for (char c : stage_name(s.type)) r.name += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    r.param("command", pipe->command->id), r.param("tile", tile), r.param("stage", stage);
    switch (s.type) {
      case StageType::kDmaRead:
      case StageType::kDmaWrite: r.param("addr", s.addr); [[fallthrough]];
      case StageType::kFetch:
      case StageType::kStore: r.param("nbytes", s.nbytes); break;
      case StageType::kGemm: r.param("m", s.m), r.param("k", s.k), r.param("n", s.n); break;
      case StageType::kMath: r.param("op", tl::math_op_name(s.op)), r.param("m", s.m), r.param("n", s.n); break;
    }
    // One flow per (issuing PE CPU, command, tile); never 0.
    std::uint64_t f = (std::uint64_t{pipe->command->reply_to} << 40) ^ (pipe->command->id << 20) ^ tile;
    f = (f ^ (f >> 31)) * 0x9e3779b97f4a7c15ULL;
    r.flow = f | 1;
    r.flow_end = stage + 1 == plan().stages.size();
    return true;
  }
};

/// A TCM access by PE_FETCH_STORE (docs/model.md, "The PE"): PE_TCM answers
/// with the same object once its read or write channel has moved the bytes.
class TcmRequest : public Message {
 public:
  static constexpr std::string_view kName = "pe.TcmRequest";
  static constexpr TypeId kType = type_id(kName);
  TcmRequest() noexcept : Message(kType, true) {}

  bool write = false;
  std::uint64_t nbytes = 0;
  NodeIndex from = 0;
  bool is_response = false;
  Ref<TileToken> token;  ///< the tile the access is for
  Tick t_start = 0;

  bool describe_op(OpRecord& r) const override {
    if (is_response) return false;
    r.kind = OpKind::kMemory;  // timeline only: no data op (the tile's command carries the data)
    r.name = write ? "tcm_write" : "tcm_read";
    r.param("nbytes", nbytes);
    if (token) r.param("tile", token->tile);
    return true;
  }
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
  /// previous stage ran on this same engine (the local loop, docs/model.md
  /// "Commands and tiles").
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
