// PE_MMU (docs/model.md, "The MMU") on the default system: mappings installed
// by host commands through IO_CPU and the cube's M_CPU, and the translation
// rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/testing.hpp"

namespace kbsim {
namespace {

/// kbsim's own plugins, loaded once for the file.
const testkit::Plugins& plugins() {
  static const testkit::Plugins p;
  return p;
}

using ahbm::HostCommand;
using ahbm::MmuEntry;
using ahbm::PeRef;

struct Client final : HostCommand::Client {
  std::vector<Ref<HostCommand>> done;
  void on_complete(HostCommand& c) override { done.emplace_back(&c); }
};

class PeMmu : public ::testing::Test {
 protected:
  void SetUp() override { build({}); }
  void build(const std::vector<std::string>& overrides) {
    sim_ = plugins().build(plugins().load_topology(KBSIM_SOURCE_DIR "/topology.yaml", overrides));
  }
  /// Submit a map or unmap of `entries` to IO_CPU, targeting the PEs they name.
  Ref<HostCommand> submit(HostCommand::Kind kind, std::vector<MmuEntry> entries) {
    auto cmd = make_message<HostCommand>();
    cmd->kind = kind;
    for (const MmuEntry& e : entries)
      if (std::find(cmd->targets.begin(), cmd->targets.end(), e.pe) == cmd->targets.end()) cmd->targets.push_back(e.pe);
    cmd->entries = std::make_shared<const std::vector<MmuEntry>>(std::move(entries));
    ahbm::as_command_target(sim_->component("sip0.io0.io_cpu"))->submit(cmd, &client_);
    return cmd;
  }
  void run(HostCommand::Kind kind, std::vector<MmuEntry> entries) {
    auto cmd = submit(kind, std::move(entries));
    sim_->run();
    ASSERT_TRUE(cmd->completion.ok) << cmd->completion.error_message;
  }
  const ahbm::Translator& mmu(const std::string& pe) {
    return *ahbm::as_translator(sim_->component("sip0." + pe + ".pe_mmu"));
  }
  /// A 0-byte message's time along a route: link latencies and the transit costs in between.
  double latency(const std::string& from, const std::string& to) {
    return sim_->route_info(from, to, "memory").latency_ns();
  }

  std::unique_ptr<System> sim_;
  Client client_;
};

constexpr PeRef kPe0{0, 0, 0}, kPe1{0, 0, 1};

TEST_F(PeMmu, AMapThroughIoCpuIsInstalledAfterTheExactFabricLatency) {
  const PeRef far{0, 15, 5};
  auto cmd = submit(HostCommand::Kind::kMmuMap, {{far, 0x40000, 0x9000000, 0x2000}});
  // io_cpu overhead 10, its leg to the M_CPU of cube 15, the M_CPU's 5, then the command edge to the PE_MMU.
  const double arrive =
      10 + latency("sip0.io0.io_cpu", "sip0.cube15.m_cpu") + 5 + latency("sip0.cube15.m_cpu", "sip0.cube15.pe5.pe_mmu");
  // The legs take the shortest wire (distance routing, docs/model.md "Routing views"): 131 ns from io_cpu to the
  // M_CPU: 14 UCIe endpoints (8 ns; some ports used as zero-length buses between their connections), 9 routers
  // (2 ns) and 1 ns of wire; then 16.45 ns to the PE_MMU.
  EXPECT_DOUBLE_EQ(arrive, 162.45);
  const Tick at = ns_to_ticks(arrive);
  sim_->run_until(at - 1);
  const ahbm::Translator& m = mmu("cube15.pe5");
  EXPECT_FALSE(m.translate(0x40000).mapped);
  sim_->run_until(at);
  auto t = m.translate(0x40010);
  EXPECT_TRUE(t.mapped);
  EXPECT_EQ(t.pa, 0x9000010u);
  EXPECT_EQ(t.contiguous, 0x2000u - 0x10);
  sim_->run();
  ASSERT_EQ(client_.done.size(), 1u);
  EXPECT_TRUE(cmd->completion.ok);
  // The answer goes back the same way and pays both overheads again.
  EXPECT_DOUBLE_EQ(ticks_to_ns(cmd->t_done), arrive + latency("sip0.cube15.pe5.pe_mmu", "sip0.cube15.m_cpu") + 5 +
                                                 latency("sip0.cube15.m_cpu", "sip0.io0.io_cpu") + 10);
  EXPECT_EQ(sim_->stat("sip0.cube15.m_cpu", "commands").count, 1u);
  EXPECT_EQ(sim_->stat("sip0.io0.io_cpu", "responses").count, 1u);
}

TEST_F(PeMmu, TheLastMappingWinsAndUnmappingUncoversTheEarlierOne) {
  run(HostCommand::Kind::kMmuMap, {{kPe0, 0x10000, 0x500000, 0x3000}});
  run(HostCommand::Kind::kMmuMap, {{kPe0, 0x11000, 0x900000, 0x1000}});
  const ahbm::Translator& m = mmu("cube0.pe0");
  auto a = m.translate(0x10800);
  EXPECT_EQ(a.pa, 0x500800u);
  EXPECT_EQ(a.contiguous, 0x800u);  // up to where the later mapping covers it
  auto b = m.translate(0x11800);
  EXPECT_EQ(b.pa, 0x900800u);
  EXPECT_EQ(b.contiguous, 0x800u);
  EXPECT_EQ(m.translate(0x12000).pa, 0x502000u);  // the earlier mapping's tail is still its own

  // Unmap removes only mappings fully inside the range: [0x10000, 0x12000) holds the second one only.
  run(HostCommand::Kind::kMmuUnmap, {{kPe0, 0x10000, 0, 0x2000}});
  auto again = m.translate(0x11800);
  EXPECT_TRUE(again.mapped);
  EXPECT_EQ(again.pa, 0x501800u);
  EXPECT_EQ(again.contiguous, 0x1800u);
  run(HostCommand::Kind::kMmuUnmap, {{kPe0, 0x10000, 0, 0x3000}});
  EXPECT_FALSE(m.translate(0x11800).mapped);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "maps").count, 2u);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "unmaps").count, 2u);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "pages").count, 4u);
}

