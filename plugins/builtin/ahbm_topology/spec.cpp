#include "spec.hpp"

#include <cmath>
#include <functional>
#include <tuple>

#include "kbsim/text.hpp"
#include "kbsim/time.hpp"

namespace kbsim::ahbm_topology {

namespace {

/// Bounds that keep a generated link's wire delay (distance_mm x ns_per_mm) far inside the simulatable range, so an
/// absurd value is refused at its own key: a wire of at most a kilometre, at most a microsecond per millimetre.
constexpr double kMaxWireMm = 1e6;
constexpr double kMaxNsPerMm = 1e3;

/// A YAML map being read: knows its dotted key path and how to name positions.
class Cursor {
 public:
  Cursor(const Origins& o, const YAML::Node& node, std::string path, const std::string& scope)
      : o_(&o), node_(node), path_(std::move(path)), scope_(o.scope(node_, scope)) {}

  std::string where(const YAML::Node& n) const { return o_->where(n, o_->scope(n, scope_)); }
  std::string where() const { return where(node_); }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    YAML::Node n = node_[key];
    throw ConfigError((n ? where(n) : where()) + ": " + key_path(key) + ": " + what);
  }
  const YAML::Node& node() const { return node_; }
  bool has(const std::string& key) const { return static_cast<bool>(node_[key]); }

  /// Check it is a map whose keys are all in `allowed`.
  Cursor& expect(const std::vector<std::string>& allowed) {
    if (!node_.IsMap()) throw ConfigError(where() + ": " + (path_.empty() ? "the topology" : path_) + " must be a map");
    check_keys(node_, allowed, path_.empty() ? "the topology" : path_, [&](const YAML::Node& n) { return where(n); });
    return *this;
  }
  Cursor child(const std::string& key) const { return Cursor(*o_, node_[key], key_path(key), scope_); }
  void with_map(const std::string& key, const std::vector<std::string>& allowed,
                const std::function<void(Cursor&)>& read) const {
    if (!has(key)) return;
    Cursor c = child(key);
    c.expect(allowed);
    read(c);
  }

  void number(const std::string& key, double& out, double min = 0.0, double max = 1e15) const {
    if (!has(key)) return;
    std::optional<double> v = scalar_number(node_[key]);
    if (!v) fail(key, "must be a number");
    out = *v;
    if (!std::isfinite(out) || out < min || out > max)
      fail(key, "must be a number between " + format_number(min) + " and " + format_number(max) + ", got " +
                    node_[key].Scalar());
    if (key.size() > 4 && key.ends_with("_gbs") && out > 0 && out < kMinBandwidthGbs)
      fail(key, node_[key].Scalar() + " is too small to simulate (0 means unlimited; otherwise at least 1e-6)");
  }
  template <class U>
  void whole(const std::string& key, U& out, std::int64_t min, std::int64_t max) const {
    if (!has(key)) return;
    YAML::Node n = node_[key];
    ParamValue v = n.IsScalar() ? scalar_value(n) : ParamValue{std::string()};
    const auto* i = std::get_if<std::int64_t>(&v);
    if (!i) fail(key, "must be a whole number, got " + (n.IsScalar() ? n.Scalar() : std::string("a map or list")));
    if (*i < min || *i > max)
      fail(key,
           "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(*i));
    out = static_cast<U>(*i);
  }
  void text(const std::string& key, std::string& out, const std::vector<std::string>& choices = {}) const {
    if (!has(key)) return;
    YAML::Node n = node_[key];
    if (!n.IsScalar() || n.Scalar().empty()) fail(key, "must be a name");
    out = n.Scalar();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), out) == choices.end())
      fail(key, "must be one of " + join(choices, ", ") + ", got '" + out + "'" + suggest(out, choices));
  }
  void pair(const std::string& key, std::array<double, 2>& out) const {
    if (!has(key)) return;
    YAML::Node n = node_[key];
    if (!n.IsSequence() || n.size() != 2) fail(key, "must be a list of two numbers [x, y]");
    for (std::size_t i = 0; i < 2; ++i) {
      std::optional<double> v = scalar_number(n[i]);
      if (!v) fail(key, "must be a list of two numbers [x, y]");
      out[i] = *v;
    }
  }
  const Origins& origins() const { return *o_; }
  const std::string& scope() const { return scope_; }
  const std::string& path() const { return path_; }

 private:
  const Origins* o_;
  YAML::Node node_;
  std::string path_;
  std::string scope_;
};

