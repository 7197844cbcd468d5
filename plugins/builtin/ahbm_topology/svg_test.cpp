// `kbsim topology --svg DIR`: the four pictures of the default AHBM system are
// written, well-formed, deterministic, and show what they should.
#include "svg.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "build.hpp"
#include "kbsim/testing_cli.hpp"
#include "test_load.hpp"

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// A small XML well-formedness check: balanced tags, quoted attributes, known
/// entities, one root element named `svg`. Returns "" or what is wrong.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> open;
  std::string root;
  bool root_closed = false;
  auto skip_to = [&](std::size_t& i, const char* end) {
    std::size_t e = doc.find(end, i);
    if (e == std::string::npos) return false;
    i = e + std::string(end).size();
    return true;
  };
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':'; };
  for (std::size_t i = 0; i < doc.size();) {
    if (doc[i] == '&') {
      std::size_t semi = doc.find(';', i);
      std::string ent = semi == std::string::npos ? "" : doc.substr(i + 1, semi - i - 1);
      if (ent != "amp" && ent != "lt" && ent != "gt" && ent != "quot" && ent != "apos" && !ent.starts_with("#"))
        return "bad entity at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (doc[i] == '>') return "stray '>' at " + std::to_string(i);
    if (doc[i] != '<') {
      if (!std::isspace(static_cast<unsigned char>(doc[i])) && open.empty())
        return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    if (doc.compare(i, 5, "<?xml") == 0) {
      if (i != 0) return "<?xml not at the start";
      if (!skip_to(i, "?>")) return "unterminated <?xml";
    } else if (doc.compare(i, 4, "<!--") == 0) {
      if (!skip_to(i, "-->")) return "unterminated comment";
    } else if (doc.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2;
      while (j < doc.size() && is_name(doc[j])) ++j;
      std::string name = doc.substr(i + 2, j - i - 2);
      if (j >= doc.size() || doc[j] != '>') return "bad end tag </" + name;
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
      root_closed = open.empty();
      i = j + 1;
    } else {
      std::size_t j = i + 1;
      while (j < doc.size() && is_name(doc[j])) ++j;
      std::string name = doc.substr(i + 1, j - i - 1);
      if (name.empty()) return "empty tag name at " + std::to_string(i);
      if (open.empty() && (root_closed || !root.empty())) return "second root <" + name + ">";
      if (open.empty()) root = name;
      bool self_closing = false;
      while (true) {  // attributes: name="value" or name='value'
        while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
        if (j >= doc.size()) return "unterminated <" + name;
        if (doc.compare(j, 2, "/>") == 0) {
          self_closing = true;
          j += 2;
          break;
        }
        if (doc[j] == '>') {
          ++j;
          break;
        }
        std::size_t k = j;
        while (k < doc.size() && is_name(doc[k])) ++k;
        if (k == j || k + 1 >= doc.size() || doc[k] != '=' || (doc[k + 1] != '"' && doc[k + 1] != '\''))
          return "bad attribute in <" + name + "> at " + std::to_string(j);
        std::size_t close = doc.find(doc[k + 1], k + 2);
        if (close == std::string::npos) return "unterminated attribute in <" + name + ">";
        if (doc.substr(k + 2, close - k - 2).find('<') != std::string::npos) return "'<' in an attribute";
        j = close + 1;
      }
      if (!self_closing) open.push_back(name);
      i = j;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (root != "svg") return "the root is <" + root + ">, not <svg>";
  return "";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

ahbm_topology::Compiled default_system(const std::vector<std::string>& overrides = {}) {
  return ahbm_topology::load_ahbm(KBSIM_SOURCE_DIR "/topology.yaml", overrides);
}

TEST(Svg, XmlCheckerCatchesMistakes) {
  EXPECT_EQ(xml_problem("<?xml version=\"1.0\"?>\n<svg a=\"1\"><!-- x --><g><rect/></g></svg>\n"), "");
  EXPECT_NE(xml_problem("<svg><g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><g/></svg><svg/>"), "");
  EXPECT_NE(xml_problem("<svg a=1/>"), "");
  EXPECT_NE(xml_problem("<svg>a & b</svg>"), "");
  EXPECT_NE(xml_problem("<html/>"), "");
}

TEST(Svg, WritesFourWellFormedPictures) {
  const fs::path dir = testkit::temp_dir() / "new" / "pictures";  // created if missing
  auto files = ahbm_topology::write_svgs(default_system(), dir);
  ASSERT_EQ(files.size(), 4u);
  for (const char* name : {"system.svg", "sip.svg", "cube.svg", "pe.svg"}) {
    ASSERT_TRUE(fs::is_regular_file(dir / name)) << name;
    EXPECT_FALSE(fs::exists(dir / (std::string(name) + ".tmp"))) << name;
    const std::string text = testkit::read_file(dir / name);
    EXPECT_EQ(xml_problem(text), "") << name;
    EXPECT_NE(text.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos) << name;
    EXPECT_NE(text.find("viewBox=\""), std::string::npos) << name;
    EXPECT_NE(text.find("sans-serif"), std::string::npos) << name;
  }
  EXPECT_EQ(files[0], dir / "system.svg");
  EXPECT_EQ(files[3], dir / "pe.svg");
}

TEST(Svg, PeShowsPe000) {
  auto sys = default_system();
  const fs::path dir = testkit::temp_dir();
  ahbm_topology::write_svgs(sys, dir);
  const std::string pe = testkit::read_file(dir / "pe.svg");
  EXPECT_EQ(pe, ahbm_topology::view_svg(sys, "pe/0/0/0"));  // the web viewer's PE view, verbatim
  EXPECT_EQ(count(pe, "class=\"part\""), 9u);               // topology.yaml's cube.pe_template.components
  for (const char* label : {">pe_cpu<", ">pe_scheduler<", ">pe_dma<", ">pe_tcm<", ">pe_ipcq<", ">builtin.pe_gemm<",
                            "PE sip0.cube0.pe0", ">Legend<"})
    EXPECT_NE(pe.find(label), std::string::npos) << label;
  EXPECT_EQ(count(pe, "class=\"attach\""), 3u);  // pe_cpu, pe_dma, pe_mmu to the router
  EXPECT_EQ(count(pe, "class=\"router\""), 1u);
}

TEST(Svg, CubeShowsTheRouterMesh) {
  auto sys = default_system();
  const fs::path dir = testkit::temp_dir();
  ahbm_topology::write_svgs(sys, dir);
  const std::string cube = testkit::read_file(dir / "cube.svg");
  std::size_t present = 0;
  for (bool p : sys.mesh.present) present += p;
  EXPECT_EQ(present, 32u);
  EXPECT_EQ(count(cube, "class=\"router\""), present);
  for (const char* label : {">r0c0<", ">r5c5<", ">pe0<", ">pe7<", ">HBM<", ">hbm.pe3<", ">M_CPU<", ">SRAM<", ">UCIe-N<",
                            ">UCIe-E<", ">UCIe-S<", ">UCIe-W<", ">Legend<"})
    EXPECT_NE(cube.find(label), std::string::npos) << label;
  EXPECT_EQ(cube.find(">r2c2<"), std::string::npos) << "r2c2 is inside the HBM zone";
  EXPECT_EQ(count(cube, "class=\"pe\""), 8u);
}

TEST(Svg, SipAndSystem) {
  const fs::path dir = testkit::temp_dir();
  ahbm_topology::write_svgs(default_system(), dir);
  const std::string sip = testkit::read_file(dir / "sip.svg"), system = testkit::read_file(dir / "system.svg");
  EXPECT_EQ(count(sip, "class=\"cube\""), 16u);
  for (const char* label :
       {">cube0<", ">cube15<", ">(3,3)<", ">io0<", ">pcie_ep<", ">io_cpu<", ">io_noc<", ">io_ucie-P0<", ">io_ucie-P1<"})
    EXPECT_NE(sip.find(label), std::string::npos) << label;
  EXPECT_EQ(count(sip, "class=\"iolink\""), 2u);  // one line per PHY
  EXPECT_EQ(count(system, "class=\"sip\""), 2u);
  for (const char* label : {">sip0<", ">sip1<", ">fabric.switch0<", "ring_1d"})
    EXPECT_NE(system.find(label), std::string::npos) << label;
  EXPECT_EQ(count(system, "class=\"pcie\""), 2u);
}

TEST(Svg, SameInputSameBytes) {
  auto sys = default_system();
  const fs::path a = testkit::temp_dir() / "a", b = testkit::temp_dir() / "b";
  ahbm_topology::write_svgs(sys, a);
  ahbm_topology::write_svgs(default_system(), b);
  ahbm_topology::write_svgs(sys, a);  // overwrites in place
  for (const char* name : {"system.svg", "sip.svg", "cube.svg", "pe.svg"})
    EXPECT_EQ(testkit::read_file(a / name), testkit::read_file(b / name)) << name;
}

TEST(Svg, SixSipTorus) {
  auto sys =
      default_system({"system.sips.count=6", "system.sips.topology=torus_2d", "system.sips.w=3", "system.sips.h=2"});
  const fs::path dir = testkit::temp_dir();
  ahbm_topology::write_svgs(sys, dir);
  const std::string system = testkit::read_file(dir / "system.svg");
  EXPECT_EQ(xml_problem(system), "");
  EXPECT_EQ(count(system, "class=\"sip\""), 6u);
  EXPECT_NE(system.find(">sip5<"), std::string::npos);
  EXPECT_NE(system.find("torus_2d"), std::string::npos);
  // 3 x 2 torus: 3 row links per row (one wraps) x 2 rows + 3 column links (h = 2: no separate wrap).
  EXPECT_EQ(count(system, "class=\"logical\""), 9u);
}

TEST(Svg, LabelsAreEscaped) {
  auto sys = default_system({"system.switch.impl=a<b&c\"d"});
  const fs::path dir = testkit::temp_dir();
  ahbm_topology::write_svgs(sys, dir);
  const std::string system = testkit::read_file(dir / "system.svg");
  EXPECT_EQ(xml_problem(system), "");
  EXPECT_NE(system.find("a&lt;b&amp;c&quot;d"), std::string::npos);
}

TEST(Svg, UnwritableDirectoryIsAConfigError) {
  const fs::path file = testkit::temp_dir() / "plain-file";
  testkit::write_file(file, "not a directory\n");
  auto sys = default_system();
  EXPECT_THROW(ahbm_topology::write_svgs(sys, file / "sub"), ConfigError);
  EXPECT_THROW(ahbm_topology::write_svgs(sys, file), ConfigError);
  const fs::path taken = testkit::temp_dir() / "taken";  // a directory where sip.svg should go
  fs::create_directories(taken / "sip.svg" / "x");
  EXPECT_THROW(ahbm_topology::write_svgs(sys, taken), ConfigError);
  EXPECT_FALSE(fs::exists(taken / "sip.svg.tmp"));
  try {
    ahbm_topology::write_svgs(sys, file / "sub");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--svg"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot write"), std::string::npos) << e.what();
  }
}

TEST(Svg, CommandLine) {
  const fs::path dir = testkit::temp_dir() / "cli";
  auto r = testkit::run_kbsim("topology --topology " KBSIM_SOURCE_DIR "/topology.yaml --svg " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"system.svg", "sip.svg", "cube.svg", "pe.svg"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
    EXPECT_GT(fs::file_size(dir / name), 1000u) << name;
  }
}

}  // namespace
}  // namespace kbsim
