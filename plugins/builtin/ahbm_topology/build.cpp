#include "build.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "kbsim/ahbm/names.hpp"
#include "kbsim/ahbm/system_attrs.hpp"
#include "kbsim/text.hpp"

namespace kbsim::ahbm_topology {

namespace names = kbsim::ahbm::names;

namespace {

class Builder {
 public:
  explicit Builder(const AhbmSpec& s, Graph& g) : s_(s), g_(g) {}

  void node(std::string id, const BlockSpec& b) {
    g_.nodes.push_back({std::move(id), b.impl, b.attrs, b.origin.empty() ? s_.source : b.origin, group_});
  }
  /// The group of the nodes made from now on ("sip0/cube3": a cube's; empty: the switch and IO chiplets, which
  /// links without latency join to each other).
  void set_group(std::string g) { group_ = std::move(g); }
  /// A link of `mm` of wire; distance routing counts `routed_mm` for it (none given: `mm`).
  void edge(const std::string& a, const std::string& b, double bw, double mm, const char* kind, double extra_ns = 0,
            std::optional<double> routed_mm = {}) {
    g_.edges.push_back({a, b, bw, mm * s_.ns_per_mm + extra_ns, s_.flit_bytes, kind, s_.source, routed_mm.value_or(mm),
                        /*generated=*/true});
  }
  void pair(const std::string& a, const std::string& b, double bw, double mm, const char* ab, const char* ba,
            double extra_ns = 0, std::optional<double> routed_mm = {}) {
    edge(a, b, bw, mm, ab, extra_ns, routed_mm);
    edge(b, a, bw, mm, ba, extra_ns, routed_mm);
  }
  void pair(const std::string& a, const std::string& b, const LinkSpec& l, const char* ab, const char* ba) {
    pair(a, b, l.bw_gbs, l.distance_mm, ab, ba, l.latency_ns, l.route_mm());
  }

