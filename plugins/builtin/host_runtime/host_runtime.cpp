#include "host_runtime.hpp"

#include <algorithm>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/pe/kernels.hpp"
#include "kbsim/pe/memory_store.hpp"
#include "kbsim/pe/tcm.hpp"
#include "kbsim/text.hpp"
#include "placement.hpp"
#include "tensor_layout.hpp"

namespace kbsim::host_runtime {

namespace names = kbsim::ahbm::names;

namespace {

/// The page size of the PE MMUs (sip0.cube0.pe0's; a system without PE MMUs,
/// or whose pe_mmu nodes do not translate, lays tensors out in 4 KiB pages).
std::uint64_t mmu_page_size(System& system) {
  constexpr std::uint64_t kNoMmuPageBytes = 4096;
  const NodeIndex n = system.lookup_node(names::pe_part(0, 0, 0, "pe_mmu"));
  if (n == kNoNode) return kNoMmuPageBytes;
  const kbsim::ahbm::Translator* mmu = kbsim::ahbm::as_translator(system.component(n));
  return mmu ? mmu->page_size() : kNoMmuPageBytes;  // e.g. a forwarder standing in for the MMU
}

/// The allocatable TCM of PE (sip, cube, pe): above the scheduler-reserved part its PE_TCM publishes (none when the
/// PE has no PE_TCM that publishes its layout).
DeviceAllocators::TcmRegion allocatable_tcm(System& system, unsigned sip, unsigned cube, unsigned pe) {
  const NodeIndex n = system.lookup_node(names::pe_part(sip, cube, pe, "pe_tcm"));
  const kbsim::pe::TcmLayout* tcm = n == kNoNode ? nullptr : kbsim::pe::as_tcm_layout(system.component(n));
  if (!tcm || tcm->reserved_bytes() >= tcm->tcm_bytes()) return {};
  return {tcm->reserved_bytes(), tcm->tcm_bytes() - tcm->reserved_bytes()};
}

[[noreturn]] void bad_use(const std::string& what) { throw BenchError("BAD_USE", what); }

std::string at(Tick t) { return " (at t=" + format_ns(ticks_to_ns(t)) + " ns)"; }

std::string failure(const kbsim::ahbm::Completion& c) { return c.error_code + ": " + c.error_message; }

/// "'a' (2, 3) f16", as errors and summaries name a tensor.
std::string described(const rt::Tensor& t) {
  return "'" + t.name() + "' " + t.shape().str() + " " + std::string(dtype_name(t.dtype()));
}

/// `values` as numpy abbreviates them: all of up to 2 * edge, else the first and last `edge` around "...".
std::string abbreviated(const std::vector<double>& values, std::size_t edge) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values.size() > 2 * edge && i == edge) {
      items.emplace_back("...");
      i = values.size() - edge;
    }
    items.push_back(format_number(values[i]));
  }
  return "[" + join(items) + "]";
}

}  // namespace

HostRuntime::HostRuntime(System& system, Simulator* sim)
    : system_(system),
      sim_(sim),
      map_(kbsim::ahbm::MemoryMap::from(system.attrs())),
      alloc_(map_, mmu_page_size(system),
             [&system](unsigned sip, unsigned cube, unsigned pe) { return allocatable_tcm(system, sip, cube, pe); }),
      memory_(system.service<MemoryStore>()),
      kernels_(system.find<KernelCatalogue>()),
      data_(system.find<DataPass>()) {}

HostRuntime::~HostRuntime() = default;

void HostRuntime::debug(const std::string& text) const {
  if (!sim_) return;
  const NodeIndex ep = system_.lookup_node(names::io(0, 0, "pcie_ep"));
  sim_->log(ep == kNoNode ? 0 : ep, LogLevel::kDebug, text);
}

void HostRuntime::finish() {
  wait_all();  // launches left outstanding still run to completion
  if (submitted_ == 0) throw BenchError("NO_REQUESTS", "used the host runtime but submitted no work");
}