void read_block(const Cursor& parent, const std::string& key, BlockSpec& out, bool allow_attach = false) {
  if (!parent.has(key)) return;
  Cursor c = parent.child(key);
  std::vector<std::string> keys = {"impl", "attrs"};
  if (allow_attach) keys.push_back("attach");
  c.expect(keys);
  c.text("impl", out.impl);
  out.origin = c.where(c.has("impl") ? c.node()["impl"] : c.node());
  if (allow_attach) c.text("attach", out.attach, {"dma", "cpu"});
  if (c.has("attrs")) {
    Cursor a = c.child("attrs");
    if (!a.node().IsMap() && !a.node().IsNull()) throw ConfigError(a.where() + ": " + a.path() + " must be a map");
    for (const auto& kv : a.node()) {
      if (!kv.second.IsScalar())
        throw ConfigError(a.where(kv.second) + ": " + a.key_path(kv.first.Scalar()) + " must be a single value");
      out.attrs.push_back({kv.first.Scalar(), scalar_value(kv.second), a.where(kv.second)});
    }
  }
}

void read_link(const Cursor& parent, const std::string& key, LinkSpec& out) {
  parent.with_map(key, {"bw_gbs", "distance_mm", "latency_ns", "routing_weight_mm"}, [&](Cursor& c) {
    c.number("bw_gbs", out.bw_gbs);
    c.number("distance_mm", out.distance_mm, 0.0, kMaxWireMm);
    c.number("latency_ns", out.latency_ns);
    c.number("routing_weight_mm", out.routing_weight_mm, 0.0, kMaxWireMm);
  });
}

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

void read_io_chiplet(Cursor& c, IoChipletSpec& io, const AhbmSpec& spec) {
  c.expect({"id", "components", "links", "per_connection_bw_gbs", "n_connections", "cube_ports"});
  c.text("id", io.id);
  c.with_map("components", {"pcie_ep", "io_cpu", "io_noc", "io_ucie", "conn"}, [&](Cursor& m) {
    read_block(m, "pcie_ep", io.pcie_ep);
    read_block(m, "io_cpu", io.io_cpu);
    read_block(m, "io_noc", io.io_noc);
    read_block(m, "io_ucie", io.io_ucie);
    read_block(m, "conn", io.conn);
  });
  c.with_map("links", {"pcie_ep_to_noc_bw_gbs", "io_cpu_to_noc_bw_gbs"}, [&](Cursor& m) {
    m.number("pcie_ep_to_noc_bw_gbs", io.pcie_ep_to_noc_bw_gbs);
    m.number("io_cpu_to_noc_bw_gbs", io.io_cpu_to_noc_bw_gbs);
  });
  c.number("per_connection_bw_gbs", io.per_connection_bw_gbs);
  c.whole("n_connections", io.n_connections, 1, 16);
  if (!c.has("cube_ports")) return;
  Cursor ports = c.child("cube_ports");
  if (!ports.node().IsSequence()) throw ConfigError(ports.where() + ": " + ports.path() + " must be a list");
  for (std::size_t i = 0; i < ports.node().size(); ++i) {
    Cursor p(ports.origins(), ports.node()[i], ports.path() + "." + std::to_string(i), ports.scope());
    p.expect({"cube", "cube_side", "phy", "distance_mm", "routing_weight_mm"});
    CubePort cp;
    cp.origin = p.where();
    if (!p.has("cube")) p.fail("cube", "is required ({xy: [x, y]})");
    Cursor cube = p.child("cube");
    cube.expect({"xy"});
    std::array<double, 2> xy{-1, -1};
    cube.pair("xy", xy);
    if (xy[0] < 0 || xy[1] < 0 || xy[0] >= spec.cube_w || xy[1] >= spec.cube_h || std::floor(xy[0]) != xy[0] ||
        std::floor(xy[1]) != xy[1])
      cube.fail("xy",
                "must name a cube of the " + std::to_string(spec.cube_w) + "x" + std::to_string(spec.cube_h) + " mesh");
    cp.x = static_cast<unsigned>(xy[0]);
    cp.y = static_cast<unsigned>(xy[1]);
    std::string side = "N";
    p.text("cube_side", side, {"N", "E", "S", "W"});
    cp.side = side == "N" ? Side::kN : side == "E" ? Side::kE : side == "S" ? Side::kS : Side::kW;
    bool inner = (cp.side == Side::kN && cp.y > 0) || (cp.side == Side::kS && cp.y + 1 < spec.cube_h) ||
                 (cp.side == Side::kW && cp.x > 0) || (cp.side == Side::kE && cp.x + 1 < spec.cube_w);
    if (inner) p.fail("cube_side", "side " + side + " of that cube faces another cube; IO attaches on the SIP edge");
    cp.phy = "P" + std::to_string(io.cube_ports.size());
    p.text("phy", cp.phy);
    p.number("distance_mm", cp.distance_mm, 0.0, kMaxWireMm);
    p.number("routing_weight_mm", cp.routing_weight_mm, 0.0, kMaxWireMm);
    for (const auto& other : io.cube_ports) {
      if (other.phy == cp.phy) p.fail("phy", "PHY '" + cp.phy + "' is used twice (first at " + other.origin + ")");
      if (other.x == cp.x && other.y == cp.y && other.side == cp.side)
        p.fail("cube_side", "this cube side is already attached (at " + other.origin + ")");
    }
    io.cube_ports.push_back(cp);
  }
}

}  // namespace

