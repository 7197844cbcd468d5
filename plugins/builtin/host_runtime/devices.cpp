// --device (devices.hpp) and HostRuntime::on_devices.
#include "devices.hpp"

#include <charconv>
#include <memory>

#include "host_runtime.hpp"

namespace kbsim::host_runtime {

namespace {

/// What one SIP's run of a bench sees under --device all: the run's context, with its own metrics, notes and files.
class DeviceContext final : public BenchContext {
 public:
  DeviceContext(BenchContext& run, unsigned sip, Metrics& metrics)
      : run_(run),
        metrics_(metrics),
        prefix_("sip " + std::to_string(sip) + ": "),
        file_prefix_("sip" + std::to_string(sip) + "-") {}
  const Params& params() const noexcept override { return run_.params(); }
  const Graph& topology() override { return run_.topology(); }
  System& build(const Graph& graph) override { return run_.build(graph); }
  System& build(Graph&& graph) override { return run_.build(std::move(graph)); }
  void release(System& system) override { run_.release(system); }
  Metrics& metrics() noexcept override { return metrics_; }
  void note(std::string_view line) override { run_.note(prefix_ + std::string(line)); }
  System& configured() override { return run_.configured(); }
  const Params& flags() const noexcept override { return run_.flags(); }
  const Section& section(std::string_view name) const override { return run_.section(name); }
  const Metrics& run_bench(std::string_view name, const std::vector<std::string>& params,
                           const std::vector<std::string>& overrides) override {
    return run_.run_bench(name, params, overrides);
  }
  std::vector<PointResult> run_points(const std::vector<SweepPoint>& points) override {
    return run_.run_points(points);
  }
  void write_file(std::string_view name, std::string content) override {
    run_.write_file(file_prefix_ + std::string(name), std::move(content));
  }

 private:
  BenchContext& run_;
  Metrics& metrics_;
  std::string prefix_, file_prefix_;
};

[[noreturn]] void bad_selector(const std::string& selector, const std::string& why) {
  throw UsageError("--device " + selector + ": " + why);
}

}  // namespace

std::vector<unsigned> selected_devices(const std::string& selector, unsigned sips) {
  std::vector<unsigned> out;
  if (selector == "all") {
    for (unsigned s = 0; s < sips; ++s) out.push_back(s);
    return out;
  }
  constexpr std::string_view kSip = "sip:";
  unsigned n = 0;
  const char* end = selector.data() + selector.size();
  if (selector.rfind(kSip, 0) != 0 || selector.size() == kSip.size() ||
      std::from_chars(selector.data() + kSip.size(), end, n).ptr != end)
    bad_selector(selector, "expected all or sip:N");
  if (n >= sips)
    bad_selector(selector, "the system has " + std::to_string(sips) + " SIP" + (sips == 1 ? "" : "s") + " (sip:0.." +
                               "sip:" + std::to_string(sips - 1) + ")");
  return {n};
}

void HostRuntime::on_devices(BenchContext& ctx, const std::function<void(BenchContext&)>& body) {
  const std::string& selector = ctx.flags().get(rt::kDeviceFlag);
  const std::vector<unsigned> sips = selected_devices(selector, map_.sips);
  if (selector != rt::kDeviceFlag.def) ctx.metrics().set("device", selector);
  if (selector != "all") {
    set_device(sips.front());
    body(ctx);
    return;
  }
  Metrics& per = ctx.metrics().object("devices");
  std::vector<std::unique_ptr<DeviceContext>> views;
  for (unsigned s : sips)
    views.push_back(std::make_unique<DeviceContext>(ctx, s, per.object("sip" + std::to_string(s))));
  workers_.spawn(
      [&](unsigned rank) {
        set_device(sips[rank]);
        body(*views[rank]);
      },
      static_cast<unsigned>(sips.size()), [this](const auto& done, const auto& stuck) { run_until(done, stuck); });
}

ObserverInfo DeviceFlag::info() {
  ObserverInfo i{"device", "declares --device, the SIPs a single-device bench runs on (it observes nothing)"};
  i.flags = {{rt::kDeviceFlag, "all|sip:N"}};
  return i;
}

}  // namespace kbsim::host_runtime