rt::Tensor::Info& HostRuntime::live(const rt::Tensor& t, const std::string& what) {
  if (!t.valid()) bad_use(what + ": an empty tensor handle");
  auto it = tensors_.find(&t.info());
  if (it == tensors_.end())
    bad_use(what + ": tensor '" + t.name() + "' " + (t.info().freed ? "was freed" : "belongs to another runtime"));
  return *it->second;
}

rt::Tensor HostRuntime::empty(const Shape& shape, DType dtype, const rt::DPPolicy& dp, std::string name) {
  auto info = std::make_shared<rt::Tensor::Info>();
  info->name = name.empty() ? "tensor" + std::to_string(tensors_created_ + 1) : std::move(name);
  info->shape = shape;
  info->dtype = dtype;
  info->policy = dp;
  if (dp.space != rt::Space::kHbm && dp.space != rt::Space::kTcm)
    bad_use("empty: tensor '" + info->name + "': the host runtime places tensors in HBM or in TCM only");
  if (workers_.in_worker() && !workers_.device_chosen())
    debug("rank " + std::to_string(workers_.rank()) + " creates tensor '" + info->name +
          "' without set_device(rank): it goes to SIP " + std::to_string(current_device()) +
          ", the driver's device (did the worker forget set_device(rank)?)");
  info->shards = resolve_placement(dp, shape, dtype, current_device(), map_);
  const std::uint64_t layout = lay_out_va(info->shards);
  std::size_t placed = 0;
  try {
    for (rt::ShardSpec& s : info->shards) {
      s.pa = alloc_.allocate(dp.space, s.sip, s.cube, s.pe, s.nbytes, now());
      ++placed;
    }
    info->va = alloc_.allocate_va(layout, now());
  } catch (const Error&) {
    for (std::size_t k = 0; k < placed; ++k) {
      const rt::ShardSpec& s = info->shards[k];
      alloc_.release(dp.space, s.sip, s.cube, s.pe, s.pa, s.nbytes);
    }
    throw;
  }
  info->va_bytes = alloc_.va_bytes(layout);
  for (rt::ShardSpec& s : info->shards) s.va += info->va;
  ++tensors_created_;
  ++submitted_;
  update_mmu(*info, kbsim::ahbm::HostCommand::Kind::kMmuMap);
  tensors_.emplace(info.get(), info);
  if (!scopes().empty()) scopes().back()->emplace_back(info);
  return rt::Tensor(info);
}

rt::Tensor HostRuntime::zeros(const Shape& shape, DType dtype, const rt::DPPolicy& dp, std::string name) {
  rt::Tensor t = empty(shape, dtype, dp, std::move(name));
  write(t, std::vector<std::byte>(t.nbytes()));
  return t;
}

rt::Tensor HostRuntime::from_host(const Shape& shape, DType dtype, std::span<const double> values,
                                  const rt::DPPolicy& dp, std::string name) {
  if (values.size() != static_cast<std::size_t>(shape.elements()))
    bad_use("from_host: shape " + shape.str() + " needs " + std::to_string(shape.elements()) + " values, got " +
            std::to_string(values.size()));
  rt::Tensor t = empty(shape, dtype, dp, std::move(name));
  std::vector<std::byte> bytes(t.nbytes());
  encode_values(values, dtype, bytes.data());
  write(t, bytes);
  return t;
}

void HostRuntime::free(rt::Tensor& t) {
  rt::Tensor::Info& info = live(t, "free");
  update_mmu(info, kbsim::ahbm::HostCommand::Kind::kMmuUnmap);
  for (const rt::ShardSpec& s : info.shards) alloc_.release(info.policy.space, s.sip, s.cube, s.pe, s.pa, s.nbytes);
  alloc_.release_va(info.va, info.va_bytes);
  info.freed = true;
  tensors_.erase(&info);
}