AhbmSpec parse_spec(const YamlSource& src, const Origins& origins) {
  AhbmSpec s;
  s.source = src.name();
  // The reference PE template: its DMA on the PE's router, its TCM behind it.
  // The reference PE (docs/model.md, "The PE"): PE_CPU and PE_MMU on the command network,
  // PE_DMA on the data network, the engines linked as tiles flow between them.
  auto part = [](const char* impl, const char* attach) { return BlockSpec{impl, {}, "", attach}; };
  s.pe_components = {{"pe_cpu", part("builtin.pe_cpu", "cpu")}, {"pe_scheduler", part("builtin.pe_scheduler", "")},
                     {"pe_dma", part("builtin.pe_dma", "dma")}, {"pe_fetch_store", part("builtin.pe_fetch_store", "")},
                     {"pe_gemm", part("builtin.pe_gemm", "")},  {"pe_math", part("builtin.pe_math", "")},
                     {"pe_tcm", part("builtin.pe_tcm", "")},    {"pe_mmu", part("builtin.pe_mmu", "cpu")}};
  s.pe_links.clear();
  for (auto [a, b, bw] : {std::tuple{"pe_cpu", "pe_scheduler", 0.0},
                          {"pe_scheduler", "pe_dma", 0.0},
                          {"pe_scheduler", "pe_fetch_store", 0.0},
                          {"pe_scheduler", "pe_gemm", 0.0},
                          {"pe_scheduler", "pe_math", 0.0},
                          {"pe_dma", "pe_fetch_store", 0.0},
                          {"pe_fetch_store", "pe_gemm", 0.0},
                          {"pe_fetch_store", "pe_math", 0.0},
                          {"pe_gemm", "pe_math", 0.0},
                          {"pe_dma", "pe_tcm", 512.0},
                          {"pe_fetch_store", "pe_tcm", 0.0}})
    s.pe_links.push_back({a, b, bw, true, s.source});
  Cursor root(origins, src.root(), "", "");
  root.expect({"ns_per_mm", "flit_bytes", "system", "sip", "cube"});
  root.number("ns_per_mm", s.ns_per_mm, 0.0, kMaxNsPerMm);
  root.whole("flit_bytes", s.flit_bytes, 1, 1 << 20);

  root.with_map("system", {"sips", "switch", "links", "routing"}, [&](Cursor& sys) {
    sys.text("routing", s.routing, {"distance", "latency"});
    sys.with_map("sips", {"count", "topology", "w", "h"}, [&](Cursor& c) {
      c.whole("count", s.sips, 1, 16);
      c.text("topology", s.sip_topology, {"ring_1d", "torus_2d", "mesh_2d_no_wrap"});
      c.whole("w", s.sip_w, 1, 16);
      c.whole("h", s.sip_h, 1, 16);
      // SIP grid (docs/model.md, "The SIP grid"): explicit w/h, else a square, else an error.
      if (s.sip_w && s.sip_h && s.sip_w * s.sip_h != s.sips)
        c.fail("w", "w x h = " + std::to_string(s.sip_w * s.sip_h) + " but count = " + std::to_string(s.sips));
      if ((s.sip_w == 0) != (s.sip_h == 0)) c.fail(s.sip_w ? "w" : "h", "give both w and h, or neither");
      auto side = static_cast<unsigned>(std::lround(std::sqrt(static_cast<double>(s.sips))));
      if (s.sip_w == 0 && s.sip_topology != "ring_1d" && side * side != s.sips)
        c.fail(c.has("topology") ? "topology" : "count",
               s.sip_topology + " over " + std::to_string(s.sips) +
                   " SIPs needs system.sips.w and h (the count is not a square)");
    });
    read_block(sys, "switch", s.switch0);
    sys.with_map("links", {"pcie"}, [&](Cursor& l) { read_link(l, "pcie", s.pcie); });
  });
  if (s.sip_w == 0) {
    if (s.sip_topology == "ring_1d") {
      s.sip_w = s.sips;
      s.sip_h = 1;
    } else {
      auto side = static_cast<unsigned>(std::lround(std::sqrt(static_cast<double>(s.sips))));
      if (side * side != s.sips)
        throw ConfigError(s.source + ": system.sips: " + s.sip_topology + " over " + std::to_string(s.sips) +
                          " SIPs needs system.sips.w and h (the count is not a square)");
      s.sip_w = s.sip_h = side;
    }
  }

  bool io_given = false;
  root.with_map("sip", {"cube_mesh", "links", "io_chiplets"}, [&](Cursor& sip) {
    sip.with_map("cube_mesh", {"w", "h"}, [&](Cursor& c) {
      c.whole("w", s.cube_w, 1, 4);
      c.whole("h", s.cube_h, 1, 4);
    });
    sip.with_map("links", {"ucie"}, [&](Cursor& l) { read_link(l, "ucie", s.ucie_link); });
    if (sip.has("io_chiplets")) {
      io_given = true;
      Cursor list = sip.child("io_chiplets");
      if (!list.node().IsSequence() || list.node().size() == 0 || list.node().size() > 5)
        throw ConfigError(list.where() + ": sip.io_chiplets must be a list of 1 to 5 IO chiplets");
      for (std::size_t i = 0; i < list.node().size(); ++i) {
        Cursor c(origins, list.node()[i], "sip.io_chiplets." + std::to_string(i), list.scope());
        IoChipletSpec io;
        io.id = "io" + std::to_string(i);
        read_io_chiplet(c, io, s);
        if (io.id != "io" + std::to_string(i))
          c.fail("id", "IO chiplet " + std::to_string(i) + " must be called io" + std::to_string(i));
        if (io.cube_ports.empty()) c.fail("cube_ports", "an IO chiplet needs at least one cube port");
        s.io_chiplets.push_back(std::move(io));
      }
    }
  });
  if (!io_given) {
    IoChipletSpec io;
    io.cube_ports.push_back({0, 0, Side::kN, "P0", 2.0, 0.0, s.source});
    s.io_chiplets.push_back(io);
  }
  for (std::size_t a = 0; a < s.io_chiplets.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      for (const auto& pa : s.io_chiplets[a].cube_ports)
        for (const auto& pb : s.io_chiplets[b].cube_ports)
          if (pa.x == pb.x && pa.y == pb.y && pa.side == pb.side)
            throw ConfigError(pa.origin + ": this cube side is already attached to " + s.io_chiplets[b].id + " (at " +
                              pb.origin + ")");

  root.with_map(
      "cube", {"geometry", "pe_layout", "placement", "ucie", "components", "links", "memory_map", "pe_template"},
      [&](Cursor& cube) {
        cube.with_map("geometry", {"cube_mm", "pe_pitch_mm", "max_router_spacing_mm", "hbm_gap_mm"}, [&](Cursor& g) {
          g.with_map("cube_mm", {"w", "h"}, [&](Cursor& mm) {
            for (const char* k : {"w", "h"})
              if (mm.has(k))
                (k[0] == 'w' ? s.cube_w_origin : s.cube_h_origin) =
                    mm.where(mm.node()[k]) + ": cube.geometry.cube_mm." + k;
            // A cube is a die: at most 100 mm a side (a router grid of at most a few hundred routers).
            mm.number("w", s.cube_w_mm, 1.0, 100.0);
            mm.number("h", s.cube_h_mm, 1.0, 100.0);
          });
          g.number("pe_pitch_mm", s.pe_pitch_mm, 0.1, 100.0);
          g.number("max_router_spacing_mm", s.max_router_spacing_mm, 0.5, 100.0);
          g.number("hbm_gap_mm", s.hbm_gap_mm, 0.1, 100.0);
        });
        cube.with_map("pe_layout", {"corners", "pe_per_corner"}, [&](Cursor& l) {
          l.whole("pe_per_corner", s.pe_per_corner, 1, 4);
          if (l.has("corners")) {
            YAML::Node n = l.node()["corners"];
            if (!n.IsSequence() || n.size() == 0 || n.size() > 4)
              l.fail("corners", "must be a list of 1 to 4 of NW, NE, SW, SE");
            s.corners.clear();
            for (const auto& c : n) {
              std::string name = c.IsScalar() ? c.Scalar() : "";
              const std::vector<std::string> all = {"NW", "NE", "SW", "SE"};
              if (std::find(all.begin(), all.end(), name) == all.end())
                l.fail("corners", "'" + name + "' is not one of NW, NE, SW, SE");
              if (std::find(s.corners.begin(), s.corners.end(), name) != s.corners.end())
                l.fail("corners", "'" + name + "' is listed twice");
              s.corners.push_back(name);
            }
          }
        });
        cube.with_map("placement", {"m_cpu", "sram"}, [&](Cursor& p) {
          p.with_map("m_cpu", {"pos_mm"}, [&](Cursor& m) { m.pair("pos_mm", s.m_cpu_pos_mm); });
          p.with_map("sram", {"pos_mm"}, [&](Cursor& m) { m.pair("pos_mm", s.sram_pos_mm); });
        });
        cube.with_map("ucie", {"n_connections"},
                      [&](Cursor& u) { u.whole("n_connections", s.ucie_connections, 1, 16); });
        cube.with_map("components", {"router", "ucie", "ucie_conn", "m_cpu", "sram", "hbm_ctrl"}, [&](Cursor& m) {
          read_block(m, "router", s.router);
          read_block(m, "ucie", s.ucie);
          read_block(m, "ucie_conn", s.ucie_conn);
          read_block(m, "m_cpu", s.m_cpu);
          read_block(m, "sram", s.sram);
          read_block(m, "hbm_ctrl", s.hbm_ctrl);
        });
        cube.with_map("links",
                      {"router_link_bw_gbs", "pe_to_router_bw_gbs", "sram_to_router_bw_gbs", "mcpu_to_router_bw_gbs",
                       "ucie_conn_bw_gbs"},
                      [&](Cursor& l) {
                        l.number("router_link_bw_gbs", s.router_link_bw_gbs);
                        l.number("pe_to_router_bw_gbs", s.pe_to_router_bw_gbs);
                        l.number("sram_to_router_bw_gbs", s.sram_to_router_bw_gbs);
                        l.number("mcpu_to_router_bw_gbs", s.mcpu_to_router_bw_gbs);
                        l.number("ucie_conn_bw_gbs", s.ucie_conn_bw_gbs);
                      });
        cube.with_map("memory_map",
                      {"hbm_mapping_mode", "hbm_pseudo_channels", "hbm_channels_per_pe", "hbm_channel_bw_gbs",
                       "hbm_slices_per_cube", "hbm_total_gb_per_cube", "burst_bytes"},
                      [&](Cursor& m) {
                        m.text("hbm_mapping_mode", s.hbm_mapping_mode, {"n_to_one", "one_to_one"});
                        if (s.hbm_mapping_mode != "n_to_one")
                          m.fail("hbm_mapping_mode", "only n_to_one is modeled (one_to_one is future work)");
                        m.whole("hbm_pseudo_channels", s.hbm_pseudo_channels, 1, 1024);
                        m.whole("hbm_channels_per_pe", s.hbm_channels_per_pe, 1, 64);
                        m.number("hbm_channel_bw_gbs", s.hbm_channel_bw_gbs, 0.001);
                        m.whole("hbm_slices_per_cube", s.hbm_slices_per_cube, 1, 16);
                        m.whole("hbm_total_gb_per_cube", s.hbm_total_gb_per_cube, 1, 128);
                        m.whole("burst_bytes", s.burst_bytes, 1, 1 << 16);
                        if (!power_of_two(s.burst_bytes)) m.fail("burst_bytes", "must be a power of two");
                        if (!power_of_two(s.hbm_channels_per_pe))
                          m.fail("hbm_channels_per_pe", "must be a power of two");
                        if (s.hbm_slices_per_cube != s.pes_per_cube())
                          m.fail("hbm_slices_per_cube", "must equal the PEs per cube (" +
                                                            std::to_string(s.pes_per_cube()) +
                                                            " = corners x pe_per_corner): each PE owns one slice");
                        if (s.hbm_pseudo_channels != s.hbm_channels_per_pe * s.hbm_slices_per_cube)
                          m.fail("hbm_pseudo_channels", "must equal hbm_channels_per_pe x hbm_slices_per_cube");
                      });
        cube.with_map("pe_template", {"components", "links"}, [&](Cursor& t) {
          if (t.has("components") || t.has("links")) s.pe_links.clear();
          if (t.has("components")) {
            s.pe_components.clear();
            Cursor m = t.child("components");
            if (!m.node().IsMap()) throw ConfigError(m.where() + ": " + m.path() + " must be a map");
            for (const auto& kv : m.node()) {
              BlockSpec b;
              b.impl = "builtin." + kv.first.Scalar();
              read_block(m, kv.first.Scalar(), b, true);
              s.pe_components.emplace_back(kv.first.Scalar(), std::move(b));
            }
          }
          if (t.has("links")) {
            Cursor list = t.child("links");
            if (!list.node().IsSequence()) throw ConfigError(list.where() + ": " + list.path() + " must be a list");
            for (std::size_t i = 0; i < list.node().size(); ++i) {
              Cursor l(origins, list.node()[i], list.path() + "." + std::to_string(i), list.scope());
              l.expect({"src", "dst", "bw_gbs", "bidir"});
              PeLinkSpec pl;
              pl.origin = l.where();
              l.text("src", pl.src);
              l.text("dst", pl.dst);
              l.number("bw_gbs", pl.bw_gbs);
              if (l.has("bidir")) {
                ParamValue v = scalar_value(l.node()["bidir"]);
                if (!std::holds_alternative<bool>(v)) l.fail("bidir", "must be true or false");
                pl.bidir = std::get<bool>(v);
              }
              s.pe_links.push_back(pl);
            }
          }
        });
      });

  // Cross-field checks.
  if (s.hbm_slices_per_cube != s.pes_per_cube())
    throw ConfigError(s.source + ": cube.memory_map.hbm_slices_per_cube (" + std::to_string(s.hbm_slices_per_cube) +
                      ") must equal the PEs per cube (" + std::to_string(s.pes_per_cube()) +
                      " = corners x pe_per_corner): each PE owns one slice");
  if (s.hbm_pseudo_channels != s.hbm_channels_per_pe * s.hbm_slices_per_cube)
    throw ConfigError(s.source + ": cube.memory_map.hbm_pseudo_channels (" + std::to_string(s.hbm_pseudo_channels) +
                      ") must equal hbm_channels_per_pe x hbm_slices_per_cube");
  for (const PeLinkSpec& l : s.pe_links)
    for (const std::string* end : {&l.src, &l.dst}) {
      bool found = false;
      std::vector<std::string> names;
      for (const auto& [name, block] : s.pe_components) {
        found = found || name == *end;
        names.push_back(name);
      }
      if (!found)
        throw ConfigError(l.origin + ": cube.pe_template.links: '" + *end + "' is not a PE template component" +
                          suggest(*end, names));
    }
  return s;
}

}  // namespace kbsim::ahbm_topology
