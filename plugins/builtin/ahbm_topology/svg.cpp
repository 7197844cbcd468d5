// `kbsim topology --svg DIR`: system.svg (the tray), sip.svg (one SIP's cube
// mesh and IO chiplets), cube.svg (one cube's NoC, to scale) and pe.svg (PE
// 0/0/0's parts and links). Plain SVG 1.1
// text; the canvas is the bounding box of what was drawn, so nothing is clipped.
#include "svg.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <utility>

#include "kbsim/ahbm/names.hpp"

namespace kbsim::ahbm_topology {

namespace fs = std::filesystem;
namespace names = kbsim::ahbm::names;
using std::to_string;

namespace {

using Pt = std::pair<double, double>;
struct Box {
  double x, y, w, h;
  Pt centre() const { return {x + w / 2, y + h / 2}; }
};

/// Locale-independent and deterministic: one decimal, "12" rather than "12.0".
std::string num(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 1);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

/// ` name="v"`
std::string attr(const char* name, double v) { return std::string(" ") + name + "=\"" + num(v) + '"'; }

std::string esc(std::string_view in) {
  std::string out;
  for (char c : in) {
    const char* e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : nullptr;
    out += e ? std::string_view(e) : std::string_view(&c, 1);
  }
  return out;
}

const char* const kStyle =
    "text{font-family:sans-serif;fill:#222}.title,.bold{font-weight:bold}"
    ".switch{fill:#fde2c4;stroke:#a0522d;stroke-width:1.5}.sip{fill:#e8eef8;stroke:#345;stroke-width:1.5}"
    ".ep{fill:#fff;stroke:#36c}.pcie{fill:none;stroke:#36c;stroke-width:2}"
    ".logical{fill:none;stroke:#c33;stroke-width:2;stroke-dasharray:8 5}"
    ".cube{fill:#eef6ee;stroke:#353;stroke-width:1.5}.seam{stroke:#7a4;stroke-width:6}"
    ".io{fill:#fff6dc;stroke:#a80;stroke-width:1.5}.block{fill:#fff;stroke:#a80}.phy{fill:#fde9a8;stroke:#a80}"
    ".internal{stroke:#a80}.iolink{stroke:#c70;stroke-width:3}"
    ".die{fill:#f7f7f2;stroke:#333;stroke-width:2}.hbm{fill:#d8d0f0;stroke:#75a;stroke-dasharray:4 3}"
    ".router{fill:#4a7;stroke:#253}.mesh{stroke:#4a7;stroke-width:2}.pe{fill:#cde;stroke:#246}"
    ".attach{stroke:#246;stroke-width:1.5}.hbmtext{fill:#75a}.ctl{fill:#f6d6d6;stroke:#933}"
    ".ucie{fill:#f2c14e;stroke:#a70}.uline{stroke:#c90;stroke-width:1.5}.hbmctl{fill:#efeaff;stroke:#75a}"
    ".part{fill:#dfeaf6;stroke:#246;stroke-width:1.5}.plink{stroke:#246;stroke-width:2}.pctl{stroke:#888;stroke-"
    "dasharray:4 3}";

/// An SVG document under construction; every shape may carry a tooltip (`title`),
/// and the next shape drawn after tag() says which node (data-node), link
/// (data-edge="src>dst") or view (data-view, e.g. "cube/0/5") it stands for,
/// for viewers that make the picture interactive (`kbsim web`).
class Svg {
 public:
  void tag(const std::string& node, const std::string& view = {}, const std::string& edge = {}) {
    tag_ = (node.empty() ? "" : " data-node=\"" + esc(node) + '"') +
           (view.empty() ? "" : " data-view=\"" + esc(view) + '"') +
           (edge.empty() ? "" : " data-edge=\"" + esc(edge) + '"');
  }
  void edge(const std::string& src, const std::string& dst) { tag({}, {}, src + ">" + dst); }
  void rect(Box b, std::string_view cls, std::string_view title = {}) {
    shape("rect", attr("x", b.x) + attr("y", b.y) + attr("width", b.w) + attr("height", b.h),
          {{b.x, b.y}, {b.x + b.w, b.y + b.h}}, cls, title);
  }
  void line(Pt a, Pt b, std::string_view cls, std::string_view title = {}) {
    shape("line", attr("x1", a.first) + attr("y1", a.second) + attr("x2", b.first) + attr("y2", b.second), {a, b}, cls,
          title);
  }
  void polyline(const std::vector<Pt>& pts, std::string_view cls, std::string_view title) {
    std::string p;
    for (auto [x, y] : pts) p += (p.empty() ? "" : " ") + num(x) + ',' + num(y);
    shape("polyline", " points=\"" + p + '"', pts, cls, title);
  }
  /// A quadratic curve from a to b bending towards c.
  void curve(Pt a, Pt c, Pt b, std::string_view cls, std::string_view title) {
    Pt apex{(a.first + 2 * c.first + b.first) / 4, (a.second + 2 * c.second + b.second) / 4};
    shape("path",
          " d=\"M" + num(a.first) + ',' + num(a.second) + " Q" + num(c.first) + ',' + num(c.second) + ' ' +
              num(b.first) + ',' + num(b.second) + '"',
          {a, b, apex}, cls, title);
  }
  /// `at` is on the baseline; anchor is "start", "middle" or "end".
  void text(Pt at, std::string_view s, double size, std::string_view anchor = "middle", std::string_view cls = {}) {
    auto [x, y] = at;
    double w = 0.6 * size * static_cast<double>(s.size());
    double left = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    grow({left, y - size});
    grow({left + w, y + size * 0.3});
    body_ << "<text" << attr("x", x) << attr("y", y) << attr("font-size", size);
    if (anchor != "start") body_ << " text-anchor=\"" << anchor << '"';
    if (!cls.empty()) body_ << " class=\"" << cls << '"';
    body_ << '>' << esc(s) << "</text>\n";
  }
  /// Text centred in `b`.
  void label(Box b, std::string_view s, double size, std::string_view cls = {}) {
    text({b.x + b.w / 2, b.y + b.h / 2 + size * 0.35}, s, size, "middle", cls);
  }
  std::string finish(std::string_view title) const {
    const double pad = 20, x = x0_ - pad, y = y0_ - pad, w = x1_ - x0_ + 2 * pad, h = y1_ - y0_ + 2 * pad;
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(w) << "\" height=\"" << num(h)
        << "\" viewBox=\"" << num(x) << ' ' << num(y) << ' ' << num(w) << ' ' << num(h)
        << "\" font-family=\"sans-serif\">\n<title>" << esc(title) << "</title>\n<style type=\"text/css\">" << kStyle
        << "</style>\n<rect" << attr("x", x) << attr("y", y) << attr("width", w) << attr("height", h)
        << " fill=\"#fff\"/>\n"
        << body_.str() << "</svg>\n";
    return out.str();
  }