rt::TransferResult HostRuntime::write(const rt::Tensor& t, std::span<const std::byte> bytes) {
  const rt::Tensor::Info& info = live(t, "write");
  if (bytes.size() != t.nbytes())
    bad_use("write: tensor '" + info.name + "' holds " + std::to_string(t.nbytes()) + " bytes, got " +
            std::to_string(bytes.size()));
  std::vector<const rt::ShardSpec*> shards;
  std::vector<BytesPtr> data;
  for (const rt::ShardSpec& s : info.shards) {
    auto buf = std::make_shared<Bytes>(s.nbytes);
    gather_shard(bytes, info.shape, info.dtype, s, *buf);
    memory_.write(s.pa, *buf);  // visible at issue (docs/model.md, "The two-pass data model")
    shards.push_back(&s);
    data.push_back(std::move(buf));
  }
  rt::TransferResult r = transfer(info, kbsim::ahbm::MemOp::kWrite, shards);
  if (data_) {
    const std::string ep = names::io(shards.front()->sip, 0, "pcie_ep");
    for (std::size_t k = 0; k < shards.size(); ++k)
      data_->host_write(ep, shards[k]->pa, std::move(data[k]), r.t_submit, r.t_done);
  }
  return r;
}

std::vector<std::byte> HostRuntime::read(const rt::Tensor& t, rt::TransferResult* timing) {
  const rt::Tensor::Info& info = live(t, "read");
  wait_for_launches_on(info.shards.front().sip);
  const std::vector<const rt::ShardSpec*> pieces = distinct_pieces(info.shards);
  rt::TransferResult r = transfer(info, kbsim::ahbm::MemOp::kRead, pieces);
  std::vector<std::byte> out(t.nbytes()), buf;
  if (data_) data_->flush();  // computed values, as far as no kernel still running can change them
  for (const rt::ShardSpec* s : pieces) {
    if (data_) {
      scatter_shard(*data_->read_hbm(s->pa, s->nbytes, now()), info.shape, info.dtype, *s, out);
      continue;
    }
    buf.resize(s->nbytes);
    memory_.read(s->pa, buf);
    scatter_shard(buf, info.shape, info.dtype, *s, out);
  }
  if (timing) *timing = r;
  return out;
}

void HostRuntime::wait_for_launches_on(unsigned sip) {
  // A host-read barrier: the launches still running on the tensor's SIP may write it, so they finish first.
  for (const auto& [id, c] : commands_)
    if (!c.done && c.cmd->kind == kbsim::ahbm::HostCommand::Kind::kLaunch && !c.cmd->targets.empty() &&
        c.cmd->targets.front().sip == sip)
      wait({id});
}

rt::TransferResult HostRuntime::copy(const rt::Tensor& dst, const rt::Tensor& src) {
  live(dst, "copy");
  live(src, "copy");
  if (dst.shape() != src.shape() || dst.dtype() != src.dtype())
    bad_use("copy: tensor " + described(src) + " does not fit tensor " + described(dst) +
            " (shapes and dtypes must agree)");
  rt::TransferResult from;
  const std::vector<std::byte> bytes = read(src, &from);
  rt::TransferResult r = write(dst, bytes);
  r.t_submit = from.t_submit;
  return r;
}

std::string HostRuntime::summary(const rt::Tensor& t) {
  constexpr std::size_t kEdgeItems = 3;
  const rt::Tensor::Info& info = live(t, "summary");
  const PlacementExtent e = placement_extent(info.policy, map_);
  const std::size_t shards = info.shards.size();
  return "tensor " + described(t) + " on sip" + std::to_string(info.shards.front().sip) + " [cube " +
         split_name(info.policy.cube) + " x" + std::to_string(e.cubes) + ", pe " + split_name(info.policy.pe) + " x" +
         std::to_string(e.pes) + ", " + std::to_string(shards) + (shards == 1 ? " shard]: " : " shards]: ") +
         abbreviated(read_values(t), kEdgeItems);
}

void HostRuntime::open_scope(std::vector<rt::Tensor>& made) { scopes().push_back(&made); }

void HostRuntime::close_scope(std::vector<rt::Tensor>& made) {
  std::vector<std::vector<rt::Tensor>*>& open = scopes();
  open.erase(std::remove(open.begin(), open.end(), &made), open.end());
}

