#include "topology_diagram.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace kbsim::milestone {

namespace {

constexpr int kPanelW = 420, kPanelH = 300;

std::string fmt(const char* f, double a, double b, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

std::string line(double x0, double y0, double x1, double y1, const char* style) {
  return fmt("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" ", x0, y0, x1, y1) + style + "/>\n";
}

std::string node(double x, double y, const std::string& label, const char* fill) {
  return fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" ", x - 26, y - 16, 52, 32) +
         "fill=\"" + fill + "\" stroke=\"#333\"/>\n" + fmt("<text x=\"%.1f\" y=\"%.1f\" ", x, y + 5) +
         "text-anchor=\"middle\" font-size=\"13\">" + label + "</text>\n";
}

std::string title(double x, double y, const std::string& t) {
  return fmt("<text x=\"%.1f\" y=\"%.1f\" ", x, y) + "text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
         t + "</text>\n";
}

const char* kLink = "stroke=\"#1f77b4\" stroke-width=\"2\"";
const char* kWrap = "fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"2\" stroke-dasharray=\"6 3\"";

/// A 3x2 grid of SIPs in the panel at (ox, oy); wrap links drawn as arcs outside the rows and columns.
std::string grid(double ox, double oy, bool wrap, const std::string& name) {
  std::string s = title(ox + kPanelW / 2.0, oy + 28, name);
  auto at = [&](int x, int y) { return std::pair{ox + 110 + x * 100.0, oy + 110 + y * 100.0}; };
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      auto [cx, cy] = at(x, y);
      if (x + 1 < 3) s += line(cx + 26, cy, cx + 74, cy, kLink);
      if (y + 1 < 2) s += line(cx, cy + 16, cx, cy + 84, kLink);
    }
  if (wrap) {
    for (int y = 0; y < 2; ++y) {  // row wrap: from the last column back to the first, arcing outside
      auto [x0, cy] = at(0, y);
      auto [x2, cy2] = at(2, y);
      const double out = y == 0 ? cy - 48 : cy + 48;
      s += fmt("<path d=\"M %.1f %.1f C %.1f %.1f, ", x2, cy - (y == 0 ? 16 : -16), x2 + 30, out) +
           fmt("%.1f %.1f, %.1f %.1f\" ", x0 - 30, out, x0, cy2 - (y == 0 ? 16 : -16)) + kWrap + "/>\n";
    }
    for (int x = 0; x < 3; ++x) {  // column wrap (h = 2: the second link between the two rows)
      auto [cx, y0] = at(x, 0);
      auto [cx1, y1] = at(x, 1);
      s += fmt("<path d=\"M %.1f %.1f C %.1f %.1f, ", cx + 26, y0, cx + 50, y0 + 20) +
           fmt("%.1f %.1f, %.1f %.1f\" ", cx + 50, y1 - 20, cx1 + 26, y1) + kWrap + "/>\n";
    }
  }
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      auto [cx, cy] = at(x, y);
      s += node(cx, cy, "SIP " + std::to_string(y * 3 + x), "#e8f0fa");
    }
  return s;
}

std::string ring(double ox, double oy) {
  std::string s = title(ox + kPanelW / 2.0, oy + 28, "ring_1d, 6 SIPs");
  const double cx = ox + kPanelW / 2.0, cy = oy + 165, r = 95;
  auto pos = [&](int k) {
    const double a = -M_PI / 2 + 2 * M_PI * k / 6.0;
    return std::pair{cx + r * std::cos(a), cy + r * std::sin(a)};
  };
  for (int k = 0; k < 6; ++k) {
    auto [x0, y0] = pos(k);
    auto [x1, y1] = pos((k + 1) % 6);
    s += line(x0, y0, x1, y1, k == 5 ? "stroke=\"#ff7f0e\" stroke-width=\"2\" stroke-dasharray=\"6 3\"" : kLink);
  }
  for (int k = 0; k < 6; ++k) {
    auto [x, y] = pos(k);
    s += node(x, y, "SIP " + std::to_string(k), "#e8f0fa");
  }
  return s;
}

std::string cubes(double ox, double oy) {
  std::string s = title(ox + kPanelW / 2.0, oy + 28, "inside SIP 0: 4x4 cubes reduce to the center");
  auto at = [&](int x, int y) { return std::pair{ox + 105 + x * 70.0, oy + 70 + y * 58.0}; };
  const int rx = 2, ry = 2;  // the center root: cube (h/2)*w + w/2 = 10
  const char* arrow = "stroke=\"#2ca02c\" stroke-width=\"2\" marker-end=\"url(#arrow)\"";
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      auto [cx, cy] = at(x, y);
      if (x != rx) {  // along the row towards the root's column
        auto [nx, ny] = at(x + (x < rx ? 1 : -1), y);
        s += line(cx + (nx > cx ? 18 : -18), cy, nx + (nx > cx ? -20 : 20), ny, arrow);
      } else if (y != ry) {  // then down the root's column
        auto [nx, ny] = at(x, y + (y < ry ? 1 : -1));
        s += line(cx, cy + (ny > cy ? 12 : -12), nx, ny + (ny > cy ? -14 : 14), arrow);
      }
    }
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      auto [cx, cy] = at(x, y);
      const bool root = x == rx && y == ry;
      s += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"36\" height=\"24\" rx=\"4\" ", cx - 18, cy - 12) +
           (root ? "fill=\"#ffd27f\"" : "fill=\"#eef7ee\"") + " stroke=\"#333\"/>\n" +
           fmt("<text x=\"%.1f\" y=\"%.1f\" ", cx, cy + 4) + "text-anchor=\"middle\" font-size=\"11\">" +
           std::to_string(y * 4 + x) + "</text>\n";
    }
  return s;
}

}  // namespace

std::string topology_diagram() {
  const std::string w = std::to_string(2 * kPanelW), h = std::to_string(2 * kPanelH + 40);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " +
                  w + " " + h + "\" font-family=\"sans-serif\">\n";
  s += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
       "orient=\"auto\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#2ca02c\"/></marker></defs>\n";
  s += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n";
  s += title(kPanelW, 22, "allreduce SIP topologies");
  s += "<g transform=\"translate(0,30)\">\n" + ring(0, 0) + grid(kPanelW, 0, true, "torus_2d 3x2 (wrap links dashed)") +
       grid(0, kPanelH, false, "mesh_2d_no_wrap 3x2") + cubes(kPanelW, kPanelH) + "</g>\n";
  return s + "</svg>\n";
}

}  // namespace kbsim::milestone
