// Figures for benches (sdk/README.md, "Beyond components"): line plots and bar charts as
// standalone SVG, CSV tables, and an index.html showing a run's figures and
// tables. Written by kbsim itself: no plotting runtime, deterministic bytes
// (numbers printed with fixed precision, never locale dependent).
//
//   kbsim::fig::LinePlot p;
//   p.title = "allreduce latency, torus_2d 3x2";          // the file: allreduce_latency_torus_2d_3x2.svg
//   p.x = {"shard size (bytes)", true};                   // log scale
//   p.y = {"latency (µs)", true};
//   p.series.push_back({"lrab", xs, ys});
//   ctx.write_file("allreduce_latency_torus_2d_3x2.svg", kbsim::fig::svg(p));
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kbsim::fig {

struct Axis {
  std::string label;  ///< with its unit, e.g. "latency (ns)"
  bool log = false;
  std::optional<double> min, max;             ///< fixed ends (default: the data's, padded)
  double log_base = 10;                       ///< a log axis's ticks: powers of this (e.g. 4 for byte sizes)
  std::function<std::string(double)> format;  ///< tick labels (default: compact numbers)
};

struct Series {
  std::string name;
  std::vector<double> x, y;
  bool line = true, markers = true, dashed = false;
  std::string color;  ///< empty: the palette's next colour
};

/// A highlighted point with a label (e.g. another simulator's published value).
struct Marker {
  double x = 0, y = 0;
  std::string label, color;
};

/// A horizontal band of values (e.g. green >= 70 %).
struct Band {
  double y0 = 0, y1 = 0;
  std::string color, label;
};

struct LinePlot {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Marker> markers;
  std::vector<Band> bands;
  int width = 760, height = 460;
};

struct BarChart {
  struct Group {
    std::string name;
    std::vector<double> values;  ///< one per category
    std::string color;
  };
  std::string title;
  std::vector<std::string> categories;
  std::vector<Group> groups;
  Axis y;
  bool stacked = false;
  std::vector<Band> bands;
  std::optional<double> cap;  ///< values above are drawn at the cap with an arrow and their value
  bool value_labels = false;
  std::vector<std::string> bar_colors;  ///< per category (one group): e.g. colour bands by value
  int width = 760, height = 460;
};

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

namespace detail {

inline std::string num(double v, const char* f = "%.2f") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

inline std::string escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

/// 1.5k, 20M, 0.25, 3: short tick labels.
inline std::string compact(double v) {
  const double a = std::fabs(v);
  char b[32];
  if (a >= 1e9) {
    std::snprintf(b, sizeof b, "%gG", v / 1e9);
  } else if (a >= 1e6) {
    std::snprintf(b, sizeof b, "%gM", v / 1e6);
  } else if (a >= 1e4) {
    std::snprintf(b, sizeof b, "%gk", v / 1e3);
  } else {
    std::snprintf(b, sizeof b, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  }
  return b;
}

inline const char* palette(std::size_t i) {
  static const char* const p[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  return p[i % 10];
}

/// A mapping of values to pixels [p0, p1] with its ticks.
class Scale {
 public:
  Scale(const Axis& a, double lo, double hi, double p0, double p1)
      : log_(a.log), base_(a.log_base > 1 ? a.log_base : 10), p0_(p0), p1_(p1) {
    if (log_) {
      lo = lo > 0 ? lo : 1;
      hi = hi > lo ? hi : lo * base_;
      lo_ = a.min && *a.min > 0 ? *a.min : std::pow(base_, std::floor(logb(lo) + 1e-9));
      hi_ = a.max && *a.max > lo_ ? *a.max : std::pow(base_, std::ceil(logb(hi) - 1e-9));
      if (hi_ <= lo_) hi_ = lo_ * base_;
    } else {
      if (hi <= lo) hi = lo + 1;
      const double step = nice_step((hi - lo) / 5);
      lo_ = a.min ? *a.min : std::floor(lo / step) * step;
      hi_ = a.max ? *a.max : std::ceil(hi / step) * step;
      if (hi_ <= lo_) hi_ = lo_ + step;
    }
  }
  double operator()(double v) const {
    const double t =
        log_ ? (std::log10(v) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_)) : (v - lo_) / (hi_ - lo_);
    return p0_ + t * (p1_ - p0_);
  }
  bool shows(double v) const { return (!log_ || v > 0) && std::isfinite(v); }
  /// Decades on a log scale (every other one when there are many), 4-8 nice steps on a linear one.
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log_) {
      const int a = static_cast<int>(std::ceil(logb(lo_) - 1e-9)), b = static_cast<int>(std::floor(logb(hi_) + 1e-9));
      const int every = b - a > 8 ? 2 : 1;
      for (int e = a; e <= b; e += every) t.push_back(std::pow(base_, e));
      if (t.size() < 2) t = {lo_, hi_};
    } else {
      const double step = nice_step((hi_ - lo_) / 5);
      for (double v = std::ceil(lo_ / step - 1e-9) * step; v <= hi_ + step * 1e-9; v += step) t.push_back(v);
    }
    return t;
  }
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  static double nice_step(double raw) {
    const double mag = std::pow(10.0, std::floor(std::log10(raw > 0 ? raw : 1)));
    const double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
  }
  double logb(double v) const { return std::log(v) / std::log(base_); }
  bool log_;
  double base_;
  double lo_ = 0, hi_ = 1, p0_, p1_;
};

struct Frame {
  int width, height;
  double left = 84, right = 40, top = 56, bottom = 70;
  double x0() const { return left; }
  double x1() const { return width - right; }
  double y0() const { return height - bottom; }  // the bottom of the plot area
  double y1() const { return top; }
};

inline std::string open_svg(const Frame& f, std::string_view title) {
  const std::string w = std::to_string(f.width), h = std::to_string(f.height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " +
         h + "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"" + w + "\" height=\"" + h +
         "\" fill=\"white\"/>\n<text x=\"" + num(f.width / 2.0, "%.1f") +
         "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">" + escape(title) + "</text>\n";
}

inline std::string text(double x, double y, std::string_view s, const char* anchor = "middle",
                        const std::string& extra = "") {
  return "<text x=\"" + num(x, "%.1f") + "\" y=\"" + num(y, "%.1f") + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + escape(s) + "</text>\n";
}

inline std::string line(double x0, double y0, double x1, double y1, std::string_view style) {
  return "<line x1=\"" + num(x0, "%.1f") + "\" y1=\"" + num(y0, "%.1f") + "\" x2=\"" + num(x1, "%.1f") + "\" y2=\"" +
         num(y1, "%.1f") + "\" " + std::string(style) + "/>\n";
}

/// The y axis: grid lines, tick labels and its label; bands behind the data.
inline std::string y_axis(const Frame& f, const Axis& a, const Scale& s, const std::vector<Band>& bands) {
  std::string o;
  for (const Band& b : bands) {
    const double lo = std::max(b.y0, s.lo()), hi = std::min(b.y1, s.hi());
    if (hi <= lo || !s.shows(lo) || !s.shows(hi)) continue;
    o += "<rect x=\"" + num(f.x0(), "%.1f") + "\" y=\"" + num(s(hi), "%.1f") + "\" width=\"" +
         num(f.x1() - f.x0(), "%.1f") + "\" height=\"" + num(s(lo) - s(hi), "%.1f") + "\" fill=\"" + b.color +
         "\" fill-opacity=\"0.15\"/>\n";
    if (!b.label.empty()) o += text(f.x1() + 8, (s(hi) + s(lo)) / 2 + 4, b.label, "start", " fill=\"#555\"");
  }
  for (double t : s.ticks()) {
    const double y = s(t);
    o += line(f.x0(), y, f.x1(), y, "stroke=\"#e4e4e4\"");
    o += text(f.x0() - 6, y + 4, a.format ? a.format(t) : compact(t), "end");
  }
  o += line(f.x0(), f.y0(), f.x0(), f.y1(), "stroke=\"#333\"");
  const double mid = (f.y0() + f.y1()) / 2;
  o += text(20, mid, a.label, "middle", " transform=\"rotate(-90 20 " + num(mid, "%.1f") + ")\"");
  return o;
}

/// The legend's width for these entries (0 for fewer than two: the title says it).
inline double legend_width(const std::vector<std::pair<std::string, std::string>>& items) {
  if (items.size() < 2) return 0;
  std::size_t longest = 0;
  for (const auto& it : items) longest = std::max(longest, it.first.size());
  return 40 + 6.6 * static_cast<double>(std::min<std::size_t>(longest, 48));
}

/// Room right of the plot area for the bands' labels.
inline double band_width(const std::vector<Band>& bands) {
  std::size_t longest = 0;
  for (const Band& b : bands) longest = std::max(longest, b.label.size());
  return longest ? 16 + 6.6 * static_cast<double>(longest) : 0;
}

/// The legend, right of the plot area (the frame's right margin was widened for it).
inline std::string legend(const Frame& f, const std::vector<std::pair<std::string, std::string>>& items,
                          const std::vector<bool>& dashed = {}) {
  if (items.size() < 2) return "";
  const double x = f.x1() + 14, y = f.y1();
  std::string o;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double ly = y + 13 + 18.0 * static_cast<double>(i);
    const bool dash = i < dashed.size() && dashed[i];
    o += line(x, ly - 4, x + 22, ly - 4,
              "stroke=\"" + items[i].second + "\" stroke-width=\"3\"" + (dash ? " stroke-dasharray=\"6 3\"" : ""));
    o += text(x + 28, ly, items[i].first, "start");
  }
  return o;
}

}  // namespace detail

