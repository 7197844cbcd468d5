// The probe's results and their two renderings (tables, JSON).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbsim::probe {

struct LegHop {
  std::string node;
  double transit_ns = 0.0;
  std::string link_kind;  ///< link to the next hop ("" on the last)
  double link_bw_gbs = 0.0;
  double link_latency_ns = 0.0;
};

struct Leg {
  bool carries_data = false;
  std::vector<LegHop> hops;
};

struct CaseResult {
  std::string name, category, src, dst;
  unsigned hops = 0;
  std::uint64_t bytes = 0;
  bool ok = false;
  std::string error;
  double actual_ns = 0.0;   ///< measured: write committed (h2d) or response back (d2h, pe dma)
  double ack_ns = 0.0;      ///< measured: completion back at the initiator
  double formula_ns = 0.0;  ///< ovhd + wire + drain: a lower bound
  double ovhd_ns = 0.0, drain_ns = 0.0, wire_ns = 0.0;
  double eff_bw_gbs = 0.0, bn_bw_gbs = 0.0, util_pct = 0.0;
  std::string bn_link;
  unsigned ucie_crossings = 0;  ///< cube-to-cube UCIe links on the forward leg
  std::uint64_t events = 0;
  std::vector<Leg> legs;
};

struct Invariant {
  std::string name;
  bool pass = false;
  std::string detail;
};

/// A case "all" could not run on this system (e.g. the inter-SIP case on one SIP).
struct Skipped {
  std::string name, reason;
};

struct Report {
  std::string topology;
  std::string routing;  ///< the route metric in force: distance or latency
  std::uint64_t bytes = 0;
  std::vector<CaseResult> cases;
  std::vector<Skipped> skipped;  ///< in the table and the JSON only when there are some
  std::vector<CaseResult> sweep;
  std::vector<Invariant> invariants;
  bool pass = false;
};

void print_text(const Report& r);
void print_json(const Report& r);

}  // namespace kbsim::probe