TEST_F(PeMmu, SubPageRegionsAndFaults) {
  // Two 128 B regions inside one 4 KiB page, for two PEs in one command.
  run(HostCommand::Kind::kMmuMap, {{kPe0, 0x20040, 0x7000, 128}, {kPe1, 0x200c0, 0x8000, 128}});
  const ahbm::Translator& m0 = mmu("cube0.pe0");
  const ahbm::Translator& m1 = mmu("cube0.pe1");
  EXPECT_EQ(m0.translate(0x20040 + 127).pa, 0x7000u + 127);
  EXPECT_EQ(m0.translate(0x20040 + 127).contiguous, 1u);
  // pe0 has nothing at 0x200c0: a fault; the address is used as a PA, up to the next mapping.
  auto fault = m0.translate(0x2003f);
  EXPECT_FALSE(fault.mapped);
  EXPECT_EQ(fault.pa, 0x2003fu);
  EXPECT_EQ(fault.contiguous, 1u);
  EXPECT_FALSE(m0.translate(0x200c0).mapped);
  EXPECT_EQ(m1.translate(0x200c0).pa, 0x8000u);
  EXPECT_FALSE(m1.translate(0x20040).mapped);
  // Unmapping a range that only partly covers a region leaves it.
  run(HostCommand::Kind::kMmuUnmap, {{kPe0, 0x20000, 0, 0x80}});
  EXPECT_TRUE(m0.translate(0x20040).mapped);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "translations").count, 5u);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "faults").count, 2u);
  EXPECT_EQ(sim_->stat("sip0.cube0.pe0.pe_mmu", "unmaps").count, 0u);
}

TEST_F(PeMmu, OverheadIsTheTlbParameterAndBadCommandsAreRefused) {
  build({"cube.pe_template.components.pe_mmu.attrs.tlb_overhead_ns=1.5"});
  EXPECT_EQ(mmu("cube0.pe0").overhead(), ns_to_ticks(1.5));
  auto none = submit(HostCommand::Kind::kMmuMap, {});
  auto bad = submit(HostCommand::Kind::kMmuMap, {{{0, 16, 0}, 0, 0, 64}});  // a SIP has cubes 0..15
  sim_->run();
  EXPECT_EQ(none->completion.error_code, "NO_TARGET");
  EXPECT_EQ(bad->completion.error_code, "NO_TARGET");
  EXPECT_THAT(bad->completion.error_message, ::testing::HasSubstr("sip0.cube16"));
  EXPECT_THROW(
      {
        try {
          plugins().build(plugins().load_topology(KBSIM_SOURCE_DIR "/topology.yaml",
                                                  {"cube.pe_template.components.pe_mmu.attrs.page_size=1000"}));
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr("power of two"));
          throw;
        }
      },
      ConfigError);
}

}  // namespace
}  // namespace kbsim
