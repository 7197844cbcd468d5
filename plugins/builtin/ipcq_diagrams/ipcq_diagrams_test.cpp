// ipcq-diagrams as a user runs it: both diagrams are written, well-formed and
// rendered; they show the components of one send and its credit as lifelines,
// and the messages in the order the simulation had them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kbsim/testing_cli.hpp"
#include "kbsim/testing_figure.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

namespace fs = std::filesystem;

/// "" if every tag of `doc` is closed in order under one <svg> root, else what is wrong.
std::string tag_problem(const std::string& doc) {
  std::vector<std::string> open;
  for (std::size_t i = doc.find('<'); i != std::string::npos; i = doc.find('<', i + 1)) {
    const std::size_t end = doc.find('>', i);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = doc.substr(i + 1, end - i - 1);
    if (tag.starts_with("?") || tag.starts_with("!")) continue;
    if (std::count(tag.begin(), tag.end(), '"') % 2) return "unbalanced quotes in <" + tag + ">";
    const std::string name = tag.substr(tag.starts_with("/"), tag.find_first_of(" /", 1) - tag.starts_with("/"));
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
      if (open.empty() && doc.find('<', end) != std::string::npos) return "content after the root";
    } else if (!tag.ends_with("/")) {
      if (open.empty() && name != "svg") return "the root is <" + name + ">";
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

/// The texts of the elements with class `cls`, in document order.
std::vector<std::string> texts(const std::string& doc, const std::string& cls) {
  std::vector<std::string> out;
  const std::string key = "class=\"" + cls + "\"";
  for (std::size_t at = doc.find(key); at != std::string::npos; at = doc.find(key, at + 1)) {
    const std::size_t b = doc.find('>', at) + 1;
    out.push_back(doc.substr(b, doc.find('<', b) - b));
  }
  return out;
}

/// The position of the first label starting with `what`, from `from` on.
std::size_t first(const std::vector<std::string>& labels, const std::string& what, std::size_t from = 0) {
  for (std::size_t i = from; i < labels.size(); ++i)
    if (labels[i].starts_with(what)) return i;
  ADD_FAILURE() << "no label " << what;
  return labels.size();
}

/// A message's times from its tooltip ("A -&gt; B: LABEL, T0 -&gt; T1 ns").
std::pair<double, double> times_of(const std::string& doc, const std::string& label) {
  const std::size_t at = doc.find(": " + label + ", ");
  if (at == std::string::npos) return {-1, -1};
  const std::size_t t0 = at + label.size() + 4;
  return {std::stod(doc.substr(t0)), std::stod(doc.substr(doc.find("-&gt; ", t0) + 6))};
}

struct Run {
  fs::path dir;
  std::string send_recv, dma;
};
const Run& run() {
  static const Run r = [] {
    Run out{testkit::temp_dir() / "out", {}, {}};
    auto cli = testkit::run_kbsim("run --bench ipcq-diagrams --param bytes=256 --out " + out.dir.string());
    EXPECT_EQ(cli.code, 0) << cli.err;
    out.send_recv = testkit::read_file(out.dir / "ipcq_send_recv.svg");
    out.dma = testkit::read_file(out.dir / "ipcq_two_pe_dma.svg");
    return out;
  }();
  return r;
}

TEST(IpcqDiagrams, WellFormedWithTheirLifelines) {
  for (const std::string* doc : {&run().send_recv, &run().dma}) {
    EXPECT_EQ(tag_problem(*doc), "");
    EXPECT_THAT(*doc, HasSubstr("xmlns=\"http://www.w3.org/2000/svg\""));
  }
  EXPECT_EQ(texts(run().send_recv, "lifeline"),
            (std::vector<std::string>{"pe_cpu", "pe_ipcq", "pe_dma", "fabric", "pe_dma", "pe_ipcq", "pe_cpu"}));
  EXPECT_THAT(run().send_recv, HasSubstr(">sip0.cube0.pe0<"));
  EXPECT_THAT(run().send_recv, HasSubstr(">sip0.cube1.pe0<"));
  const std::vector<std::string> lines = texts(run().dma, "lifeline");
  ASSERT_GE(lines.size(), 5u);  // the two PE_IPCQs, the two PE_DMAs and at least one router between them
  EXPECT_EQ(lines.front(), "pe_ipcq");
  EXPECT_EQ(lines[1], "pe_dma");
  EXPECT_EQ(lines.back(), "pe_ipcq");
}

TEST(IpcqDiagrams, MessagesInTheModeledOrder) {
  const std::vector<std::string> labels = texts(run().send_recv, "label");
  ASSERT_EQ(labels.size(), 12u);
  const std::size_t call = first(labels, "IpcqCall send"), packet = first(labels, "IpcqPacket 256 B", call),
                    slot = first(labels, "slot written", packet), credit = first(labels, "IpcqCredit 16 B", slot),
                    back = first(labels, "recv returns", credit);
  EXPECT_LT(packet, slot);
  EXPECT_LT(slot, credit);
  EXPECT_LT(credit, back);
  for (const std::string* doc : {&run().send_recv, &run().dma}) {  // rows go down in time
    double last = 0;
    for (const std::string& t : texts(*doc, "t")) {
      EXPECT_GE(std::stod(t), last) << t;
      last = std::stod(t);
    }
  }
  // The two-PE path: the descriptor, the packet hop by hop, the slot write, then the credit hop by hop.
  const std::vector<std::string> hops = texts(run().dma, "label");
  ASSERT_GE(hops.size(), 7u);
  EXPECT_TRUE(hops.front().starts_with("IpcqPacket 256 B (descriptor)")) << hops.front();
  const std::size_t written = first(hops, "rx slot written");
  for (std::size_t i = 1; i < written; ++i) EXPECT_TRUE(hops[i].starts_with("IpcqPacket 256 B")) << hops[i];
  for (std::size_t i = written + 1; i < hops.size(); ++i)
    EXPECT_TRUE(hops[i].starts_with("IpcqCredit 16 B")) << hops[i];
}

TEST(IpcqDiagrams, TimesAreTheSimulatedOnes) {
  // The receiver's kernel, from its recv to its return, is pe2pe-latency's h3 (east neighbour, 256 B) IPCQ case.
  const auto [recv, unused] = times_of(run().send_recv, "IpcqCall recv (waits)");
  const auto [from, done] = times_of(run().send_recv, "recv returns");
  EXPECT_NEAR(done - recv, 79.70, 0.001);
  // The slot write is the receiver's ipcq_copy record: it starts when the packet reached the receiving DMA.
  const auto [w0, w1] = times_of(run().send_recv, "slot written, arrival");
  const auto [p0, p1] = times_of(run().dma, "rx slot written (ipcq_copy)");
  EXPECT_EQ(w0, p0);
  EXPECT_EQ(w1, p1);
  EXPECT_GT(w1, w0);
  EXPECT_LE(w1, from);  // the credit leaves once the recv read the slot
  (void)unused;
}

TEST(IpcqDiagrams, Render) {
  if (!testkit::can_render_svg()) GTEST_SKIP() << "rsvg-convert is missing: the diagrams were not rendered";
  for (const char* f : {"ipcq_send_recv.svg", "ipcq_two_pe_dma.svg"}) {
    const testkit::Ink ink = testkit::render_svg(run().dir / f);
    EXPECT_TRUE(ink.error.empty()) << ink.error;
    EXPECT_GT(ink.drawn, ink.pixels / 50) << f;
  }
}

}  // namespace
}  // namespace kbsim
