// The collective trace, a run observer (docs/model.md, "IPCQ"): with
// --ccl-trace FILE, one CSV line per IPCQ send, in time order, and the PE_IPCQ
// queue tables (direction -> peer and rx ring) as the results section
// "ipcq_queues".
//
// A send is logged by the receiving PE_DMA as its `ipcq_copy` slot write; the
// record names the receiver and the slot address. The receiver's installed
// queue whose rx ring holds that address names the sender (its peer) and the
// sender's direction (its peer_dir). The time is the slot write's, at the
// receiver: the send itself leaves the sender at once but is not a record.
#include "kbsim/plugin.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/files.hpp"
#include "kbsim/observer.hpp"
#include "kbsim/pe/ipcq.hpp"

namespace kbsim::ccl_trace {

namespace names = ahbm::names;

constexpr StringParam kCclTraceFlag{"ccl-trace", "",
                                    "write one CSV line per IPCQ send to FILE (and the queue tables to results.json)"};

/// The CSV header: the columns of a send line.
constexpr std::string_view kHeader = "t_ns,t_end_ns,rank,sender,dir,nbytes,receiver,rx_dir,slot_addr";

/// One send, as its slot write at the receiver saw it.
struct Send {
  Tick t_start = 0, t_end = 0;
  std::uint64_t seq = 0;  ///< the record's: orders sends of equal start
  int rank = -1;          ///< the sender's SIP (-1: unknown)
  std::string sender, dir, receiver, rx_dir;
  std::int64_t nbytes = 0;
  std::uint64_t slot_addr = 0;
};

/// Ticks as nanoseconds with every picosecond: "1900.900".
std::string ns_text(Tick t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(t / kPsPerNs),
                static_cast<unsigned long long>(t % kPsPerNs));
  return buf;
}

std::string hex_text(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// An integer parameter of a record, or `fallback`.
std::int64_t int_param(const OpRecord& r, std::string_view key, std::int64_t fallback) {
  for (const OpParam& p : r.params)
    if (p.key == key)
      if (const auto* v = std::get_if<std::int64_t>(&p.value)) return *v;
  return fallback;
}

/// The queues installed on one PE_IPCQ, in rx address order (only the SDK's known direction names are visible).
std::vector<pe::IpcqQueue> installed(const pe::IpcqPort& port) {
  std::vector<pe::IpcqQueue> out;
  for (std::string_view d : pe::kDirections)
    if (const pe::IpcqQueue* q = port.queue(d)) out.push_back(*q);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rx_base < b.rx_base; });
  return out;
}

class CclTraceObserver final : public RunObserver {
 public:
  static ObserverInfo info() {
    return {"ccl_trace",
            "--ccl-trace FILE: one CSV line per IPCQ send (time, rank, direction, bytes); the PE_IPCQ queue tables "
            "in results.json",
            {{kCclTraceFlag, "FILE"}}};
  }
  static CclTraceObserver* create(const RunRequest& request) {
    const std::string& file = request.flags.get(kCclTraceFlag);
    if (file.empty()) return nullptr;
    if (!request.writes_outputs) return new CclTraceObserver({});  // observes alike, writes nothing
    check_output_file("--ccl-trace", file);
    return new CclTraceObserver(file);
  }

  void attach(System& system, OpLogView& log) override {
    (void)log;
    system_ = &system;
  }
  void on_record(const OpRecord& r) override {
    if (r.name == "ipcq_copy") sends_.push_back(resolve(r));
  }
  void finish(BenchContext& ctx) override {
    (void)ctx;
    if (system_) dump_queues();
  }
  void write_results(Metrics& results) const override;
  void commit() override;
  std::string written() const override { return file_.empty() ? std::string() : "ccl trace  " + file_.string(); }

 private:
  /// One row of the queue dump.
  struct QueueRow {
    std::string pe;
    pe::IpcqQueue q;
  };

  explicit CclTraceObserver(std::filesystem::path file) : file_(std::move(file)) {}

  /// The PE_IPCQ of the PE whose part `component` is, or nullptr.
  const pe::IpcqPort* ipcq_of(std::string_view component) const {
    const names::Location at = names::locate(component);
    if (!system_ || at.pe < 0) return nullptr;
    const NodeIndex n = system_->lookup_node(names::pe_part(at.sip, at.cube, at.pe, "pe_ipcq"));
    return n == kNoNode ? nullptr : pe::as_ipcq(system_->component(n));
  }

