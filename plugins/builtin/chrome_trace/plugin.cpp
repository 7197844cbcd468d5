// The Chrome/Perfetto timeline as a run observer: with --trace FILE, every
// data-operation record of the configured system becomes a slice on its
// component's track as soon as it completes; the file is put in place once
// the results are written.
#include "kbsim/plugin.hpp"

#include <memory>

#include "chrome_trace.hpp"
#include "kbsim/files.hpp"
#include "kbsim/observer.hpp"

namespace kbsim::chrome_trace {

constexpr StringParam kTraceFlag{"trace", "", "write a timeline (Chrome/Perfetto trace JSON) to FILE"};

class TraceObserver final : public RunObserver {
 public:
  static ObserverInfo info() {
    return {"chrome_trace",
            "--trace FILE: a Chrome/Perfetto timeline (JSON) of the op log, one track per component",
            {{kTraceFlag, "FILE"}}};
  }
  static TraceObserver* create(const RunRequest& request) {
    const std::string& file = request.flags.get(kTraceFlag);
    if (file.empty()) return nullptr;
    if (!request.writes_outputs) return new TraceObserver();  // logs alike, writes nothing
    check_output_file("--trace", file);
    try {
      return new TraceObserver(file);  // a bad path fails before the run
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(std::string("--trace: ") + e.what());
    }
  }

  void on_record(const OpRecord& r) override {
    if (trace_) trace_->add(r);
  }
  void commit() override {
    if (trace_) trace_->close();
  }
  std::string written() const override {
    return trace_ ? "trace      " + path_ + " (open in https://ui.perfetto.dev)" : std::string();
  }

 private:
  TraceObserver() = default;
  explicit TraceObserver(const std::string& path) : path_(path), trace_(std::make_unique<ChromeTrace>(path)) {}
  std::string path_;
  std::unique_ptr<ChromeTrace> trace_;
};

}  // namespace kbsim::chrome_trace

KBSIM_PLUGIN("chrome_trace") { kbsim::add_observer<kbsim::chrome_trace::TraceObserver>(plugin); }