/// A line plot as a standalone SVG document.
inline std::string svg(const LinePlot& p) {
  using namespace detail;
  std::vector<std::pair<std::string, std::string>> items;
  std::vector<bool> dashed;
  for (std::size_t k = 0; k < p.series.size(); ++k) {
    items.emplace_back(p.series[k].name, p.series[k].color.empty() ? palette(k) : p.series[k].color);
    dashed.push_back(p.series[k].dashed);
  }
  const double lw = std::max(legend_width(items), band_width(p.bands));
  Frame f{p.width + static_cast<int>(lw), p.height};
  f.right += lw;
  std::string o = open_svg(f, p.title);
  double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
  auto take = [&](double x, double y) {
    if ((p.x.log && x <= 0) || (p.y.log && y <= 0) || !std::isfinite(x) || !std::isfinite(y)) return;
    xl = std::min(xl, x), xh = std::max(xh, x), yl = std::min(yl, y), yh = std::max(yh, y);
  };
  for (const Series& s : p.series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) take(s.x[i], s.y[i]);
  for (const Marker& m : p.markers) take(m.x, m.y);
  if (!(xl <= xh)) return o + text(p.width / 2.0, p.height / 2.0, "no data") + "</svg>\n";
  if (!p.y.log && !p.y.min) yl = std::min(yl, 0.0);
  const Scale sx(p.x, xl, xh, f.x0(), f.x1()), sy(p.y, yl, yh, f.y0(), f.y1());
  o += y_axis(f, p.y, sy, p.bands);
  for (double t : sx.ticks()) {
    const double x = sx(t);
    o += line(x, f.y0(), x, f.y1(), "stroke=\"#f0f0f0\"");
    o += text(x, f.y0() + 18, p.x.format ? p.x.format(t) : compact(t));
  }
  o += line(f.x0(), f.y0(), f.x1(), f.y0(), "stroke=\"#333\"");
  o += text((f.x0() + f.x1()) / 2, p.height - 22, p.x.label);
  for (std::size_t k = 0; k < p.series.size(); ++k) {
    const Series& s = p.series[k];
    const std::string& color = items[k].second;
    std::string pts;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (sx.shows(s.x[i]) && sy.shows(s.y[i])) pts += num(sx(s.x[i]), "%.1f") + "," + num(sy(s.y[i]), "%.1f") + " ";
    if (s.line && !pts.empty())
      o += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
           (s.dashed ? " stroke-dasharray=\"6 3\"" : "") + " points=\"" + pts + "\"/>\n";
    if (s.markers)
      for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
        if (sx.shows(s.x[i]) && sy.shows(s.y[i]))
          o += "<circle cx=\"" + num(sx(s.x[i]), "%.1f") + "\" cy=\"" + num(sy(s.y[i]), "%.1f") + "\" r=\"3\" fill=\"" +
               color + "\"/>\n";
  }
  for (const Marker& m : p.markers) {
    if (!sx.shows(m.x) || !sy.shows(m.y)) continue;
    const std::string color = m.color.empty() ? "#d62728" : m.color;
    const double x = sx(m.x), y = sy(m.y);
    o += "<path d=\"M " + num(x, "%.1f") + " " + num(y - 7, "%.1f") + " l 7 7 l -7 7 l -7 -7 z\" fill=\"" + color +
         "\"/>\n";
    o += text(x - 10, y + 4, m.label, "end", " fill=\"" + color + "\"");
  }
  o += legend(f, items, dashed);
  return o + "</svg>\n";
}

