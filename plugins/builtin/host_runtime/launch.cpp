// HostRuntime: kernel launches (docs/model.md,
// "Host commands and the launch barrier"): one kLaunch host command to the
// SIP's io_cpu per launch; wait() runs the system until its completion.
#include <algorithm>
#include <tuple>
#include <utility>

#include "host_runtime.hpp"
#include "kbsim/text.hpp"
#include "placement.hpp"

namespace kbsim::host_runtime {

namespace {

[[noreturn]] void bad_use(const std::string& what) { throw BenchError("BAD_USE", what); }

tl::TensorArg tensor_arg(const rt::Tensor::Info& info) {
  tl::TensorArg a;
  a.ptr = info.va;
  a.shape = info.shape;
  a.dtype = info.dtype;
  for (const rt::ShardSpec& s : info.shards)
    a.shards.push_back({s.cube, s.pe, s.va, s.offset_bytes, s.nbytes, s.shape});
  return a;
}

/// The global dim -> local dim rewrites of a launch's integer arguments (LaunchOptions::auto_dim_remap): every
/// dim of a tensor argument that its first shard holds less of, the first tensor argument having a value deciding.
std::vector<std::pair<std::int64_t, std::int64_t>> dim_remap(const std::vector<rt::Arg>& args) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const rt::Arg& a : args) {
    const auto* t = std::get_if<rt::Tensor>(&a);
    if (!t || !t->valid() || t->info().freed) continue;
    const Shape& global = t->shape();
    const Shape& local = t->shards().front().shape;
    for (std::size_t d = 0; d < global.rank() && d < local.rank(); ++d) {
      const bool known = std::any_of(out.begin(), out.end(), [&](const auto& m) { return m.first == global[d]; });
      if (local[d] != global[d] && !known) out.emplace_back(global[d], local[d]);
    }
  }
  return out;
}

}  // namespace

rt::LaunchHandle HostRuntime::launch(std::string_view kernel, std::vector<rt::Arg> args,
                                     const rt::LaunchOptions& given) {
  rt::LaunchOptions opt = given;
  if (opt.sip == rt::LaunchOptions::kCurrentDevice) opt.sip = current_device();
  const std::string name(kernel);
  if (check_kernels_ && (!kernels_ || !kernels_->find(name))) {
    std::vector<std::string> known = kernels_ ? kernels_->names() : std::vector<std::string>{};
    bad_use("launch: unknown kernel '" + name + "' (" +
            (known.empty() ? std::string("no kernel is registered") : "known: " + join(known)) + ")");
  }
  const std::string what = "launch of '" + name + "'";
  if (opt.sip >= map_.sips)
    bad_use(what + ": SIP " + std::to_string(opt.sip) + " does not exist (the system has " + std::to_string(map_.sips) +
            ")");
  const auto remap = opt.auto_dim_remap ? dim_remap(args) : std::vector<std::pair<std::int64_t, std::int64_t>>{};
  std::vector<tl::Args::Value> values;
  PlacementExtent largest;  // 1 x 1 unless a tensor argument uses more
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto* t = std::get_if<rt::Tensor>(&args[i])) {
      const rt::Tensor::Info& info = live(*t, what + ": argument " + std::to_string(i));
      if (info.shards.front().sip != opt.sip)
        bad_use(what + " on SIP " + std::to_string(opt.sip) + ": argument " + std::to_string(i) + " (tensor '" +
                info.name + "') is placed on SIP " + std::to_string(info.shards.front().sip));
      const PlacementExtent e = placement_extent(info.policy, map_);
      largest = {std::max(largest.cubes, e.cubes), std::max(largest.pes, e.pes)};
      values.emplace_back(tensor_arg(info));
    } else if (const auto* n = std::get_if<std::int64_t>(&args[i])) {
      const auto m = std::find_if(remap.begin(), remap.end(), [&](const auto& r) { return r.first == *n; });
      values.emplace_back(m == remap.end() ? *n : m->second);
    } else {
      values.emplace_back(std::get<double>(args[i]));
    }
  }
  auto cmd = make_message<kbsim::ahbm::HostCommand>();
  cmd->kind = kbsim::ahbm::HostCommand::Kind::kLaunch;
  cmd->kernel = name;
  cmd->failure_policy = opt.failure_policy;
  cmd->grid_cubes = opt.grid_cubes ? opt.grid_cubes : largest.cubes;
  cmd->grid_pes = opt.grid_pes ? opt.grid_pes : largest.pes;
  if (cmd->grid_cubes > map_.cubes_per_sip || cmd->grid_pes > map_.pes_per_cube)
    bad_use(what + ": a grid of " + std::to_string(cmd->grid_cubes) + " cubes x " + std::to_string(cmd->grid_pes) +
            " PEs does not fit a SIP of " + std::to_string(map_.cubes_per_sip) + " cubes x " +
            std::to_string(map_.pes_per_cube) + " PEs");
  for (unsigned c = 0; c < cmd->grid_cubes; ++c)
    for (unsigned p = 0; p < cmd->grid_pes; ++p) cmd->targets.push_back({opt.sip, c, p});
  cmd->args = std::make_shared<const tl::Args>(std::move(values));
  ++submitted_;
  const Command& c = submit(opt.sip, cmd);
  rt::LaunchResult& r = launches_[cmd->correlation_id];
  r.kernel = name;
  r.t_submit = c.t_submit;
  return {cmd->correlation_id};
}

const rt::LaunchResult& HostRuntime::wait(rt::LaunchHandle h) {
  auto it = launches_.find(h.id);
  if (it == launches_.end()) bad_use("wait: no launch has handle " + std::to_string(h.id));
  rt::LaunchResult& r = it->second;
  const Command& c = commands_.at(h.id);
  const kbsim::ahbm::HostCommand& cmd = *c.cmd;
  const std::string what = "launch of '" + r.kernel + "' (correlation " + std::to_string(h.id) + ")";
  workers_.block([&c] { return c.done; }, what);  // a spawn worker lets the others go on meanwhile
  run_until([&] { return c.done; },
            [&] {
              return what + " never completed; " + std::to_string(cmd.targets.size() - cmd.results.size()) +
                     " PEs pending";
            });
  if (!cmd.completion.ok)
    throw SimError(what + " failed: " + cmd.completion.error_code + ": " + cmd.completion.error_message +
                   " (at t=" + format_ns(ticks_to_ns(c.t_done)) + " ns)");
  r.completion = cmd.completion;
  r.t_done = c.t_done;
  r.pe_exec_ns = cmd.pe_exec_ns;
  r.dma_ns = cmd.dma_ns;
  r.compute_ns = cmd.compute_ns;
  r.pes = cmd.results;
  std::sort(r.pes.begin(), r.pes.end(), [](const kbsim::ahbm::PeResult& a, const kbsim::ahbm::PeResult& b) {
    return std::tie(a.pe.sip, a.pe.cube, a.pe.pe) < std::tie(b.pe.sip, b.pe.cube, b.pe.pe);
  });
  return r;
}

void HostRuntime::wait_all() {
  for (const auto& [id, result] : launches_) wait({id});
}

}  // namespace kbsim::host_runtime
