// The Chrome/Perfetto timeline as a run observer: with --trace FILE, every
// data-operation record of the configured system becomes a slice on its
// component's track as soon as it completes; the file is put in place once
// the results are written.
#include "kbsim/plugin.hpp"

#include <memory>

#include "chrome_trace.hpp"
#include "kbsim/observer.hpp"

namespace kbsim::chrome_trace {

class TraceObserver final : public RunObserver {
 public:
  static ObserverInfo info() {
    return {"chrome_trace", "--trace FILE: a Chrome/Perfetto timeline (JSON) of the op log, one track per component"};
  }
  static TraceObserver* create(const RunRequest& request) {
    if (request.trace.empty()) return nullptr;
    try {
      return new TraceObserver(request.trace.string());  // a bad path fails before the run
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(std::string("--trace: ") + e.what());
    }
  }

  void on_record(const OpRecord& r) override { trace_.add(r); }
  void commit() override { trace_.close(); }

 private:
  explicit TraceObserver(std::string path) : trace_(std::move(path)) {}
  ChromeTrace trace_;
};

}  // namespace kbsim::chrome_trace

KBSIM_PLUGIN("chrome_trace") { kbsim::add_observer<kbsim::chrome_trace::TraceObserver>(plugin); }