  Send resolve(const OpRecord& r) const;
  void dump_queues();

  std::filesystem::path file_;
  System* system_ = nullptr;
  std::vector<Send> sends_;
  std::vector<QueueRow> queues_;
};

/// A send from its slot-write record: the receiver's queue holding the slot names the sender and its direction.
Send CclTraceObserver::resolve(const OpRecord& r) const {
  Send s;
  s.t_start = r.t_start;
  s.t_end = r.t_end;
  s.seq = r.seq;
  s.nbytes = int_param(r, "nbytes", 0);
  s.slot_addr = static_cast<std::uint64_t>(int_param(r, "dst_addr", 0));
  const names::Location at = names::locate(r.component_id);
  s.receiver = at.pe < 0 ? std::string(r.component_id) : names::pe(at.sip, at.cube, at.pe);
  s.sender = s.dir = s.rx_dir = "?";
  const pe::IpcqPort* port = ipcq_of(r.component_id);
  if (!port) return s;
  const std::vector<pe::IpcqQueue> queues = installed(*port);
  const pe::IpcqQueue* hit = nullptr;  // the ring starting last at or below the slot
  for (const pe::IpcqQueue& q : queues)
    if (q.rx_base <= s.slot_addr) hit = &q;
  if (!hit) return s;
  s.rank = static_cast<int>(hit->peer.sip);
  s.sender = names::pe(hit->peer.sip, hit->peer.cube, hit->peer.pe);
  s.dir = hit->peer_dir;
  s.rx_dir = hit->dir;
  return s;
}

/// Every PE_IPCQ's installed queues, in node order, as they stand when the bench has returned.
void CclTraceObserver::dump_queues() {
  queues_.clear();
  for (NodeIndex n = 0; n < system_->node_count(); ++n) {
    const std::string_view id = system_->node_id(n);
    if (!id.ends_with(".pe_ipcq")) continue;
    const pe::IpcqPort* port = pe::as_ipcq(system_->component(n));
    if (!port) continue;
    const names::Location at = names::locate(id);
    for (pe::IpcqQueue& q : installed(*port)) queues_.push_back({names::pe(at.sip, at.cube, at.pe), std::move(q)});
  }
}

/// "ipcq_queues": one entry per installed direction of every PE_IPCQ (addresses as hex text).
void CclTraceObserver::write_results(Metrics& results) const {
  Metrics& list = results.list("ipcq_queues");
  for (const QueueRow& row : queues_) {
    Metrics& e = list.append();
    e.set("pe", row.pe);
    e.set("dir", row.q.dir);
    e.set("peer", names::pe(row.q.peer.sip, row.q.peer.cube, row.q.peer.pe));
    e.set("peer_dir", row.q.peer_dir);
    e.set("rx_base", hex_text(row.q.rx_base));
    e.set("peer_rx_base", hex_text(row.q.peer_rx_base));
  }
}

/// Write the sends, ordered by the slot write's start (ties: completion order), through a temporary file.
void CclTraceObserver::commit() {
  if (file_.empty()) return;
  std::vector<Send> sends = sends_;
  std::stable_sort(sends.begin(), sends.end(), [](const Send& a, const Send& b) {
    return a.t_start != b.t_start ? a.t_start < b.t_start : a.seq < b.seq;
  });
  const std::string tmp = temp_name(file_.string());
  {
    std::ofstream out(tmp);
    out << kHeader << '\n';
    for (const Send& s : sends)
      out << ns_text(s.t_start) << ',' << ns_text(s.t_end) << ',' << s.rank << ',' << s.sender << ',' << s.dir << ','
          << s.nbytes << ',' << s.receiver << ',' << s.rx_dir << ',' << hex_text(s.slot_addr) << '\n';
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      throw Error("ccl trace: cannot write " + file_.string());
    }
  }
  std::filesystem::rename(tmp, file_);
}

}  // namespace kbsim::ccl_trace

KBSIM_PLUGIN("ccl_trace") { kbsim::add_observer<kbsim::ccl_trace::CclTraceObserver>(plugin); }