 private:
  const AhbmSpec& s_;
  Graph& g_;
  std::string group_;
};

/// The sustained fraction of peak the HBM controller declares (its
/// `efficiency` parameter, default included): the compiler applies it to the
/// router -> hbm_ctrl link. A controller without one, or with a value its own
/// check will reject when the system is built, leaves the link at peak.
double hbm_efficiency(const AhbmSpec& s, const config::Components& components) {
  const std::string where = s.hbm_ctrl.origin.empty() ? s.source + ": cube.components.hbm_ctrl" : s.hbm_ctrl.origin;
  const Params p = components.resolve(s.hbm_ctrl.impl, s.hbm_ctrl.attrs, where);
  constexpr std::string_view kEfficiency = "efficiency";  // (hbm_ctrl's parameter: declared there)
  for (const ParamEntry& e : p.entries())
    if (e.name == kEfficiency) {
      const double v = p.get_float(kEfficiency);
      return v > 0.0 && v <= 1.0 ? v : 1.0;
    }
  return 1.0;
}

/// The node references (kNode parameters) of each PE template component, as
/// its declaration resolves them: a reference given as the name of another
/// template component ("pe_mmu") means that sibling in the same PE; one to a
/// component the template lacks means none ("").
using SiblingRefs = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

SiblingRefs sibling_refs(const AhbmSpec& s, const config::Components& components) {
  SiblingRefs out;
  std::vector<std::string> parts;
  for (const auto& [part, block] : s.pe_components) parts.push_back(part);
  auto in_template = [&](const std::string& name) {
    return std::find(parts.begin(), parts.end(), name) != parts.end();
  };
  for (const auto& [part, block] : s.pe_components) {
    const std::string where = block.origin.empty() ? s.source + ": cube.pe_template.components." + part : block.origin;
    const Params params = components.resolve(block.impl, block.attrs, where);
    for (const ParamEntry& e : params.entries()) {
      if (!e.node_ref) continue;
      const std::string& v = std::get<std::string>(e.value);
      if (v.find('.') != std::string::npos) continue;              // an absolute node id: left as given
      if (!v.empty() && !in_template(v) && e.origin != "default")  // a default may name a block the template lacks
        throw ConfigError(e.origin + ": parameter '" + e.name + "' of cube.pe_template.components." + part +
                          " names '" + v + "', which is not a PE template component" + suggest(v, parts));
      out[part].emplace_back(e.name, in_template(v) ? v : std::string());
    }
  }
  return out;
}

/// `block` for the PE at (sip, cube, pe), its sibling references made node ids.
BlockSpec in_pe(const BlockSpec& block, const std::vector<std::pair<std::string, std::string>>& refs, unsigned sip,
                unsigned cube, unsigned pe) {
  BlockSpec out = block;
  for (const auto& [name, sibling] : refs) {
    const std::string& key = name;  // a lambda may not capture a structured binding before clang 16
    std::erase_if(out.attrs, [&](const RawParam& a) { return a.name == key; });
    out.attrs.push_back({name, sibling.empty() ? std::string() : names::pe_part(sip, cube, pe, sibling),
                         block.origin.empty() ? "the PE template" : block.origin});
  }
  return out;
}

void build_cube(const AhbmSpec& s, const MeshLayout& m, Builder& b, unsigned sip, unsigned cube,
                const std::array<bool, 4>& side_used, double hbm_efficiency, const SiblingRefs& refs) {
  auto router = [&](Cell c) { return names::router(sip, cube, c.row, c.col); };
  for (unsigned r = 0; r < m.rows(); ++r)
    for (unsigned c = 0; c < m.cols(); ++c)
      if (m.has(r, c)) b.node(router({r, c}), s.router);
  for (unsigned r = 0; r < m.rows(); ++r)
    for (unsigned c = 0; c < m.cols(); ++c) {
      if (!m.has(r, c)) continue;
      if (m.has(r, c + 1))
        b.pair(router({r, c}), router({r, c + 1}), s.router_link_bw_gbs, m.col_x[c + 1] - m.col_x[c], "router_mesh",
               "router_mesh");
      if (m.has(r + 1, c))
        b.pair(router({r, c}), router({r + 1, c}), s.router_link_bw_gbs, m.row_y[r + 1] - m.row_y[r], "router_mesh",
               "router_mesh");
    }
  b.node(names::m_cpu(sip, cube), s.m_cpu);
  b.pair(router(m.m_cpu), names::m_cpu(sip, cube), s.mcpu_to_router_bw_gbs, 0, "router_to_mcpu", "mcpu_to_router");
  b.node(names::sram(sip, cube), s.sram);
  b.pair(router(m.sram), names::sram(sip, cube), s.sram_to_router_bw_gbs, 0, "router_to_sram", "sram_to_router");
  for (unsigned side = 0; side < 4; ++side) {
    if (!side_used[side]) continue;
    std::string port = names::cube(sip, cube) + ".ucie-" + side_name(static_cast<Side>(side));
    b.node(port, s.ucie);
    for (std::size_t i = 0; i < m.ucie[side].size(); ++i) {
      std::string conn = port + ".conn" + std::to_string(i);
      b.node(conn, s.ucie_conn);
      b.pair(router(m.ucie[side][i]), conn, s.ucie_conn_bw_gbs, 0, "router_to_ucie_conn", "ucie_conn_to_router");
      b.pair(conn, port, s.ucie_conn_bw_gbs, 0, "ucie_internal", "ucie_internal");
    }
  }
  const double hbm_bw = s.hbm_to_router_bw_gbs() * hbm_efficiency;
  for (unsigned pe = 0; pe < s.pes_per_cube(); ++pe) {
    b.node(names::hbm_ctrl(sip, cube, pe), s.hbm_ctrl);
    b.pair(router(m.pe[pe]), names::hbm_ctrl(sip, cube, pe), hbm_bw, 0, "router_to_hbm", "hbm_to_router");
    for (const auto& [part, block] : s.pe_components) {
      std::string id = names::pe_part(sip, cube, pe, part);
      if (auto r = refs.find(part); r != refs.end())
        b.node(id, in_pe(block, r->second, sip, cube, pe));
      else
        b.node(id, block);
      if (block.attach == "dma")
        b.pair(id, router(m.pe[pe]), s.pe_to_router_bw_gbs, 0, "pe_to_router", "router_to_pe");
      else if (block.attach == "cpu")
        b.pair(id, router(m.pe[pe]), 0, 0, "command", "command");
    }
    for (const PeLinkSpec& l : s.pe_links) {
      std::string a = names::pe_part(sip, cube, pe, l.src), z = names::pe_part(sip, cube, pe, l.dst);
      // Only links with a bandwidth carry routed data; control-only ones (bw 0:
      // commands, tile tokens) stay out of the data views.
      const char* kind = l.bw_gbs > 0 ? "pe_data" : "pe_internal";
      if (l.bidir)
        b.pair(a, z, l.bw_gbs, 0, kind, kind);
      else
        b.edge(a, z, l.bw_gbs, 0, kind);
    }
  }
}

void publish(const AhbmSpec& s, Graph& g) {
  using namespace ahbm::attrs;
  auto put = [&](const auto& a, auto v) { put_attr(g.attrs, a, v, s.source); };
  auto i = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  put(kSips, i(s.sips));
  put(kSipW, i(s.sip_w));
  put(kSipH, i(s.sip_h));
  put(kSipTopology, s.sip_topology);
  put(kCubeW, i(s.cube_w));
  put(kCubeH, i(s.cube_h));
  put(kCubesPerSip, i(s.cubes_per_sip()));
  put(kPesPerCube, i(s.pes_per_cube()));
  put(kIoChiplets, i(s.io_chiplets.size()));
  put(kHbmBytesPerCube, i(s.hbm_bytes_per_cube()));
  put(kHbmSliceBytes, i(s.slice_bytes()));
  put(kHbmChannelsPerPe, i(s.hbm_channels_per_pe));
  put(kHbmChannelBwGbs, s.hbm_channel_bw_gbs);
  put(kBurstBytes, i(s.burst_bytes));
  put(kNsPerMm, s.ns_per_mm);
}

}  // namespace

bool is_ahbm(const YAML::Node& root) { return root.IsMap() && (root["system"] || root["sip"] || root["cube"]); }

Compiled compile(const YamlSource& src, const Origins& origins, const config::Components& components) {
  Compiled out;
  out.spec = parse_spec(src, origins);
  const AhbmSpec& s = out.spec;
  const double efficiency = hbm_efficiency(s, components);
  const SiblingRefs refs = sibling_refs(s, components);
  out.mesh = generate_mesh(s);
  Graph& g = out.graph;
  g.source = s.source;
  parse_route_metric(s.routing, g.route_metric);  // the spec checked the name
  Builder b(s, g);

  b.node(names::switch0(), s.switch0);
  for (unsigned sip = 0; sip < s.sips; ++sip) {
    // Which cube sides carry UCIe: towards a neighbour cube or an IO chiplet.
    std::vector<std::array<bool, 4>> used(s.cubes_per_sip(), {false, false, false, false});
    for (unsigned y = 0; y < s.cube_h; ++y)
      for (unsigned x = 0; x < s.cube_w; ++x) {
        auto& u = used[y * s.cube_w + x];
        u[0] = y > 0;
        u[1] = x + 1 < s.cube_w;
        u[2] = y + 1 < s.cube_h;
        u[3] = x > 0;
      }
    for (const auto& io : s.io_chiplets)
      for (const auto& p : io.cube_ports) used[p.y * s.cube_w + p.x][static_cast<int>(p.side)] = true;

    for (unsigned c = 0; c < s.cubes_per_sip(); ++c) {
      b.set_group("sip" + std::to_string(sip) + "/cube" + std::to_string(c));
      build_cube(s, out.mesh, b, sip, c, used[c], efficiency, refs);
    }
    b.set_group({});
    auto port = [&](unsigned x, unsigned y, Side side) {
      return names::cube(sip, y * s.cube_w + x) + ".ucie-" + side_name(side);
    };
    for (unsigned y = 0; y < s.cube_h; ++y)
      for (unsigned x = 0; x < s.cube_w; ++x) {
        if (x + 1 < s.cube_w)
          b.pair(port(x, y, Side::kE), port(x + 1, y, Side::kW), s.ucie_link, "ucie_mesh", "ucie_mesh");
        if (y + 1 < s.cube_h)
          b.pair(port(x, y, Side::kS), port(x, y + 1, Side::kN), s.ucie_link, "ucie_mesh", "ucie_mesh");
      }

    for (unsigned k = 0; k < s.io_chiplets.size(); ++k) {
      const IoChipletSpec& io = s.io_chiplets[k];
      std::string ep = names::io(sip, k, "pcie_ep"), cpu = names::io(sip, k, "io_cpu"),
                  noc = names::io(sip, k, "io_noc");
      b.node(ep, io.pcie_ep);
      b.node(cpu, io.io_cpu);
      b.node(noc, io.io_noc);
      b.pair(names::switch0(), ep, s.pcie, "pcie", "pcie");
      b.pair(ep, noc, io.pcie_ep_to_noc_bw_gbs, 0, "io_internal", "io_internal");
      b.pair(cpu, noc, io.io_cpu_to_noc_bw_gbs, 0, "io_internal", "io_internal");
      for (const CubePort& p : io.cube_ports) {
        std::string phy = names::io(sip, k, "io_ucie-" + p.phy);
        b.node(phy, io.io_ucie);
        for (unsigned i = 0; i < io.n_connections; ++i) {
          std::string conn = phy + ".conn" + std::to_string(i);
          b.node(conn, io.conn);
          b.pair(noc, conn, io.per_connection_bw_gbs, 0, "io_internal", "io_internal");
          b.pair(conn, phy, io.per_connection_bw_gbs, 0, "io_internal", "io_internal");
        }
        // At one connection's bandwidth, as the reference's IO-to-cube port map builds it: its connections meet
        // the cube port over one link of per_connection_bw_gbs (docs/model.md, "The IO chiplet's port links").
        b.pair(phy, port(p.x, p.y, p.side), io.per_connection_bw_gbs, p.distance_mm, "io_to_cube", "cube_to_io", 0,
               p.route_mm());
      }
    }
  }

  g.views = {{ViewNames::kData, {"command", "pe_internal"}},
             {ViewNames::kMemory, {"pe_internal"}},
             {ViewNames::kLocal,
              {"command", "pe_internal", "ucie_internal", "ucie_conn_to_router", "router_to_ucie_conn", "ucie_mesh",
               "io_to_cube", "cube_to_io"}}};
  publish(s, g);
  return out;
}

}  // namespace kbsim::ahbm_topology
