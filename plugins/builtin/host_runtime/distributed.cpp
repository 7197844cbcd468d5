#include "distributed.hpp"

#include <algorithm>
#include <set>

#include "ipcq_install.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/text.hpp"

namespace kbsim::host_runtime {

namespace names = kbsim::ahbm::names;

namespace {

[[noreturn]] void bad_use(const std::string& what) { throw BenchError("BAD_USE", what); }

bool listed(const std::vector<std::string>& list, std::string_view v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

template <class Ask>
auto Distributed::ask(const std::string& name, const char* method, unsigned rank, Ask&& ask) const -> decltype(ask()) {
  try {
    return ask();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;  // out of memory is the run's, not the algorithm's
  } catch (const std::exception& e) {
    throw PluginError("CCL algorithm " + name + " failed in its " + method + " (rank " + std::to_string(rank) +
                      ", sim time " + format_ns(ticks_to_ns(rt_.now())) + " ns): " + one_line(e.what()));
  }
}

Distributed::Distributed(System& system)
    : system_(system),
      rt_(dynamic_cast<HostRuntime&>(system.service<rt::Runtime>())),
      shape_(ccl::SystemShape::from(system.attrs())) {}

std::string_view Distributed::get_backend() const {
  require_initialized("get_backend");
  return "ahbm";
}

void Distributed::require_initialized(const char* call) const {
  if (!algorithm_)
    bad_use(std::string(call) + ": the default process group has not been initialized (call init_process_group)");
}

unsigned Distributed::get_rank() const {
  require_initialized("get_rank");
  if (!rt_.workers().in_worker() && world_ > 1)
    rt_.debug("get_rank() called outside a spawned worker of a world of " + std::to_string(world_) +
              ": it returns 0 (a bug, unless the driver means rank 0)");
  return rt_.workers().rank();
}

unsigned Distributed::get_world_size() const {
  require_initialized("get_world_size");
  return world_;
}

void Distributed::init_process_group(const ccl::Config& ccl, std::string_view backend) {
  if (backend != "ahbm")
    bad_use("init_process_group: unsupported backend '" + std::string(backend) + "' (kbsim has 'ahbm')");
  if (algorithm_) bad_use("init_process_group: the default process group is already initialized");
  const ccl::Config::Entry& e = ccl.entry();
  std::unique_ptr<ccl::Algorithm> a = ask(ccl.algorithm, "constructor", 0, [&] { return ccl.create(); });
  const ccl::Algorithm* algo = a.get();
  const Params& p = e.params;
  const pe::IpcqConfig cfg = ipcq_config(p);  // the shared values first: they are checked there
  const std::string topo(ccl::kSipTopologyNames[static_cast<int>(shape_.topology)]);
  if (!listed(e.info->sip_topologies, topo))
    throw ConfigError(ccl.source + ": CCL algorithm " + ccl.algorithm + " does not support SIP topology " + topo +
                      " (it supports " + joined(e.info->sip_topologies) + ")");
  using ccl::param::kBufferKind, ccl::param::kWorldSize;
  if (!listed(e.info->buffer_kinds, p.get(kBufferKind)))
    p.check(false, kBufferKind,
            "is not supported by " + ccl.algorithm + " (it supports " + joined(e.info->buffer_kinds) + ")");
  p.check(p.get(kWorldSize) >= 0, kWorldSize, "must be >= 0 (0: one rank per SIP)");
  const auto ws = static_cast<unsigned>(p.get(kWorldSize));
  p.check(ws <= shape_.sips, kWorldSize,
          "asks for " + std::to_string(ws) + " ranks; the system has " + std::to_string(shape_.sips) + " SIPs");
  const unsigned world = ws ? ws : shape_.sips;
  if (world != shape_.sips && shape_.topology != ccl::SipTopology::kRing1d)
    p.check(false, kWorldSize, "must cover every SIP of a " + topo + " grid");
  install(ask(ccl.algorithm, "wiring", 0, [&] { return algo->wiring({shape_, world, p}); }), cfg);
  owned_ = std::move(a);
  algorithm_ = algo;
  algorithm_name_ = ccl.algorithm;
  params_ = p;
  world_ = world;
  calls_.assign(world, 0);
}

void Distributed::install_ipcq(const std::vector<ccl::Wire>& wires, const ccl::Config& ccl) {
  install(wires, ipcq_config(ccl.of()));
}

void Distributed::install(const std::vector<ccl::Wire>& wires, const pe::IpcqConfig& cfg) {
  QueueTables tables = plan_queues(wires, cfg);
  // Every PE_IPCQ gets its table (an empty one clears an earlier install).
  for (unsigned s = 0; s < shape_.sips; ++s)
    for (unsigned c = 0; c < shape_.cubes(); ++c)
      for (unsigned p = 0; p < shape_.pes_per_cube; ++p) {
        const ahbm::PeRef pe{s, c, p};
        const NodeIndex n = system_.lookup_node(names::pe_part(s, c, p, "pe_ipcq"));
        auto it = tables.find(pe);
        pe::IpcqPort* port = n == kNoNode ? nullptr : pe::as_ipcq(system_.component(n));
        if (!port) {
          if (it != tables.end())
            throw ConfigError("IPCQ wiring uses " + names::pe(s, c, p) +
                              ", which has no PE_IPCQ (add pe_ipcq to cube.pe_template)");
          continue;
        }
        port->install(cfg, it == tables.end() ? std::vector<pe::IpcqQueue>{} : std::move(it->second));
      }
}

void Distributed::all_reduce(const rt::Tensor& t, std::string_view op) {
  require_initialized("all_reduce");
  if (op != "sum") throw BenchError("NOT_SUPPORTED", "all_reduce: op '" + std::string(op) + "' is not supported (sum)");
  const unsigned rank = rt_.workers().rank();
  if (!rt_.workers().in_worker() && world_ > 1)
    bad_use("all_reduce outside spawn with a world of " + std::to_string(world_) +
            " ranks: every rank must call it (run the ranks with spawn)");
  if (rank >= world_) bad_use("all_reduce: rank " + std::to_string(rank) + " is outside the world");
  const auto& shards = t.shards();
  if (shards.empty()) bad_use("all_reduce: tensor '" + t.name() + "' has no shards");
  if (shards.front().sip != rank)
    bad_use("all_reduce: rank " + std::to_string(rank) + "'s tensor '" + t.name() + "' is on SIP " +
            std::to_string(shards.front().sip) + " (call set_device(rank) before creating it)");
  std::set<unsigned> cubes;
  for (const auto& s : shards) cubes.insert(s.cube);
  ccl::Collective c{{shape_, world_, params_}, rank, shards.front().nbytes / dtype_size(t.dtype()), t.dtype(), 1, 1};
  if (cubes.size() > 1) {
    c.cube_w = shape_.cube_w;
    c.cube_h = shape_.cube_h;
  }
  const ccl::Launch l = ask(algorithm_name_, "launch", rank, [&] { return algorithm_->launch(c); });
  std::vector<rt::Arg> args{t, std::int64_t{rank}, std::int64_t{world_}, static_cast<std::int64_t>(c.n_elem)};
  static_assert(ccl::kRuntimeArgs == 4, "the runtime's arguments, as ccl::KernelArgs reads them");
  for (const auto& a : l.args) std::visit([&](auto v) { args.emplace_back(v); }, a);
  rt::LaunchOptions opt;
  opt.sip = rank;
  opt.grid_cubes = l.grid_cubes;
  opt.grid_pes = l.grid_pes;
  opt.auto_dim_remap = false;  // rank, world and n_elem are the kernel's values as they are
  const rt::LaunchHandle h = rt_.launch(l.kernel, std::move(args), opt);
  const unsigned call = calls_[rank]++;
  if (pending_.size() <= call) pending_.resize(call + 1);
  pending_[call].algorithm = algorithm_name_;
  pending_[call].kernel = l.kernel;
  pending_[call].n_elem = c.n_elem;
  pending_[call].ranks.resize(world_);
  rt::LaunchResult result = rt_.wait(h);  // in a worker: the other ranks go on until it completes
  rt::CollectiveResult& r = pending_[call];
  r.ranks[rank] = std::move(result);
  if (std::all_of(r.ranks.begin(), r.ranks.end(), [](const rt::LaunchResult& x) { return !x.kernel.empty(); }))
    done_.push_back(r);
}

void Distributed::barrier() {
  require_initialized("barrier");
  rt_.workers().barrier();
}

void Distributed::spawn(const std::function<void(unsigned)>& fn, unsigned nprocs) {
  rt_.workers().spawn(fn, nprocs, [this](const auto& done, const auto& stuck) { rt_.run_until(done, stuck); });
}

}  // namespace kbsim::host_runtime
