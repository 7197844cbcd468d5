// Topology front-ends: a plugin that compiles its own YAML dialect into the
// plain graph (kbsim/graph.hpp). The core reads the topology file, applies
// the --set overrides to the YAML tree, then offers the document to every
// loaded front-end in name order; the first that claims it compiles it.
// A document no front-end claims must be the explicit nodes+edges form,
// which the core reads itself.
//
//   class MyFrontEnd : public kbsim::config::FrontEnd {
//    public:
//     static kbsim::config::FrontEndInfo info() { return {"my_dialect", "..."}; }
//     bool claims(const YAML::Node& root) const override { return root["my_system"].IsDefined(); }
//     kbsim::Graph compile(const kbsim::config::Origins& doc, const kbsim::config::Components& c) const override;
//   };
//   KBSIM_PLUGIN("my_frontend") { kbsim::config::add_frontend<MyFrontEnd>(plugin); }
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/config/yaml.hpp"
#include "kbsim/graph.hpp"
#include "kbsim/plugin.hpp"

namespace kbsim::config {

/// What a front-end may ask of the loaded component plugins while compiling,
/// so that a parameter's default lives only in its component's declaration.
class Components {
 public:
  virtual ~Components() = default;
  /// The parameters implementation `impl` would get from `attrs`: every
  /// declared parameter, defaults filled in, types checked (ConfigError naming
  /// `origin` or the attribute's own origin). Checks beyond types are the
  /// component's own, when the system is built.
  virtual Params resolve(const std::string& impl, const std::vector<RawParam>& attrs,
                         const std::string& origin) const = 0;
};

struct FrontEndInfo {
  std::string name;  ///< e.g. "ahbm"
  std::string summary;
};

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  /// Whether this document is written in this front-end's dialect.
  virtual bool claims(const YAML::Node& root) const = 0;
  /// Compile it; errors are ConfigError naming `doc.where(node)` of the offending node.
  virtual Graph compile(const Origins& doc, const Components& components) const = 0;
  /// Draw pictures of the configured system into `dir` (`kbsim topology --svg`);
  /// returns the files written. The default draws none.
  virtual std::vector<std::filesystem::path> draw(const Origins& doc, const Components& components,
                                                  const std::filesystem::path& dir) const {
    (void)doc;
    (void)components;
    (void)dir;
    return {};
  }
  /// One interactive picture by name (`kbsim web`): an SVG whose shapes carry
  /// data-node (a node id), data-edge ("src>dst") and data-view (the name of
  /// the picture to open on a click). "system" is the first; empty: no such
  /// picture (the default: none).
  virtual std::string view(const Origins& doc, const Components& components, std::string_view name) const {
    (void)doc;
    (void)components;
    (void)name;
    return {};
  }
};

/// Register front-end T (with `static FrontEndInfo info()`).
template <class T>
void add_frontend(PluginDescriptor& plugin) {
  FrontEndInfo i = T::info();
  plugin.frontends.push_back({std::move(i.name), std::move(i.summary), []() -> FrontEnd* { return new T(); }});
}

}  // namespace kbsim::config