/// A bar chart (grouped, or stacked) as a standalone SVG document.
inline std::string svg(const BarChart& c) {
  using namespace detail;
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t k = 0; k < c.groups.size(); ++k)
    items.emplace_back(c.groups[k].name, c.groups[k].color.empty() ? palette(k) : c.groups[k].color);
  const double lw = std::max(legend_width(items), band_width(c.bands));
  Frame f{c.width + static_cast<int>(lw), c.height};
  f.right += lw;
  std::size_t longest = 0;
  for (const auto& cat : c.categories) longest = std::max(longest, cat.size());
  const bool rotate =
      c.categories.size() * std::max<std::size_t>(longest, 1) * 7 > static_cast<std::size_t>(c.width - 110);
  if (rotate) f.bottom = 40 + 6.0 * static_cast<double>(std::min<std::size_t>(longest, 28));
  std::string o = open_svg(f, c.title);
  const std::size_t nc = c.categories.size();
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < nc; ++i) {
    double stack = 0;
    for (const auto& g : c.groups) {
      if (i >= g.values.size()) continue;
      double v = g.values[i];
      if (c.cap) v = std::min(v, *c.cap);
      stack += v;
      const double top = c.stacked ? stack : v;
      if (c.y.log && top <= 0) continue;
      lo = std::min(lo, top), hi = std::max(hi, top);
    }
  }
  if (nc == 0 || !(lo <= hi)) return o + text(c.width / 2.0, c.height / 2.0, "no data") + "</svg>\n";
  if (!c.y.log) lo = std::min(lo, 0.0);
  const Scale sy(c.y, c.y.log ? lo / 2 : lo, hi, f.y0(), f.y1());
  o += y_axis(f, c.y, sy, c.bands);
  const double slot = (f.x1() - f.x0()) / static_cast<double>(nc);
  const std::size_t per = c.stacked ? 1 : std::max<std::size_t>(c.groups.size(), 1);
  const double bw = slot * 0.8 / static_cast<double>(per);
  const double base = c.y.log ? f.y0() : sy(std::max(0.0, sy.lo()));
  for (std::size_t i = 0; i < nc; ++i) {
    const double cx = f.x0() + slot * (static_cast<double>(i) + 0.5);
    double stack = 0;
    for (std::size_t k = 0; k < c.groups.size(); ++k) {
      const auto& g = c.groups[k];
      if (i >= g.values.size()) continue;
      const double v = g.values[i];
      const bool capped = c.cap && v > *c.cap;
      const double shown = capped ? *c.cap : v;
      const double from = c.stacked ? stack : 0;
      stack += shown;
      const double to = c.stacked ? stack : shown;
      if (!sy.shows(to)) continue;
      const double x = c.stacked ? cx - bw / 2 : cx - slot * 0.4 + bw * static_cast<double>(k);
      const double ytop = sy(to), ybot = c.stacked && from > 0 ? sy(from) : base;
      std::string color = !g.color.empty() ? g.color : palette(k);
      if (c.groups.size() == 1 && i < c.bar_colors.size() && !c.bar_colors[i].empty()) color = c.bar_colors[i];
      o += "<rect x=\"" + num(x, "%.1f") + "\" y=\"" + num(ytop, "%.1f") + "\" width=\"" + num(bw * 0.92, "%.1f") +
           "\" height=\"" + num(std::max(0.0, ybot - ytop), "%.1f") + "\" fill=\"" + color + "\"/>\n";
      if (capped)
        o += "<path d=\"M " + num(x + bw * 0.46, "%.1f") + " " + num(ytop - 12, "%.1f") + " l 5 8 l -10 0 z\" " +
             "fill=\"#333\"/>\n";
      if (c.value_labels || capped)
        o += text(x + bw * 0.46, ytop - (capped ? 15 : 4), compact(std::round(v * 100) / 100), "middle",
                  " font-size=\"10\"");
    }
    if (rotate) {
      const double y = f.y0() + 12;
      o += text(cx, y, c.categories[i], "end",
                " transform=\"rotate(-35 " + num(cx, "%.1f") + " " + num(y, "%.1f") + ")\"");
    } else {
      o += text(cx, f.y0() + 18, c.categories[i]);
    }
  }
  o += line(f.x0(), f.y0(), f.x1(), f.y0(), "stroke=\"#333\"");
  o += legend(f, items);
  return o + "</svg>\n";
}