 private:
  void shape(std::string_view tag, const std::string& attrs, const std::vector<Pt>& pts, std::string_view cls,
             std::string_view title) {
    for (Pt p : pts) grow(p);
    body_ << '<' << tag << attrs << " class=\"" << cls << '"' << tag_;
    tag_.clear();
    if (title.empty())
      body_ << "/>\n";
    else
      body_ << "><title>" << esc(title) << "</title></" << tag << ">\n";
  }
  void grow(Pt p) {
    x0_ = std::min(x0_, p.first), y0_ = std::min(y0_, p.second);
    x1_ = std::max(x1_, p.first), y1_ = std::max(y1_, p.second);
  }
  std::ostringstream body_;
  std::string tag_;
  double x0_ = 1e300, y0_ = 1e300, x1_ = -1e300, y1_ = -1e300;
};

/// A legend at `at`: per row a sample of CSS class `first` (a line or a box; also of class "legend", so samples
/// are not counted as parts of the picture) and the text `second`.
void legend(Svg& g, Pt at, const std::vector<std::pair<std::string, std::string>>& rows) {
  static const std::vector<std::string> kLines{"pcie", "logical", "seam",  "iolink", "internal",
                                               "mesh", "attach",  "uline", "plink",  "pctl"};
  auto [x, y] = at;
  g.text(at, "Legend", 13, "start", "bold");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double ym = y + 22 + 22 * static_cast<double>(i);
    if (std::find(kLines.begin(), kLines.end(), rows[i].first) != kLines.end())
      g.line({x, ym}, {x + 30, ym}, rows[i].first + " legend");
    else
      g.rect({x + 4, ym - 7, 22, 14}, rows[i].first + " legend");
    g.text({x + 38, ym + 4}, rows[i].second, 11, "start");
  }
}

/// The point `d` outward from side `side` of the rectangle (0,0)-(w,h), at `a` along that side.
Pt outside(Side side, double a, double d, double w, double h) {
  switch (side) {
    case Side::kN: return {a, -d};
    case Side::kS: return {a, h + d};
    case Side::kW: return {-d, a};
    default: return {w + d, a};
  }
}
/// The box spanning [a, a+la] along and [d, d+ld] outward from side `side`.
Box outside_box(Side side, double a, double la, double d, double ld, double w, double h) {
  auto [x1, y1] = outside(side, a, d, w, h);
  auto [x2, y2] = outside(side, a + la, d + ld, w, h);
  return {std::min(x1, x2), std::min(y1, y2), std::abs(x2 - x1), std::abs(y2 - y1)};
}
bool horizontal(Side s) { return s == Side::kN || s == Side::kS; }
std::string dims(unsigned w, unsigned h) { return to_string(w) + " x " + to_string(h); }

// ---- system.svg -------------------------------------------------------------

/// The inter-SIP logical links (each pair once).
std::vector<std::pair<unsigned, unsigned>> sip_links(const AhbmSpec& s) {
  std::vector<std::pair<unsigned, unsigned>> out;
  auto add = [&](unsigned a, unsigned b) {
    std::pair<unsigned, unsigned> p{std::min(a, b), std::max(a, b)};
    if (a != b && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (s.sip_topology == "ring_1d") {
    for (unsigned i = 0; i < s.sips; ++i) add(i, (i + 1) % s.sips);
    return out;
  }
  const unsigned w = s.sip_w, h = s.sip_h;
  const bool wrap = s.sip_topology == "torus_2d";
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x) {
      if (x + 1 < w || wrap) add(y * w + x, y * w + (x + 1) % w);
      if (y + 1 < h || wrap) add(y * w + x, ((y + 1) % h) * w + x);
    }
  return out;
}

std::string system_svg(const AhbmSpec& s) {
  Svg g;
  const double bw = 200, bh = 110, gx = 80, gy = 90, top = 150, trunk = -40;
  auto sip = [&](unsigned i) { return Box{(i % s.sip_w) * (bw + gx), top + (i / s.sip_w) * (bh + gy), bw, bh}; };
  const double grid_w = s.sip_w * bw + (s.sip_w - 1) * gx;
  const Box sw{grid_w / 2 - 90, 50, 180, 44};
  for (auto [a, b] : sip_links(s)) {  // under the boxes: centre to centre, wrap-arounds as arcs
    auto [ax, ay] = sip(a).centre();
    auto [zx, zy] = sip(b).centre();
    std::string tip = names::sip(a) + " <-> " + names::sip(b) + " (" + s.sip_topology + ", logical)";
    bool adjacent = std::abs(ax - zx) + std::abs(ay - zy) < std::max(bw + gx, bh + gy) + 1;
    if (adjacent && ax == zx)  // beside the PCIe drop
      g.line({ax + bw / 4, ay}, {zx + bw / 4, zy}, "logical", tip);
    else if (adjacent || (ax != zx && ay != zy))
      g.line({ax, ay}, {zx, zy}, "logical", tip);
    else if (ay == zy)
      g.curve({ax, ay}, {(ax + zx) / 2, ay + bh + 0.7 * gy}, {zx, zy}, "logical", tip);
    else
      g.curve({ax, ay}, {ax + bw + 0.7 * gx, (ay + zy) / 2}, {zx, zy}, "logical", tip);
  }
  const auto n_io = static_cast<unsigned>(s.io_chiplets.size());
  auto ep = [&](unsigned i, unsigned k) {
    return Box{sip(i).x + bw * (k + 1) / (n_io + 1) - 36, sip(i).y + 8, 72, 20};
  };
  for (unsigned i = 0; i < s.sips; ++i)
    for (unsigned k = 0; k < n_io; ++k) {  // PCIe: down from the switch, along the lane above the SIP's row
      double ex = ep(i, k).centre().first, lane = sip(i).y - 30;
      std::vector<Pt> pts{{sw.x + sw.w / 2, sw.y + sw.h}, {sw.x + sw.w / 2, top - 30}};
      if (i >= s.sip_w) pts.insert(pts.end(), {{trunk, top - 30}, {trunk, lane}});
      pts.insert(pts.end(), {{ex, lane}, {ex, sip(i).y + 8}});
      g.edge(names::switch0(), names::io(i, k, "pcie_ep"));
      g.polyline(pts, "pcie",
                 names::switch0() + " <-> " + names::io(i, k, "pcie_ep") + ": PCIe " + num(s.pcie.bw_gbs) + " GB/s, " +
                     num(s.pcie.distance_mm) + " mm");
    }
  g.tag(names::switch0());
  g.rect(sw, "switch", s.switch0.impl);
  g.text({sw.x + sw.w / 2, sw.y + 20}, names::switch0(), 13, "middle", "bold");
  g.text({sw.x + sw.w / 2, sw.y + 36}, s.switch0.impl, 10);
  for (unsigned i = 0; i < s.sips; ++i) {
    const Box b = sip(i);
    g.tag({}, "sip/" + to_string(i));
    g.rect(b, "sip", names::sip(i));
    for (unsigned k = 0; k < n_io; ++k) {
      g.tag(names::io(i, k, "pcie_ep"));
      g.rect(ep(i, k), "ep", names::io(i, k, "pcie_ep"));
      g.label(ep(i, k), s.io_chiplets[k].id + ".pcie_ep", 9);
    }
    const std::string grid = " (" + dims(s.cube_w, s.cube_h) + ")";
    g.text({b.x + bw / 2, b.y + 55}, names::sip(i), 16, "middle", "bold");
    g.text({b.x + bw / 2, b.y + 75}, to_string(s.cubes_per_sip()) + " cubes" + grid, 11);
    g.text({b.x + bw / 2, b.y + 92}, to_string(s.cubes_per_sip() * s.pes_per_cube()) + " PEs", 11);
  }
  g.text({0, 16},
         "AHBM tray: " + to_string(s.sips) + " SIPs behind " + names::switch0() + ", inter-SIP topology " +
             s.sip_topology + " (" + dims(s.sip_w, s.sip_h) + " grid)",
         18, "start", "title");
  legend(g, {grid_w + 60, top},
         {{"switch", "PCIe switch"},
          {"sip", "SIP (see sip.svg)"},
          {"ep", "IO chiplet PCIe endpoint"},
          {"pcie", "PCIe " + num(s.pcie.bw_gbs) + " GB/s, " + num(s.pcie.distance_mm) + " mm"},
          {"logical", "inter-SIP link (" + s.sip_topology + ", logical)"}});
  return g.finish("AHBM system: " + to_string(s.sips) + " SIPs, " + s.sip_topology);
}

// ---- sip.svg ----------------------------------------------------------------

constexpr double kCube = 110, kSeam = 40, kPitch = kCube + kSeam;

/// IO chiplet `k` outside side `side` of the w x h cube mesh, `off` px out: blocks, PHYs and links to the cubes.
void io_chiplet(Svg& g, const AhbmSpec& s, unsigned sip, unsigned k, Side side, double off, double w, double h) {
  const IoChipletSpec& io = s.io_chiplets[k];
  const bool hz = horizontal(side);
  const double la = hz ? 84 : 24, ld = hz ? 24 : 84, depth = hz ? 100 : 204, reserve = hz ? 44 : 28;
  auto along = [&](const CubePort& p) { return p.side != side ? 1e9 : (hz ? p.x : p.y) * kPitch; };
  double lo = 1e300, hi = -1e300;  // along-extent of the cubes it serves on this side
  for (const CubePort& p : io.cube_ports)
    if (p.side == side) lo = std::min(lo, along(p)), hi = std::max(hi, along(p) + kCube);
  if (lo > hi) lo = 0, hi = hz ? w : h;
  const auto n_phy = static_cast<double>(io.cube_ports.size());
  const double len = std::max({hi - lo, reserve + 3 * (la + 12), reserve + n_phy * (la + 12)});
  const double a0 = (lo + hi - len) / 2;
  auto block = [&](double i, double n, double d) {
    return outside_box(side, a0 + reserve + (len - reserve) * (i + 0.5) / n - la / 2, la, d, ld, w, h);
  };
  g.rect(outside_box(side, a0, len, off, depth, w, h), "io", io.id);
  auto [tx, ty] = outside(side, a0 + reserve / 2, off + depth / 2, w, h);
  g.text({tx, ty + 5}, io.id, 14, "middle", "bold");

  const double d_phy = off + 10, d_core = off + depth - 10 - ld;
  const std::array<std::pair<const char*, const BlockSpec*>, 3> core{
      {{"pcie_ep", &io.pcie_ep}, {"io_noc", &io.io_noc}, {"io_cpu", &io.io_cpu}}};
  std::vector<double> slot(io.cube_ports.size());  // PHYs in the order of their cubes along the side
  for (std::size_t i = 0; i < slot.size(); ++i)
    for (std::size_t j = 0; j < slot.size(); ++j)
      slot[i] += std::pair(along(io.cube_ports[j]), j) < std::pair(along(io.cube_ports[i]), i);
  const Pt noc = block(1, 3, d_core).centre();
  for (unsigned i = 0; i < 3; i += 2) {
    g.edge(names::io(sip, k, core[i].first), names::io(sip, k, "io_noc"));
    g.line(block(i, 3, d_core).centre(), noc, "internal");
  }
  for (unsigned i = 0; i < io.cube_ports.size(); ++i) {
    const CubePort& p = io.cube_ports[i];
    const Pt phy = block(slot[i], n_phy, d_phy).centre();
    g.edge(names::io(sip, k, "io_noc"), names::io(sip, k, "io_ucie-" + p.phy) + ".conn0");
    g.line(phy, noc, "internal");
    auto [px, py] = outside(p.side, kCube / 2, 0, kCube, kCube);  // the middle of the cube's side
    const Pt port{px + p.x * kPitch, py + p.y * kPitch};
    g.edge(names::io(sip, k, "io_ucie-" + p.phy),
           names::cube(sip, p.y * s.cube_w + p.x) + ".ucie-" + side_name(p.side));
    g.line(phy, port, "iolink",
           io.id + ".io_ucie-" + p.phy + " <-> cube" + to_string(p.y * s.cube_w + p.x) + ".ucie-" + side_name(p.side) +
               ": " + num(io.per_connection_bw_gbs) + " GB/s, " + num(p.distance_mm) + " mm");
  }
  for (unsigned i = 0; i < 3; ++i) {
    g.tag(names::io(sip, k, core[i].first));
    g.rect(block(i, 3, d_core), "block", io.id + "." + core[i].first + " (" + core[i].second->impl + ")");
    g.label(block(i, 3, d_core), core[i].first, 10);
  }
  for (unsigned i = 0; i < io.cube_ports.size(); ++i) {
    std::string name = "io_ucie-" + io.cube_ports[i].phy;
    g.tag(names::io(sip, k, name));
    g.rect(block(slot[i], n_phy, d_phy), "phy",
           io.id + "." + name + " (" + to_string(io.n_connections) + " x " + num(io.per_connection_bw_gbs) + " GB/s)");
    g.label(block(slot[i], n_phy, d_phy), name, 10);
  }
}

std::string sip_svg(const AhbmSpec& s, unsigned sip) {
  Svg g;
  auto port = [&](unsigned c, Side side) { return names::cube(sip, c) + ".ucie-" + side_name(side); };
  const double w = s.cube_w * kPitch - kSeam, h = s.cube_h * kPitch - kSeam;
  const std::string tip = "UCIe seam: " + num(s.ucie_link.bw_gbs) + " GB/s, " + num(s.ucie_link.distance_mm) + " mm";
  for (unsigned y = 0; y < s.cube_h; ++y)
    for (unsigned x = 0; x < s.cube_w; ++x) {
      const double cx = x * kPitch + kCube / 2, cy = y * kPitch + kCube / 2;
      const unsigned c = y * s.cube_w + x;
      if (x + 1 < s.cube_w) {
        g.edge(port(c, Side::kE), port(c + 1, Side::kW));
        g.line({cx + kCube / 2, cy}, {cx + kCube / 2 + kSeam, cy}, "seam", tip);
      }
      if (y + 1 < s.cube_h) {
        g.edge(port(c, Side::kS), port(c + s.cube_w, Side::kN));
        g.line({cx, cy + kCube / 2}, {cx, cy + kCube / 2 + kSeam}, "seam", tip);
      }
    }
  for (unsigned y = 0; y < s.cube_h; ++y)
    for (unsigned x = 0; x < s.cube_w; ++x) {
      const unsigned c = y * s.cube_w + x;
      const Box b{x * kPitch, y * kPitch, kCube, kCube};
      g.tag({}, "cube/" + to_string(sip) + "/" + to_string(c));
      g.rect(b, "cube", names::cube(sip, c) + (sip == 0 ? " (every SIP alike)" : ""));
      g.text({b.x + kCube / 2, b.y + kCube / 2}, "cube" + to_string(c), 15, "middle", "bold");
      g.text({b.x + kCube / 2, b.y + kCube / 2 + 20}, "(" + to_string(x) + "," + to_string(y) + ")", 12);
    }
  std::array<unsigned, 4> lanes{};  // IO chiplets already placed per side
  for (unsigned k = 0; k < s.io_chiplets.size(); ++k) {
    const auto& ports = s.io_chiplets[k].cube_ports;
    const Side side = ports.empty() ? Side::kN : ports.front().side;
    io_chiplet(g, s, sip, k, side, 60 + lanes[static_cast<int>(side)]++ * (horizontal(side) ? 130 : 234), w, h);
  }
  const double top = lanes[0] ? -30.0 - 130 * lanes[0] : 0.0, left = lanes[3] ? -30.0 - 234 * lanes[3] : 0.0;
  g.text({left, top - 24},
         "AHBM SIP: " + dims(s.cube_w, s.cube_h) + " cube mesh (cube index = y * w + x), " +
             to_string(s.io_chiplets.size()) + " IO chiplet(s); every SIP of the tray is the same",
         18, "start", "title");
  legend(g, {w + 60 + 234 * lanes[1], 0},
         {{"cube", "cube (see cube.svg)"},
          {"seam", "UCIe seam " + num(s.ucie_link.bw_gbs) + " GB/s"},
          {"io", "IO chiplet"},
          {"block", "pcie_ep / io_noc / io_cpu"},
          {"phy", "IO UCIe PHY"},
          {"iolink", "PHY to cube UCIe port"},
          {"internal", "IO chiplet internal link"}});
  return g.finish("AHBM SIP: " + dims(s.cube_w, s.cube_h) + " cubes");
}

// ---- cube.svg ---------------------------------------------------------------

constexpr double kPxPerMm = 40;

std::string rc(Cell c) { return "r" + to_string(c.row) + "c" + to_string(c.col); }

/// The UCIe port of one side: a bar outside the cube edge and a line to each connection's router.
void ucie_side(Svg& g, const MeshLayout& m, const std::string& cube, Side side, double w, double h) {
  const auto& conns = m.ucie[static_cast<int>(side)];
  if (conns.empty()) return;
  auto pos = [&](Cell c) { return Pt{m.col_x[c.col] * kPxPerMm, m.row_y[c.row] * kPxPerMm}; };
  double lo = 1e300, hi = -1e300;
  for (Cell c : conns) {
    double a = horizontal(side) ? pos(c).first : pos(c).second;
    lo = std::min(lo, a - 24), hi = std::max(hi, a + 24);
  }
  const std::string name = std::string("ucie-") + side_name(side), label = std::string("UCIe-") + side_name(side);
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const Pt r = pos(conns[i]);
    g.edge(cube + "." + name + ".conn" + to_string(i), cube + "." + rc(conns[i]));
    g.line(r, outside(side, horizontal(side) ? r.first : r.second, 36, w, h), "uline",
           name + ".conn" + to_string(i) + " <-> " + rc(conns[i]));
  }
  g.tag(cube + "." + name);
  g.rect(outside_box(side, lo, hi - lo, 36, 16, w, h), "ucie", label + ": " + to_string(conns.size()) + " connections");
  g.text(horizontal(side) ? outside(side, (lo + hi) / 2, side == Side::kN ? 60 : 66, w, h)
                          : outside(side, hi + 16, 44, w, h),
         label, 12, "middle", "bold");
}

std::string cube_svg(const AhbmSpec& s, const MeshLayout& m, unsigned sip, unsigned cube) {
  Svg g;
  const std::string id = names::cube(sip, cube);
  auto router = [&](Cell c) { return id + "." + rc(c); };
  const double k = kPxPerMm, w = s.cube_w_mm * k, h = s.cube_h_mm * k;
  auto X = [&](unsigned c) { return m.col_x[c] * k; };
  auto Y = [&](unsigned r) { return m.row_y[r] * k; };
  g.rect({0, 0, w, h}, "die", "cube: " + num(s.cube_w_mm) + " x " + num(s.cube_h_mm) + " mm");
  const unsigned r0 = m.hbm_row0, c0 = m.hbm_col0;  // the zone's edges: half-way to the routers around it
  const double hx0 = (X(c0 - 1) + X(c0)) / 2, hx1 = (X(c0 + 1) + X(c0 + 2)) / 2;
  const double hy0 = (Y(r0 - 1) + Y(r0)) / 2, hy1 = (Y(r0 + 1) + Y(r0 + 2)) / 2;
  const Box hbm{hx0, hy0, hx1 - hx0, hy1 - hy0};
  g.rect(hbm, "hbm", "HBM exclusion zone (no routers)");
  g.label(hbm, "HBM", 16, "bold");
  g.text({hbm.x + hbm.w / 2, hbm.y + hbm.h / 2 + 24},
         to_string(s.hbm_total_gb_per_cube) + " GiB, " + to_string(s.hbm_slices_per_cube) + " slices", 11);
  const std::string mesh_tip = "router link " + num(s.router_link_bw_gbs) + " GB/s";
  for (unsigned r = 0; r < m.rows(); ++r)
    for (unsigned c = 0; c < m.cols(); ++c) {
      if (m.has(r, c) && m.has(r, c + 1)) {
        g.edge(router({r, c}), router({r, c + 1}));
        g.line({X(c), Y(r)}, {X(c + 1), Y(r)}, "mesh", mesh_tip);
      }
      if (m.has(r, c) && m.has(r + 1, c)) {
        g.edge(router({r, c}), router({r + 1, c}));
        g.line({X(c), Y(r)}, {X(c), Y(r + 1)}, "mesh", mesh_tip);
      }
    }
  for (unsigned side = 0; side < 4; ++side) ucie_side(g, m, id, static_cast<Side>(side), w, h);

  // Blocks on a router hang below-right of it (between its links), stacked when several share one router.
  std::map<std::pair<unsigned, unsigned>, double> next_dy;
  auto attach = [&](Cell c, double bw, double below, std::string_view cls, const std::string& tip,
                    const std::string& node, const std::string& view) {
    double& dy = next_dy.try_emplace({c.row, c.col}, 12.0).first->second;
    const Box b{X(c.col) + 11, Y(c.row) + dy, bw, 16};
    dy += 22 + below;
    g.edge(node, router(c));
    g.line({X(c.col), Y(c.row)}, {b.x + 4, b.y + 4}, "attach");
    g.tag(view.empty() ? node : std::string(), view);
    g.rect(b, cls, tip);
    return b;
  };
  std::string parts;
  for (const auto& [name, block] : s.pe_components) parts += (parts.empty() ? "" : ", ") + name;
  for (unsigned i = 0; i < m.pe.size(); ++i) {
    const std::string pe = "pe" + to_string(i);
    const Box b = attach(
        m.pe[i], 36, 10, "pe", pe + " at (" + num(m.pe_x[i]) + ", " + num(m.pe_y[i]) + ") mm: " + parts,
        names::pe_part(sip, cube, i, "pe_dma"), "pe/" + to_string(sip) + "/" + to_string(cube) + "/" + to_string(i));
    g.label(b, pe, 10, "bold");
    g.tag(names::hbm_ctrl(sip, cube, i));
    g.rect({b.x - 4, b.y + b.h + 2, b.w + 8, 11}, "hbmctl", "hbm_ctrl.pe" + to_string(i) + ", on " + rc(m.pe[i]));
    g.text({b.x + b.w / 2, b.y + b.h + 10}, "hbm.pe" + to_string(i), 8, "middle", "hbmtext");
  }
  g.label(
      attach(m.m_cpu, 44, 0, "ctl", "m_cpu, " + num(s.mcpu_to_router_bw_gbs) + " GB/s", names::m_cpu(sip, cube), {}),
      "M_CPU", 10, "bold");
  g.label(attach(m.sram, 44, 0, "ctl", "sram, " + num(s.sram_to_router_bw_gbs) + " GB/s", names::sram(sip, cube), {}),
          "SRAM", 10, "bold");
  unsigned present = 0;
  for (unsigned r = 0; r < m.rows(); ++r)
    for (unsigned c = 0; c < m.cols(); ++c) {
      if (!m.has(r, c)) continue;
      ++present;
      g.tag(router({r, c}));
      g.rect({X(c) - 7, Y(r) - 7, 14, 14}, "router", rc({r, c}));
      g.text({X(c) - 9, Y(r) - 9}, rc({r, c}), 9, "end");
    }
  g.text({-60, -100},
         "AHBM cube: " + num(s.cube_w_mm) + " x " + num(s.cube_h_mm) + " mm, " + dims(m.rows(), m.cols()) +
             " router mesh (" + to_string(present) + " routers), " + to_string(m.pe.size()) +
             " PEs; to scale, 40 px = 1 mm",
         18, "start", "title");
  legend(g, {w + 90, 0},
         {{"router", "router r{row}c{col}"},
          {"mesh", mesh_tip},
          {"pe", "PE (" + parts + ")"},
          {"attach", "PE / M_CPU / SRAM to its router"},
          {"hbm", "HBM zone; hbm.pe{i}: PE i's HBM controller, on PE i's router"},
          {"ctl", "M_CPU, SRAM"},
          {"ucie", "UCIe port (" + to_string(s.ucie_connections) + " connections per side)"},
          {"uline", "UCIe connection to its router"}});
  g.line({w + 90, 220}, {w + 90 + k, 220}, "mesh");
  g.text({w + 98 + k, 224}, "1 mm", 11, "start");
  return g.finish("AHBM cube: " + to_string(present) + " routers, " + to_string(m.pe.size()) + " PEs");
}

// ---- pe.svg (one PE) -------------------------------------------------------

/// One PE's parts on a circle, its internal links (solid: data, dashed: control
/// only) and the router its DMA / CPU attach to.
std::string pe_svg(const AhbmSpec& s, const MeshLayout& m, unsigned sip, unsigned cube, unsigned pe) {
  Svg g;
  const double r = 230, bw = 130, bh = 34;
  const auto n = static_cast<double>(s.pe_components.size());
  auto at = [&](std::size_t i) {
    const double a = 2 * 3.14159265358979 * static_cast<double>(i) / n - 3.14159265358979 / 2;
    return Pt{r * std::cos(a), r * std::sin(a)};
  };
  auto index = [&](const std::string& part) {
    for (std::size_t i = 0; i < s.pe_components.size(); ++i)
      if (s.pe_components[i].first == part) return i;
    return s.pe_components.size();
  };
  const std::string router = names::cube(sip, cube) + "." + rc(m.pe[pe]);
  const Pt rpos{r + 230, 0};
  for (const PeLinkSpec& l : s.pe_links) {
    const std::size_t a = index(l.src), b = index(l.dst);
    if (a >= s.pe_components.size() || b >= s.pe_components.size()) continue;
    g.edge(names::pe_part(sip, cube, pe, l.src), names::pe_part(sip, cube, pe, l.dst));
    g.line(
        at(a), at(b), l.bw_gbs > 0 ? "plink" : "pctl",
        l.src + (l.bidir ? " <-> " : " -> ") + l.dst + (l.bw_gbs > 0 ? ": " + num(l.bw_gbs) + " GB/s" : ": control"));
  }
  for (std::size_t i = 0; i < s.pe_components.size(); ++i) {
    const auto& [part, block] = s.pe_components[i];
    if (block.attach != "dma" && block.attach != "cpu") continue;
    g.edge(names::pe_part(sip, cube, pe, part), router);
    g.line(at(i), rpos, "attach", part + " <-> " + rc(m.pe[pe]) + (block.attach == "dma" ? " (data)" : " (commands)"));
  }
  for (std::size_t i = 0; i < s.pe_components.size(); ++i) {
    const auto& [part, block] = s.pe_components[i];
    const Box b{at(i).first - bw / 2, at(i).second - bh / 2, bw, bh};
    g.tag(names::pe_part(sip, cube, pe, part));
    g.rect(b, "part", part + " (" + block.impl + ")");
    g.label({b.x, b.y - 6, b.w, b.h}, part, 12, "bold");
    g.text({b.x + bw / 2, b.y + bh - 6}, block.impl, 9);
  }
  g.tag(router, "cube/" + to_string(sip) + "/" + to_string(cube));
  g.rect({rpos.first - 40, rpos.second - 18, 80, 36}, "router",
         "router " + rc(m.pe[pe]) + " of " + names::cube(sip, cube));
  g.label({rpos.first - 40, rpos.second - 18, 80, 36}, rc(m.pe[pe]), 12, "bold");
  g.text({-r - 80, -r - 60}, "PE " + names::pe(sip, cube, pe) + ": " + to_string(s.pe_components.size()) + " parts", 18,
         "start", "title");
  legend(g, {r + 340, -r},
         {{"part", "PE part (cube.pe_template.components)"},
          {"plink", "data link"},
          {"pctl", "control link (commands, tile tokens)"},
          {"attach", "attachment to its router"},
          {"router", "its router (click: the cube)"}});
  return g.finish("PE " + names::pe(sip, cube, pe));
}

void write_atomic(const fs::path& dir, const fs::path& file, const std::string& text) {
  fs::path tmp = file;
  tmp += ".tmp";
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw ConfigError("--svg " + dir.string() + ": cannot write " + file.string() + ": " + why);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::generic_category().message(errno));
    out << text;
    out.close();
    if (!out) fail("write failed");
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) fail(ec.message());
}

}  // namespace

