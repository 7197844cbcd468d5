// Node ids of the AHBM system. The topology compiler builds them with these
// functions and components parse their own position back from their id, so
// the naming rule lives in one place.
//
//   fabric.switch0
//   sip{S}.io{K}.{pcie_ep|io_cpu|io_noc|io_ucie-P{n}|io_ucie-P{n}.conn{i}}
//   sip{S}.cube{C}.{r{row}c{col}|m_cpu|sram|hbm_ctrl.pe{X}|ucie-{N|E|S|W}|ucie-{side}.conn{i}}
//   sip{S}.cube{C}.pe{P}.{pe_dma|pe_tcm|...}
#pragma once

#include <charconv>
#include <string>
#include <string_view>

namespace kbsim::ahbm::names {

inline std::string sip(unsigned s) { return "sip" + std::to_string(s); }
inline std::string cube(unsigned s, unsigned c) { return sip(s) + ".cube" + std::to_string(c); }
inline std::string router(unsigned s, unsigned c, unsigned row, unsigned col) {
  return cube(s, c) + ".r" + std::to_string(row) + "c" + std::to_string(col);
}
inline std::string hbm_ctrl(unsigned s, unsigned c, unsigned pe) {
  return cube(s, c) + ".hbm_ctrl.pe" + std::to_string(pe);
}
inline std::string m_cpu(unsigned s, unsigned c) { return cube(s, c) + ".m_cpu"; }
inline std::string sram(unsigned s, unsigned c) { return cube(s, c) + ".sram"; }
inline std::string pe(unsigned s, unsigned c, unsigned p) { return cube(s, c) + ".pe" + std::to_string(p); }
inline std::string pe_part(unsigned s, unsigned c, unsigned p, std::string_view part) {
  return pe(s, c, p) + "." + std::string(part);
}
inline std::string io(unsigned s, unsigned k, std::string_view part) {
  return sip(s) + ".io" + std::to_string(k) + "." + std::string(part);
}
inline std::string switch0() { return "fabric.switch0"; }

/// Where a node sits; -1 = not applicable.
struct Location {
  int sip = -1;
  int cube = -1;
  int pe = -1;  ///< a PE sub-component's PE, or an hbm_ctrl's slice owner
  int io = -1;
};

/// Parse the leading sip/cube/pe/io parts of a node id (stops at the first part that is none of them).
inline Location locate(std::string_view id) {
  Location loc;
  auto number_after = [](std::string_view part, std::string_view prefix, int& out) {
    if (part.substr(0, prefix.size()) != prefix || part.size() == prefix.size()) return false;
    if (part[prefix.size()] < '0' || part[prefix.size()] > '9') return false;
    int v = 0;
    auto [p, ec] = std::from_chars(part.data() + prefix.size(), part.data() + part.size(), v);
    if (ec != std::errc() || p != part.data() + part.size()) return false;
    out = v;
    return true;
  };
  std::size_t start = 0;
  bool after_hbm = false;  // "hbm_ctrl" may appear once, right before pe{X}
  while (start <= id.size()) {
    std::size_t dot = id.find('.', start);
    std::string_view part = id.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    bool ok = (loc.sip < 0 && number_after(part, "sip", loc.sip)) ||
              (loc.sip >= 0 && loc.cube < 0 && loc.io < 0 && number_after(part, "cube", loc.cube)) ||
              (loc.sip >= 0 && loc.cube < 0 && loc.io < 0 && number_after(part, "io", loc.io)) ||
              (loc.cube >= 0 && loc.pe < 0 && number_after(part, "pe", loc.pe));
    if (!ok && part == "hbm_ctrl" && loc.cube >= 0 && loc.pe < 0 && !after_hbm) {
      after_hbm = true;
      ok = true;
    }
    if (!ok || dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return loc;
}

}  // namespace kbsim::ahbm::names
