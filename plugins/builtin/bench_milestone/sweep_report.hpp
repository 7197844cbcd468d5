// What the milestone benches share: lists given as parameters, reading a
// point's metrics, a run's tables and figures written into its folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/figure.hpp"
#include "kbsim/plugin.hpp"

namespace kbsim::milestone {

/// "8,32,64" -> {8, 32, 64}; a bad item is the parameter's error.
std::vector<std::int64_t> int_list(const Params& p, const StringParam& param);
/// "a,b" -> {"a", "b"}.
std::vector<std::string> word_list(const Params& p, const StringParam& param);

/// A number a point's metrics must have (BenchError naming the point and the metric otherwise).
double need(const PointResult& r, const std::string& path, const std::string& point);

/// "1 KB", "96 KB", "16 B": sizes on an axis.
std::string bytes_label(double b);

/// The folder's figures and tables: each figure and CSV written as it is added,
/// and index.html showing them all when done.
class Folder {
 public:
  Folder(BenchContext& ctx, std::string title, std::string intro);
  void figure(const std::string& file, const std::string& caption, std::string svg);
  void table(const std::string& file, fig::Table t);
  /// Write index.html.
  void finish();

 private:
  BenchContext& ctx_;
  std::string title_, intro_;
  std::vector<std::pair<std::string, std::string>> figures_;
  std::vector<fig::Table> tables_;
};

/// Report the points that failed (a note each) and return how many did.
std::size_t note_failures(BenchContext& ctx, const std::vector<PointResult>& results);

}  // namespace kbsim::milestone