std::string view_svg(const Compiled& system, std::string_view name) {
  const AhbmSpec& s = system.spec;
  std::vector<unsigned> at;
  std::string_view kind = name.substr(0, name.find('/'));
  for (std::size_t p = name.find('/'); p != std::string_view::npos;) {
    const std::size_t q = name.find('/', p + 1);
    const std::string_view part = name.substr(p + 1, q == std::string_view::npos ? q : q - p - 1);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size()) return {};
    at.push_back(v);
    p = q;
  }
  const bool sip_ok = !at.empty() && at[0]<s.sips, cube_ok = at.size()> 1 && at[1] < s.cubes_per_sip();
  if (kind == "system" && at.empty()) return system_svg(s);
  if (kind == "sip" && at.size() == 1 && sip_ok) return sip_svg(s, at[0]);
  if (kind == "cube" && at.size() == 2 && sip_ok && cube_ok) return cube_svg(s, system.mesh, at[0], at[1]);
  if (kind == "pe" && at.size() == 3 && sip_ok && cube_ok && at[2] < s.pes_per_cube())
    return pe_svg(s, system.mesh, at[0], at[1], at[2]);
  return {};
}

std::vector<fs::path> write_svgs(const Compiled& system, const fs::path& dir) {
  const std::array<std::pair<const char*, std::string>, 4> files{
      {{"system.svg", system_svg(system.spec)},
       {"sip.svg", sip_svg(system.spec, 0)},
       {"cube.svg", cube_svg(system.spec, system.mesh, 0, 0)},
       {"pe.svg", pe_svg(system.spec, system.mesh, 0, 0, 0)}}};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw ConfigError("--svg " + dir.string() +
                      ": cannot write the directory: " + (ec ? ec.message() : std::string("not a directory")));
  std::vector<fs::path> out;
  for (const auto& [name, text] : files) {
    write_atomic(dir, dir / name, text);
    out.push_back(dir / name);
  }
  return out;
}

}  // namespace kbsim::ahbm_topology