/// A table as CSV (RFC 4180: fields with a comma, quote or line break are quoted).
inline std::string csv(const Table& t) {
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  auto row = [&](const std::vector<std::string>& r) {
    std::string o;
    for (std::size_t i = 0; i < r.size(); ++i) o += (i ? "," : "") + field(r[i]);
    return o + "\r\n";
  };
  std::string o = row(t.header);
  for (const auto& r : t.rows) o += row(r);
  return o;
}

/// One self-contained page (no script, nothing fetched) showing every figure and table of a run's folder.
inline std::string index_html(std::string_view title, const std::vector<std::pair<std::string, std::string>>& figures,
                              const std::vector<Table>& tables, std::string_view intro = {}) {
  using detail::escape;
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) +
      "</title>\n<style>body{font-family:sans-serif;margin:24px;max-width:1600px}figure{display:inline-block;"
      "margin:8px;vertical-align:top}figcaption{max-width:760px;color:#444}img{border:1px solid #ddd}"
      "table{border-collapse:collapse;font-size:12px;margin:8px 0 24px}td,th{border:1px solid #ccc;padding:2px "
      "6px;text-align:right}th{background:#f3f3f3}</style></head><body>\n<h1>" +
      escape(title) + "</h1>\n";
  if (!intro.empty()) o += "<p>" + escape(intro) + "</p>\n";
  if (!figures.empty()) o += "<h2>Figures</h2>\n";
  for (const auto& [file, caption] : figures)
    o += "<figure><a href=\"" + escape(file) + "\"><img src=\"" + escape(file) + "\" alt=\"" + escape(caption) +
         "\"></a><figcaption><b>" + escape(file) + "</b>: " + escape(caption) + "</figcaption></figure>\n";
  for (const Table& t : tables) {
    o += "<h2>" + escape(t.title) + "</h2>\n<table><tr>";
    for (const auto& h : t.header) o += "<th>" + escape(h) + "</th>";
    o += "</tr>\n";
    for (const auto& r : t.rows) {
      o += "<tr>";
      for (const auto& cell : r) o += "<td>" + escape(cell) + "</td>";
      o += "</tr>\n";
    }
    o += "</table>\n";
  }
  return o + "</body></html>\n";
}

}  // namespace kbsim::fig
