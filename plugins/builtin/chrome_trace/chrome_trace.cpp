#include "chrome_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "kbsim/errors.hpp"
#include "kbsim/files.hpp"

namespace kbsim::chrome_trace {

namespace {

// Lane k of the n-th component of a process sorts at n * kLaneStride + k, so a component's lanes stay together.
constexpr int kLaneStride = 10000;

[[noreturn]] void fail(const std::string& path, int err) {
  throw Error("trace: cannot write " + path + ": " + std::strerror(err));
}

template <class T>
void append_num(std::string& s, T v) {
  char buf[32];
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Microseconds, exactly, from integer picoseconds: 1547250 -> 1.547250.
void append_us(std::string& s, Tick ps) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000),
                              static_cast<unsigned long long>(ps % 1000000));
  s.append(buf, static_cast<std::size_t>(n));
}

// The shortest text that reads back as the same double; JSON has no NaN or infinity, so those become strings.
void append_double(std::string& s, double v) {
  if (std::isnan(v))
    s += "\"nan\"";
  else if (std::isinf(v))
    s += v > 0 ? "\"inf\"" : "\"-inf\"";
  else
    append_num(s, v);
}

void append_str(std::string& s, std::string_view v) {
  s += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      s += buf;
    } else {
      s += c;
    }
  }
  s += '"';
}

std::string json_quoted(std::string_view v) {
  std::string s;
  append_str(s, v);
  return s;
}

// {"ph":"M","name":<what>,"pid":P,"tid":T,"args":{<args>}}; tid 0 = none (a process's metadata).
void append_meta(std::string& s, const char* what, int pid, int tid, const std::string& args) {
  s += "{\"ph\":\"M\",\"name\":\"";
  s += what;
  s += "\",\"pid\":";
  append_num(s, pid);
  if (tid) {
    s += ",\"tid\":";
    append_num(s, tid);
  }
  s += ",\"args\":{" + args + "}}";
}

}  // namespace

ChromeTrace::ChromeTrace(std::string path) : path_(std::move(path)), tmp_(kbsim::temp_name(path_)) {
  out_ = std::fopen(tmp_.c_str(), "wb");
  if (!out_) fail(path_, errno);
  std::setvbuf(out_, nullptr, _IOFBF, 1 << 16);
  if (std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out_) == EOF) note_error();
}

ChromeTrace::~ChromeTrace() {
  if (!out_) return;
  std::fclose(out_);
  std::remove(tmp_.c_str());
}

void ChromeTrace::note_error() {
  if (!err_) err_ = errno ? errno : EIO;
}

std::string& ChromeTrace::next_event() {
  line_ += first_ ? "\n" : ",\n";
  first_ = false;
  return line_;
}

std::pair<int, int> ChromeTrace::place(const OpRecord& r) {
  const std::string_view id = r.component_id;
  const std::size_t dot = id.rfind('.');
  const std::string_view track = dot == std::string_view::npos ? id : id.substr(dot + 1);
  auto c = components_.find(id);
  if (c == components_.end()) {
    const std::string_view process = dot == std::string_view::npos ? id : id.substr(0, dot);
    auto p = processes_.find(process);
    if (p == processes_.end()) {
      p = processes_.emplace(process, Process{static_cast<int>(processes_.size()) + 1}).first;
      append_meta(next_event(), "process_name", p->second.pid, 0, "\"name\":" + json_quoted(process));
    }
    c = components_.emplace(id, Component{p->second.pid, p->second.components++ * kLaneStride, {}}).first;
  }
  Component& comp = c->second;
  // First fit: a lane takes the record only if every slice already in it has ended by r.t_start, so slices in
  // a lane never overlap, whatever the order. Records come in t_end order per component, which keeps lanes few.
  for (Lane& lane : comp.lanes) {
    if (lane.end <= r.t_start) {
      lane.end = std::max(lane.end, r.t_end);
      return {comp.pid, lane.tid};
    }
  }
  const int tid = next_tid_++;
  const int k = static_cast<int>(comp.lanes.size());
  comp.lanes.push_back({r.t_end, tid});
  std::string name(track);
  if (k > 0) name += " #" + std::to_string(k + 1);
  append_meta(next_event(), "thread_name", comp.pid, tid, "\"name\":" + json_quoted(name));
  append_meta(next_event(), "thread_sort_index", comp.pid, tid, "\"sort_index\":" + std::to_string(comp.sort_base + k));
  return {comp.pid, tid};
}

void ChromeTrace::add(const OpRecord& r) {
  if (!out_) throw Error("trace: " + path_ + ": record added after close");
  line_.clear();
  const auto [pid, tid] = place(r);
  std::string& s = next_event();
  s += "{\"ph\":\"X\",\"name\":";
  append_str(s, r.name);
  s += ",\"cat\":";
  append_str(s, r.kind);
  s += ",\"pid\":";
  append_num(s, pid);
  s += ",\"tid\":";
  append_num(s, tid);
  s += ",\"ts\":";
  append_us(s, r.t_start);
  s += ",\"dur\":";
  append_us(s, r.t_end > r.t_start ? r.t_end - r.t_start : 0);
  s += ",\"args\":{";
  for (const OpParam& p : r.params) {
    append_str(s, p.key);
    s += ':';
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string>)
            append_str(s, v);
          else if constexpr (std::is_same_v<V, double>)
            append_double(s, v);
          else
            append_num(s, v);
        },
        p.value);
    s += ',';
  }
  s += "\"seq\":";
  append_num(s, r.seq);
  if (!r.dependency_ids.empty()) {
    s += ",\"deps\":[";
    for (std::size_t i = 0; i < r.dependency_ids.size(); ++i) {
      if (i) s += ',';
      append_num(s, r.dependency_ids[i]);
    }
    s += ']';
  }
  s += "}}";
  // The flow event right after its slice binds to it (same track and ts). A flow of one record draws no arrow.
  auto f = r.flow ? flows_.find(r.flow) : flows_.end();
  if (r.flow && !(f == flows_.end() && r.flow_end)) {
    const bool start = f == flows_.end();
    if (start) f = flows_.emplace(r.flow, next_flow_++).first;
    std::string& e = next_event();
    e += start ? "{\"ph\":\"s\"" : r.flow_end ? "{\"ph\":\"f\",\"bp\":\"e\"" : "{\"ph\":\"t\"";
    e += ",\"id\":";
    append_num(e, f->second);
    e += ",\"name\":\"tile\",\"cat\":\"tile\",\"pid\":";
    append_num(e, pid);
    e += ",\"tid\":";
    append_num(e, tid);
    e += ",\"ts\":";
    append_us(e, r.t_start);
    e += '}';
    if (r.flow_end) flows_.erase(f);
  }
  if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) note_error();
}

void ChromeTrace::close() {
  if (!out_) return;
  if (std::fputs("\n]}\n", out_) == EOF || std::ferror(out_)) note_error();
  if (std::fclose(std::exchange(out_, nullptr)) != 0) note_error();
  if (!err_ && std::rename(tmp_.c_str(), path_.c_str()) != 0) note_error();
  if (!err_) return;
  std::remove(tmp_.c_str());
  fail(path_, err_);
}

}  // namespace kbsim::chrome_trace
