// The fidelity report: figures (reference | kbsim | ratio | verdict), then
// orderings and invariants, then pending figures; printed as notes, kept in
// the metrics, and a FIDELITY failure naming every miss.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kbsim/bench.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/text.hpp"

namespace kbsim::fidelity {

class Table {
 public:
  explicit Table(double tolerance_pct) : tolerance_(tolerance_pct) {}

  void section(std::string name) { section_ = std::move(name); }
  /// A figure the reference measured: within the tolerance of it.
  void within(const std::string& name, double reference, double kbsim) {
    const double ratio = kbsim / reference;
    figure(name, fmt(reference), kbsim, ratio, std::abs(ratio - 1.0) * 100.0 <= tolerance_);
  }
  /// A bound the reference states ("below 80 ns").
  void below(const std::string& name, double bound, double kbsim) {
    figure(name, "< " + fmt(bound), kbsim, kbsim / bound, kbsim < bound);
  }
  /// A count or a zero the reference states exactly.
  void exact(const std::string& name, double reference, double kbsim) {
    figure(name, fmt(reference), kbsim, reference != 0 ? kbsim / reference : 1.0, kbsim == reference);
  }
  void ordering(const std::string& name, bool pass, const std::string& detail) {
    orderings_.push_back({name, detail, pass});
  }
  void pending(const std::string& name, const std::string& why) { pending_.push_back({name, why, false}); }
  /// The route a figure's traffic took, node by node (of several equally short ones, the one the router chose).
  void route(const std::string& name, std::vector<std::string> nodes) { routes_.push_back({name, std::move(nodes)}); }

  /// Print, record and fail on any miss.
  void report(BenchContext& ctx) const {
    Metrics& m = ctx.metrics();
    m.set("tolerance_pct", tolerance_);
    char line[256];
    std::string section, failed;
    std::size_t figures_ok = 0, orderings_ok = 0;
    std::snprintf(line, sizeof line, "%-78s %10s %10s %7s  %s", "figure", "reference", "kbsim", "ratio", "verdict");
    ctx.note(line);
    for (const Figure& f : figures_) {
      if (f.section != section) ctx.note((section = f.section) + ":");
      std::snprintf(line, sizeof line, "  %-76s %10s %10s %7.3f  %s", f.name.c_str(), f.reference.c_str(),
                    fmt(f.kbsim).c_str(), f.ratio, f.pass ? "ok" : "MISS");
      ctx.note(line);
      Metrics& e = m.object("figures").object(f.name);
      e.set("section", f.section);
      e.set("reference", f.reference);
      e.set("kbsim", f.kbsim);
      e.set("ratio", f.ratio);
      e.set("pass", f.pass);
      figures_ok += f.pass;
      if (!f.pass) failed += (failed.empty() ? "" : "; ") + f.name + ": " + fmt(f.kbsim) + " vs " + f.reference;
    }
    ctx.note("orderings and invariants:");
    for (const Check& c : orderings_) {
      ctx.note(std::string("  ") + (c.pass ? "PASS " : "FAIL ") + c.name +
               (c.detail.empty() ? "" : "  (" + c.detail + ")"));
      m.object("orderings").set(c.name, c.pass);
      orderings_ok += c.pass;
      if (!c.pass) failed += (failed.empty() ? "" : "; ") + c.name;
    }
    ctx.note("routes taken:");
    for (const auto& [name, nodes] : routes_) {
      ctx.note("  " + name + ": " + compact(nodes));
      auto& list = m.object("routes").list(name);
      for (const std::string& n : nodes) list.append(n);
    }
    ctx.note("pending:");
    for (const Check& c : pending_) {
      ctx.note("  " + c.name + "  (" + c.detail + ")");
      m.object("pending").set(c.name, c.detail);
    }
    const bool pass = failed.empty();
    m.set("pass", pass);
    ctx.note(std::to_string(figures_ok) + " of " + std::to_string(figures_.size()) + " figures within " +
             fmt(tolerance_) + "%, " + std::to_string(orderings_ok) + " of " + std::to_string(orderings_.size()) +
             " orderings and invariants hold, " + std::to_string(pending_.size()) + " figures pending");
    if (!pass) throw BenchError("FIDELITY", failed);
  }

 private:
  struct Figure {
    std::string section, name, reference;
    double kbsim, ratio;
    bool pass;
  };
  struct Check {
    std::string name, detail;
    bool pass;
  };

  void figure(const std::string& name, std::string reference, double kbsim, double ratio, bool pass) {
    figures_.push_back({section_, name, std::move(reference), kbsim, ratio, pass});
  }
  static std::string fmt(double v) { return format_ns(v); }  // any figure: no trailing zeros
  /// Nodes joined by " > ", each without the dotted prefix it shares with the one before ("sip0.cube0.r0c0 >
  /// ucie-N.conn0 > ucie-N > cube1.ucie-S"), so a route of fifty nodes reads on a few lines.
  static std::string compact(const std::vector<std::string>& nodes) {
    std::string out, prev;
    for (const std::string& n : nodes) {
      // Drop the leading dotted parts n shares with prev, but never n's last part.
      std::size_t from = 0;
      for (std::size_t dot = n.find('.'); dot != std::string::npos; dot = n.find('.', dot + 1)) {
        if (prev.size() <= dot || prev.compare(0, dot + 1, n, 0, dot + 1) != 0) break;
        from = dot + 1;
      }
      out += (out.empty() ? "" : " > ") + n.substr(from);
      prev = n;
    }
    return out;
  }

  double tolerance_;
  std::string section_;
  std::vector<Figure> figures_;
  std::vector<Check> orderings_, pending_;
  std::vector<std::pair<std::string, std::vector<std::string>>> routes_;
};

}  // namespace kbsim::fidelity
