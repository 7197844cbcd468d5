// For the GEMM plugin's tests: a bench run through the kbsim command, its
// results.json parsed (the output folder removed afterwards).
#pragma once

#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "kbsim/testing_cli.hpp"

namespace kbsim::bench_gemm {

struct BenchRun {
  testkit::CliResult cli;
  rapidjson::Document doc;
  bool ok = false;  ///< results.json was written and parses
  const rapidjson::Value& metrics() const { return doc["metrics"]; }
  double metric(const char* key) const { return metrics()[key].GetDouble(); }
  double stage(const char* key) const { return metrics()["stage_busy_ns"][key].GetDouble(); }
  std::uint64_t stat(const char* node, const char* key) const { return doc["components"][node][key].GetUint64(); }
};

/// `kbsim run ARGS --out DIR` into a fresh folder.
inline BenchRun run(const std::string& args) {
  static int n = 0;
  auto out = testkit::temp_dir() / ("bench" + std::to_string(++n));
  BenchRun r;
  r.cli = testkit::run_kbsim("run " + args + " --out " + out.string());
  if (std::filesystem::exists(out / "results.json")) {
    r.doc.Parse(testkit::read_file(out / "results.json").c_str());
    r.ok = !r.doc.HasParseError();
  }
  std::filesystem::remove_all(out);
  return r;
}

}  // namespace kbsim::bench_gemm