HostRuntime::Command& HostRuntime::submit(unsigned sip, Ref<kbsim::ahbm::HostCommand> cmd) {
  const std::string node = names::io(sip, 0, "io_cpu");
  auto* target = kbsim::ahbm::as_command_target(system_.component(node));
  if (!target) throw ConfigError(node + " does not accept host commands (its implementation is no IO_CPU)");
  cmd->correlation_id = next_correlation_++;
  cmd->target_device = sip;
  cmd->t_issue = now();
  Command& c = commands_[cmd->correlation_id];
  c.cmd = cmd;
  c.t_submit = now();
  target->submit(std::move(cmd), this);
  return c;
}

void HostRuntime::on_complete(kbsim::ahbm::HostCommand& cmd) {
  auto it = commands_.find(cmd.correlation_id);
  if (it == commands_.end())
    throw SimError("host: a completion arrived for a command it did not submit (correlation " +
                   std::to_string(cmd.correlation_id) + ")" + at(now()));
  it->second.done = true;
  it->second.t_done = now();
  if (system_.is_split()) done_commands_.push_back(cmd.correlation_id);
  system_.request_stop();
}

void HostRuntime::on_complete(kbsim::ahbm::MemRequest& req) {
  if (transfer_.pending == 0 || req.correlation_id != transfer_.requests.front()->correlation_id)
    throw SimError("host: a memory completion arrived for a request it did not submit (correlation " +
                   std::to_string(req.correlation_id) + ")" + at(now()));
  if (system_.is_split()) done_requests_.emplace_back(req.correlation_id, req.request_id);
  if (--transfer_.pending == 0) system_.request_stop();
}

void HostRuntime::save_news(ByteWriter& w) {
  // Each completion with the answer it brought: the other ranks load it into their own copy of the command or
  // request (the same, made by the same bench code), which never left them.
  w.put(static_cast<std::uint64_t>(done_commands_.size()));
  for (std::uint64_t id : done_commands_) {
    const Command& c = commands_.at(id);
    w.put(id);
    w.put(c.t_done);
    c.cmd->save(w);
  }
  w.put(static_cast<std::uint64_t>(done_requests_.size()));
  for (const auto& [correlation, request] : done_requests_) {
    w.put(correlation);
    w.put(request);
    transfer_.requests.at(request - 1)->save(w);
  }
  done_commands_.clear();
  done_requests_.clear();
}

void HostRuntime::load_news(ByteReader& r) {
  const auto diverged = [](const std::string& what) {
    return SimError("host: another rank completed " + what + ", which this rank's bench did not submit");
  };
  for (std::size_t n = r.get_count(); n > 0; --n) {
    const auto id = r.get<std::uint64_t>();
    auto it = commands_.find(id);
    if (it == commands_.end()) throw diverged("command " + std::to_string(id));
    it->second.t_done = r.get<Tick>();
    it->second.cmd->load(r);
    it->second.done = true;
  }
  for (std::size_t n = r.get_count(); n > 0; --n) {
    const auto correlation = r.get<std::uint64_t>();
    const auto request = r.get<std::uint64_t>();
    if (transfer_.pending == 0 || request == 0 || request > transfer_.requests.size() ||
        transfer_.requests[request - 1]->correlation_id != correlation)
      throw diverged("memory request " + std::to_string(correlation) + "." + std::to_string(request));
    transfer_.requests[request - 1]->load(r);
    --transfer_.pending;
  }
}

void HostRuntime::run_until(const std::function<bool()>& done, const std::function<std::string()>& stuck) {
  while (!done()) {
    if (system_.idle()) {
      std::string waits;  // who waits on what, as the components themselves say it
      for (const std::string& what : system_.waiting()) waits += (waits.empty() ? "" : "; ") + what;
      throw SimError("simulation stuck" + at(now()) + ": " + stuck() + (waits.empty() ? "" : "; blocked: " + waits));
    }
    system_.run();
  }
}

