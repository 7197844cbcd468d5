// A timeline of the op log in the Chrome trace event format (JSON), which
// ui.perfetto.dev and chrome://tracing open. Written as a stream: each record
// becomes a slice as soon as it completes, so large runs need no buffering.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kbsim/op_record.hpp"

namespace kbsim::chrome_trace {

class ChromeTrace {
 public:
  /// Writes to a temporary file next to `path`; close() renames it into place.
  /// Throws Error (naming the path) if it cannot be created.
  explicit ChromeTrace(std::string path);
  /// Without close() (e.g. the run failed), the temporary file is removed: nothing half-written.
  ~ChromeTrace();
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  /// One record as a slice on its component's track.
  void add(const OpRecord& r);
  /// Completes the JSON and moves it to `path`. Throws Error on an I/O failure.
  void close();

 private:
  struct Hash {  // lets the maps be searched with a string_view
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  template <class V>
  using ByName = std::unordered_map<std::string, V, Hash, std::equal_to<>>;
  struct Lane {
    Tick end;  ///< the latest end of its slices
    int tid;
  };
  struct Component {
    int pid;
    int sort_base;  ///< thread_sort_index of lane 0; lane k sorts at sort_base + k
    std::vector<Lane> lanes;
  };
  struct Process {
    int pid;
    int components = 0;
  };

  std::pair<int, int> place(const OpRecord& r);  ///< {pid, tid} of r's slice, announcing new ones
  std::string& next_event();                     ///< line_ ready for one more event
  void note_error();

  std::string path_, tmp_;
  std::FILE* out_ = nullptr;
  int err_ = 0;  ///< errno of the first failed write
  bool first_ = true;
  std::string line_;  ///< the events of one add()
  ByName<Process> processes_;
  ByName<Component> components_;
  std::unordered_map<std::uint64_t, std::uint64_t> flows_;  ///< open flows: r.flow -> id
  int next_tid_ = 1;
  std::uint64_t next_flow_ = 1;
};

}  // namespace kbsim::chrome_trace
