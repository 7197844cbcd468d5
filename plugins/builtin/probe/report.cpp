#include "report.hpp"

#include <cstdio>

#include "kbsim/json/json.hpp"
#include "kbsim/text.hpp"

namespace kbsim::probe {

using json::JsonWriter;
using json::write_json_stdout;

namespace {

void row(const CaseResult& c, const std::string& label) {
  std::printf("  %-24s %9.2f %9.2f %7.2f %8.2f %6.2f %8.2f %7.2f %6.1f %4u\n", label.c_str(), c.actual_ns, c.formula_ns,
              c.ovhd_ns, c.drain_ns, c.wire_ns, c.eff_bw_gbs, c.bn_bw_gbs, c.util_pct, c.ucie_crossings);
}

void header(const char* first) {
  std::printf("  %-24s %9s %9s %7s %8s %6s %8s %7s %6s %4s\n", first, "Actual", "Formula", "Ovhd", "Drain", "Wire",
              "Eff.BW", "BN.BW", "Util", "UCIe");
  std::printf("  %-24s %9s %9s %7s %8s %6s %8s %7s %6s %4s\n", "", "ns", "ns", "ns", "ns", "ns", "GB/s", "GB/s", "%",
              "x");
}

void route(const CaseResult& c) {
  std::printf("  %s  (%s -> %s)\n", c.name.c_str(), c.src.c_str(), c.dst.c_str());
  for (std::size_t l = 0; l < c.legs.size(); ++l) {
    const Leg& leg = c.legs[l];
    std::printf("    %s leg (%s):", l == 0 ? "forward" : "return", leg.carries_data ? "data" : "command");
    double cum = 0.0;
    for (std::size_t k = 0; k < leg.hops.size(); ++k) {
      const LegHop& h = leg.hops[k];
      cum += h.transit_ns;
      std::printf("\n      %-36s +%-5s cum %7.2f ns", h.node.c_str(), format_ns(h.transit_ns).c_str(), cum);
      if (k + 1 == leg.hops.size()) {
        if (leg.carries_data) std::printf("  drain:%sns", format_ns(c.drain_ns).c_str());
        break;
      }
      cum += h.link_latency_ns;
      std::printf("\n        --%s %s GB/s, %s ns-->", h.link_kind.c_str(),
                  h.link_bw_gbs > 0 ? format_ns(h.link_bw_gbs).c_str() : "unlimited",
                  format_ns(h.link_latency_ns).c_str());
      if (leg.carries_data && h.link_bw_gbs == c.bn_bw_gbs && h.link_bw_gbs > 0 &&
          c.bn_link == h.node + " -> " + leg.hops[k + 1].node)
        std::printf(" <BN:%sGB/s>", format_ns(h.link_bw_gbs).c_str());
    }
    std::printf("\n");
  }
}

void case_json(JsonWriter& w, const CaseResult& c, bool with_route) {
  w.begin_object();
  w.field("name", c.name);
  w.field("category", c.category);
  w.field("src", c.src);
  w.field("dst", c.dst);
  w.field("bytes", c.bytes);
  if (c.hops) w.field("hops", c.hops);
  w.field("ok", c.ok);
  if (!c.ok) w.field("error_code", c.error);
  w.field("actual_ns", c.actual_ns);
  w.field("ack_ns", c.ack_ns);
  w.field("formula_ns", c.formula_ns);
  w.field("ovhd_ns", c.ovhd_ns);
  w.field("drain_ns", c.drain_ns);
  w.field("wire_ns", c.wire_ns);
  w.field("eff_bw_gbs", c.eff_bw_gbs);
  w.field("bn_bw_gbs", c.bn_bw_gbs);
  w.field("bn_link", c.bn_link);
  w.field("util_pct", c.util_pct);
  w.field("ucie_crossings", c.ucie_crossings);
  w.field("events", c.events);
  if (with_route) {
    w.key("route");
    w.begin_array();
    for (const Leg& leg : c.legs) {
      w.begin_object();
      w.field("carries_data", leg.carries_data);
      w.key("hops");
      w.begin_array();
      for (const LegHop& h : leg.hops) {
        w.begin_object();
        w.field("node", h.node);
        w.field("overhead_ns", h.transit_ns);
        if (!h.link_kind.empty()) {
          w.field("link_kind", h.link_kind);
          w.field("link_bw_gbs", h.link_bw_gbs);
          w.field("link_latency_ns", h.link_latency_ns);
        }
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

}  // namespace

void print_text(const Report& r) {
  std::printf("kbsim probe: %s, %llu bytes per case, routing: %s\n\n", r.topology.c_str(),
              static_cast<unsigned long long>(r.bytes), r.routing.c_str());
  header("Case");
  std::string category;
  for (const auto& c : r.cases) {
    if (c.category != category && !category.empty()) std::printf("\n");
    category = c.category;
    row(c, c.ok ? c.name : c.name + " FAILED " + c.error);
  }
  for (const auto& s : r.skipped) std::printf("  %-24s skipped: %s\n", s.name.c_str(), s.reason.c_str());
  std::printf("\nRoutes (overhead per node, links as --kind bandwidth, latency-->)\n");
  for (const auto& c : r.cases) route(c);
  if (!r.sweep.empty()) {
    std::printf("\nSweep\n");
    header("Case / size");
    for (const auto& c : r.sweep) row(c, c.name + " " + std::to_string(c.bytes / 1024) + "KB");
  }
  std::printf("\nInvariants\n");
  for (const auto& i : r.invariants)
    std::printf("  [%s] %s %s%s\n", i.pass ? "v" : "x", i.pass ? "PASS" : "FAIL", i.name.c_str(),
                i.detail.empty() ? "" : ("  (" + i.detail + ")").c_str());
  std::printf("\n%s\n", r.pass ? "all invariants pass" : "SOME INVARIANTS FAIL");
}

void print_json(const Report& r) {
  write_json_stdout([&](JsonWriter& w) {
    w.begin_object();
    w.field("topology", r.topology);
    w.field("bytes", r.bytes);
    w.field("routing", r.routing);
    w.key("cases");
    w.begin_array();
    for (const auto& c : r.cases) case_json(w, c, true);
    w.end_array();
    if (!r.skipped.empty()) {
      w.key("skipped");
      w.begin_array();
      for (const auto& s : r.skipped) {
        w.begin_object();
        w.field("name", s.name);
        w.field("reason", s.reason);
        w.end_object();
      }
      w.end_array();
    }
    w.key("sweep");
    w.begin_array();
    for (const auto& c : r.sweep) case_json(w, c, false);
    w.end_array();
    w.key("invariants");
    w.begin_array();
    for (const auto& i : r.invariants) {
      w.begin_object();
      w.field("name", i.name);
      w.field("pass", i.pass);
      if (!i.detail.empty()) w.field("detail", i.detail);
      w.end_object();
    }
    w.end_array();
    w.field("pass", r.pass);
    w.end_object();
  });
}

}  // namespace kbsim::probe