void HostRuntime::set_device(unsigned sip) {
  if (sip >= map_.sips)
    bad_use("set_device(" + std::to_string(sip) + "): the system has " + std::to_string(map_.sips) + " SIPs");
  workers_.set_device(sip);
}

void HostRuntime::update_mmu(const rt::Tensor::Info& info, kbsim::ahbm::HostCommand::Kind kind) {
  auto cmd = make_message<kbsim::ahbm::HostCommand>();
  cmd->kind = kind;
  cmd->targets = holders(info.shards);
  cmd->entries = std::make_shared<const std::vector<kbsim::ahbm::MmuEntry>>(mmu_entries(info.shards));
  const Command& c = submit(info.shards.front().sip, cmd);
  const std::string what = std::string(kind == kbsim::ahbm::HostCommand::Kind::kMmuMap ? "MMU map" : "MMU unmap") +
                           " of tensor '" + info.name + "' (correlation " + std::to_string(cmd->correlation_id) + ")";
  run_until([&] { return c.done; }, [&] { return what + " never completed"; });
  if (!cmd->completion.ok) throw SimError(what + " failed: " + failure(cmd->completion) + at(now()));
  commands_.erase(cmd->correlation_id);
}

// A shard lies in one PE's HBM slice or TCM (it is allocated there), so one request
// per shard always passes the initiator's check_access (no CROSSES_SLICE or OVERSIZE).
// A TCM shard's request goes pcie_ep -> fabric -> the PE's router -> pe_dma -> pe_tcm.
rt::TransferResult HostRuntime::transfer(const rt::Tensor::Info& info, kbsim::ahbm::MemOp op,
                                         const std::vector<const rt::ShardSpec*>& shards) {
  std::vector<Extent> extents;
  for (const rt::ShardSpec* s : shards) extents.push_back({s->pa, s->nbytes});
  return transfer(info, op, extents);
}

rt::TransferResult HostRuntime::transfer(const rt::Tensor::Info& info, kbsim::ahbm::MemOp op,
                                         const std::vector<Extent>& extents) {
  const unsigned sip = info.shards.front().sip;
  const std::string node = names::io(sip, 0, "pcie_ep");
  auto* ep = kbsim::ahbm::as_initiator(system_.component(node));
  if (!ep) throw ConfigError(node + " does not initiate memory requests (its implementation is no PCIE_EP)");
  const std::uint64_t id = next_correlation_++;
  ++submitted_;
  rt::TransferResult r;
  r.t_submit = now();
  transfer_ = {};
  for (const Extent& e : extents) {
    auto req = make_message<kbsim::ahbm::MemRequest>();
    req->op = op;
    req->pa = e.pa;
    req->nbytes = e.nbytes;
    req->correlation_id = id;
    req->target_device = sip;
    if (op == kbsim::ahbm::MemOp::kWrite)
      req->dst_mem_kind =
          info.policy.space == rt::Space::kTcm ? kbsim::ahbm::MemKind::kTcm : kbsim::ahbm::MemKind::kHbm;
    req->request_id = transfer_.requests.size() + 1;
    transfer_.requests.push_back(req);
    r.bytes += e.nbytes;
  }
  transfer_.pending = transfer_.requests.size();
  for (const auto& req : transfer_.requests) ep->submit(req, this);
  const std::string what = std::string(op == kbsim::ahbm::MemOp::kWrite ? "write" : "read") + " of tensor '" +
                           info.name + "' (correlation " + std::to_string(id) + ")";
  run_until([&] { return transfer_.pending == 0; },
            [&] {
              return what + ": " + std::to_string(transfer_.pending) + " of " +
                     std::to_string(transfer_.requests.size()) + " requests never completed";
            });
  for (const auto& req : transfer_.requests) {
    r.t_done = std::max(r.t_done, req->t_done);
    if (!req->completion.ok && r.completion.ok) r.completion = req->completion;
  }
  transfer_ = {};
  if (!r.completion.ok) throw SimError(what + " failed: " + failure(r.completion) + at(now()));
  return r;
}

}  // namespace kbsim::host_runtime
