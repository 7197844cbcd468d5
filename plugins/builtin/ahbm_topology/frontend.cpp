// The AHBM topology front-end: compiles the system / sip / cube form of
// topology.yaml (the reference's vocabulary) into the plain graph, and draws
// the system, SIP, cube and PE pictures for `kbsim topology --svg`.
#include "kbsim/config/frontend.hpp"

#include "build.hpp"
#include "kbsim/plugin.hpp"
#include "svg.hpp"

namespace kbsim::ahbm_topology {

class AhbmFrontEnd final : public config::FrontEnd {
 public:
  static config::FrontEndInfo info() {
    return {"ahbm",
            "the AHBM system form of topology.yaml (system / sip / cube): mesh generator, routing views, "
            "memory map, SVG pictures"};
  }
  bool claims(const YAML::Node& root) const override { return is_ahbm(root); }
  Graph compile(const config::Origins& doc, const config::Components& components) const override {
    return ahbm_topology::compile(doc.source(), doc, components).graph;
  }
  std::vector<std::filesystem::path> draw(const config::Origins& doc, const config::Components& components,
                                          const std::filesystem::path& dir) const override {
    return write_svgs(ahbm_topology::compile(doc.source(), doc, components), dir);
  }
  std::string view(const config::Origins& doc, const config::Components& components,
                   std::string_view name) const override {
    return view_svg(ahbm_topology::compile(doc.source(), doc, components), name);
  }
};

}  // namespace kbsim::ahbm_topology

KBSIM_PLUGIN("ahbm_topology") { kbsim::config::add_frontend<kbsim::ahbm_topology::AhbmFrontEnd>(plugin); }
