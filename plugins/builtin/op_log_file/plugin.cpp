// The op log as a file, a run observer: with --op-log FILE, every record of the
// configured system is kept and written as JSON (op_log_json.hpp) beside the
// results, once they are written.
#include "kbsim/plugin.hpp"

#include <filesystem>
#include <string>

#include "kbsim/files.hpp"
#include "kbsim/observer.hpp"
#include "op_log_json.hpp"

namespace kbsim::op_log_file {

constexpr StringParam kOpLogFlag{"op-log", "", "write the op log (JSON, records in start order) to FILE"};

class OpLogObserver final : public RunObserver {
 public:
  static ObserverInfo info() {
    return {"op_log_file", "--op-log FILE: the op log's records as JSON, in start order", {{kOpLogFlag, "FILE"}}};
  }
  static OpLogObserver* create(const RunRequest& request) {
    const std::string& file = request.flags.get(kOpLogFlag);
    if (file.empty()) return nullptr;
    if (!request.writes_outputs) return new OpLogObserver({});  // logs alike, writes nothing
    check_output_file("--op-log", file);
    return new OpLogObserver(file);
  }

  bool keeps_records() const noexcept override { return !file_.empty(); }
  void attach(System& system, OpLogView& log) override {
    (void)system;
    log_ = &log;
  }
  void commit() override {
    if (!file_.empty() && log_) json::write_json_file(file_, [&](json::JsonWriter& w) { write_op_log(w, *log_); });
  }
  std::string written() const override { return file_.empty() ? std::string() : "op log     " + file_.string(); }

 private:
  explicit OpLogObserver(std::filesystem::path file) : file_(std::move(file)) {}
  std::filesystem::path file_;
  const OpLogView* log_ = nullptr;
};

}  // namespace kbsim::op_log_file

KBSIM_PLUGIN("op_log_file") { kbsim::add_observer<kbsim::op_log_file::OpLogObserver>(plugin); }
