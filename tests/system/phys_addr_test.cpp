// AHBM physical addresses (docs/model.md, "Physical addresses"), the configured
// memory map's access checks, and node naming: bit-exact encodings, every
// decode error, and the node that serves each kind of address.
#include "kbsim/ahbm/phys_addr.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kbsim/ahbm/host_command.hpp"
#include "kbsim/ahbm/memory_map.hpp"
#include "kbsim/ahbm/names.hpp"
#include "kbsim/errors.hpp"
#include "kbsim/graph.hpp"

namespace kbsim::ahbm {
namespace {

using u64 = std::uint64_t;
constexpr u64 GiB = u64{1} << 30;

/// Decode `raw`, expecting failure; returns the error code.
std::string decode_error(u64 raw) {
  DecodeResult r = decode(raw);
  EXPECT_FALSE(r.ok) << hex(raw);
  return r.error_code;
}

// ---------------------------------------------------------------- PhysAddr

TEST(PhysAddr, WorkedExamplesAreBitExact) {
  // A.1: HBM, sip 2, die 5, offset 0x1000.
  EXPECT_EQ(hbm_addr(2, 5, 0x1000), (u64{2} << 47) | (u64{5} << 42) | (u64{1} << 37) | 0x1000);
  // A.2: PE3 PE_TCM offset 0x400 on sip 0 die 0.
  EXPECT_EQ(pe_tcm_addr(0, 0, 3, 0x400), (u64{0} << 34) | (u64{3} << 29) | (u64{6} << 25) | 0x400);
  // A.3: sip 1 die 3 MCPU SRAM offset 0.
  EXPECT_EQ(mcpu_resource_addr(1, 3, 5, 0), (u64{1} << 47) | (u64{3} << 42) | (u64{1} << 34) | (u64{5} << 25));
  // A.4: sip 1 die 17 (IO chiplet 1) IOCPU IPCQ offset 0x20000.
  EXPECT_EQ(iocpu_resource_addr(1, 1, 2, 0x20000), (u64{1} << 47) | (u64{17} << 42) | (u64{2} << 27) | 0x20000);
  // A.5: die 16 UAL at 4 GiB.
  EXPECT_EQ(ual_addr(0, 0, 4 * GiB), (u64{16} << 42) | u64{0x100000000});
  EXPECT_EQ(cube_sram_addr(0, 1, 0x40), (u64{1} << 42) | (u64{2} << 34) | 0x40);

  DecodeResult a2 = decode(pe_tcm_addr(0, 0, 3, 0x400));
  ASSERT_TRUE(a2.ok) << a2.error;
  EXPECT_EQ(a2.addr.kind, AddrKind::kPeLocal);
  EXPECT_EQ(a2.addr.pe, 3u);
  EXPECT_EQ(a2.addr.sub, 6u);
  EXPECT_EQ(a2.addr.offset, 0x400u);
  EXPECT_EQ(a2.addr.budget, 2 * MiB);
}

TEST(PhysAddr, RoundTripEveryKind) {
  struct Case {
    u64 raw;
    AddrKind kind;
    unsigned sip, die, pe, sub;
    u64 offset, budget;
  };
  const Case cases[] = {
      {hbm_addr(15, 15, kHbmWindow - 1), AddrKind::kHbm, 15, 15, 0, 0, kHbmWindow - 1, kHbmWindow},
      {pe_hbm_addr(2, 5, 5, 0x1234, 6 * GiB), AddrKind::kHbm, 2, 5, 0, 0, 30 * GiB + 0x1234, kHbmWindow},
      {pe_resource_addr(3, 7, 15, 5, 0x1ffffff), AddrKind::kPeLocal, 3, 7, 15, 5, 0x1ffffff, 192 * KiB},
      {mcpu_resource_addr(9, 12, 4, 0x123), AddrKind::kMcpuLocal, 9, 12, 0, 4, 0x123, 16 * KiB},
      {cube_sram_addr(1, 2, kSramWindow - 1), AddrKind::kCubeSram, 1, 2, 0, 0, kSramWindow - 1, kSramWindow},
      {iocpu_resource_addr(4, 4, 5, (u64{1} << 27) - 1), AddrKind::kIocpu, 4, 20, 0, 5, (u64{1} << 27) - 1, 64 * MiB},
      {ual_addr(6, 3, kIocpuRegion), AddrKind::kUal, 6, 19, 0, 0, kIocpuRegion, kChipletWindow},
      {ual_addr(0, 0, kChipletWindow - 1), AddrKind::kUal, 0, 16, 0, 0, kChipletWindow - 1, kChipletWindow},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(hex(c.raw));
    DecodeResult r = decode(c.raw);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.addr.kind, c.kind);
    EXPECT_EQ(r.addr.sip, c.sip);
    EXPECT_EQ(r.addr.die, c.die);
    EXPECT_EQ(r.addr.pe, c.pe);
    EXPECT_EQ(r.addr.sub, c.sub);
    EXPECT_EQ(r.addr.offset, c.offset);
    EXPECT_EQ(r.addr.budget, c.budget);
  }
}

TEST(PhysAddr, EveryMustBeZeroBitIsEnforced) {
  for (unsigned b = 38; b <= 41; ++b) {  // cube die [41:38], in both address spaces
    EXPECT_EQ(decode_error(hbm_addr(0, 3, 0) | (u64{1} << b)), "MBZ_SET") << b;
    EXPECT_EQ(decode_error(cube_sram_addr(0, 3, 0) | (u64{1} << b)), "MBZ_SET") << b;
  }
  EXPECT_EQ(decode_error(pe_tcm_addr(0, 0, 3, 0) | (u64{1} << 33)), "MBZ_SET");
  for (unsigned b = 30; b <= 33; ++b)
    EXPECT_EQ(decode_error(mcpu_resource_addr(0, 0, 0, 0) | (u64{1} << b)), "MBZ_SET");
  for (unsigned b = 25; b <= 33; ++b) EXPECT_EQ(decode_error(cube_sram_addr(0, 0, 0) | (u64{1} << b)), "MBZ_SET");
  for (unsigned b = 40; b <= 41; ++b) {
    EXPECT_EQ(decode_error(iocpu_resource_addr(0, 0, 0, 0) | (u64{1} << b)), "MBZ_SET") << b;
    EXPECT_EQ(decode_error(ual_addr(0, 0, 4 * GiB) | (u64{1} << b)), "MBZ_SET") << b;
  }
  EXPECT_EQ(decode(u64{1} << 33).error, "address 0x200000000: PE_LOCAL must-be-zero bit 33 is set");
}

TEST(PhysAddr, ReservedCodesAreRejected) {
  for (u64 die = 21; die <= 31; ++die) EXPECT_EQ(decode_error(die << 42), "RESERVED_DIE") << die;
  for (u64 kind = 3; kind <= 7; ++kind) EXPECT_EQ(decode_error(kind << 34), "RESERVED_KIND") << kind;
  for (unsigned s = 7; s <= 15; ++s) EXPECT_EQ(decode_error(pe_resource_addr(0, 0, 0, s, 0)), "RESERVED_SUB_UNIT");
  for (unsigned s = 6; s <= 31; ++s) EXPECT_EQ(decode_error(mcpu_resource_addr(0, 0, s, 0)), "RESERVED_SUB_UNIT");
  for (unsigned s = 6; s <= 15; ++s) EXPECT_EQ(decode_error(iocpu_resource_addr(0, 0, s, 0)), "RESERVED_SUB_UNIT");
  EXPECT_EQ(decode(u64{21} << 42).error, "address 0x540000000000: die id 21 is reserved");
  EXPECT_EQ(decode(pe_resource_addr(0, 0, 0, 7, 0)).error, "address 0xe000000: sub-unit 7 is reserved");
  // die 20 is the last IO chiplet; the IOCPU region ends just below 2 GiB.
  EXPECT_EQ(decode(u64{20} << 42).addr.kind, AddrKind::kIocpu);
  EXPECT_EQ(decode_error((u64{16} << 42) | (kIocpuRegion - 1)), "RESERVED_SUB_UNIT");  // sub 15
  EXPECT_EQ(decode((u64{16} << 42) | kIocpuRegion).addr.kind, AddrKind::kUal);
}

TEST(PhysAddr, AddressesWiderThan51BitsAreRejected) {
  EXPECT_TRUE(decode((u64{1} << 51) - 1 - (u64{0x1f} << 42) - (u64{0xf} << 38)).ok);  // all-ones except die/MBZ
  for (unsigned b = 51; b <= 63; ++b) EXPECT_EQ(decode_error(hbm_addr(0, 0, 0) | (u64{1} << b)), "ADDR_WIDTH") << b;
  EXPECT_EQ(decode(u64{1} << 51).error, "address 0x8000000000000: wider than 51 bits");
}

TEST(PhysAddr, SubUnitBudgets) {
  const u64 pe[] = {8 * KiB, 8 * KiB, 256 * KiB, 16 * KiB, 16 * KiB, 192 * KiB, 2 * MiB};
  const u64 mcpu[] = {512 * KiB, 512 * KiB, 256 * KiB, 8 * KiB, 16 * KiB, 10 * MiB};
  const u64 iocpu[] = {512 * KiB, 512 * KiB, 2 * MiB, 8 * KiB, 16 * KiB, 64 * MiB};
  for (unsigned s = 0; s < 7; ++s) EXPECT_EQ(decode(pe_resource_addr(0, 0, 0, s, 0)).addr.budget, pe[s]) << s;
  for (unsigned s = 0; s < 6; ++s) EXPECT_EQ(decode(mcpu_resource_addr(0, 0, s, 0)).addr.budget, mcpu[s]) << s;
  for (unsigned s = 0; s < 6; ++s) EXPECT_EQ(decode(iocpu_resource_addr(0, 0, s, 0)).addr.budget, iocpu[s]) << s;
  EXPECT_EQ(pe_sub_budget(7), 0u);
  EXPECT_EQ(mcpu_sub_budget(6), 0u);
  EXPECT_EQ(iocpu_sub_budget(6), 0u);
}

TEST(PhysAddr, FactoriesRejectOutOfRangeFields) {
  EXPECT_THROW(hbm_addr(16, 0, 0), Error);          // sip is 4 bits
  EXPECT_THROW(hbm_addr(0, 16, 0), Error);          // not a cube die
  EXPECT_THROW(hbm_addr(0, 0, kHbmWindow), Error);  // hbm_offset is 37 bits
  EXPECT_THROW(pe_hbm_addr(0, 0, 1, 6 * GiB, 6 * GiB), Error);
  EXPECT_THROW(pe_hbm_addr(0, 0, 31, 0, 6 * GiB), Error);  // 186 GiB > 128 GiB window
  EXPECT_THROW(pe_resource_addr(0, 0, 16, 0, 0), Error);
  EXPECT_THROW(pe_resource_addr(0, 0, 0, 16, 0), Error);
  EXPECT_THROW(pe_resource_addr(0, 0, 0, 0, kSramWindow), Error);
  EXPECT_THROW(pe_tcm_addr(0, 21, 0, 0), Error);
  EXPECT_THROW(mcpu_resource_addr(0, 0, 32, 0), Error);
  EXPECT_THROW(mcpu_resource_addr(0, 0, 0, kSramWindow), Error);
  EXPECT_THROW(cube_sram_addr(0, 0, kSramWindow), Error);
  EXPECT_THROW(iocpu_resource_addr(0, 5, 0, 0), Error);
  EXPECT_THROW(iocpu_resource_addr(0, 0, 16, 0), Error);
  EXPECT_THROW(iocpu_resource_addr(0, 0, 0, u64{1} << 27), Error);
  EXPECT_THROW(ual_addr(0, 5, 4 * GiB), Error);
  EXPECT_THROW(ual_addr(0, 0, kIocpuRegion - 1), Error);
  EXPECT_THROW(ual_addr(0, 0, kChipletWindow), Error);
  EXPECT_NO_THROW(hbm_addr(15, 15, kHbmWindow - 1));
}

// --------------------------------------------------------------- MemoryMap

std::vector<RawParam> attrs(std::int64_t cubes_per_sip = 16) {
  return {{"ahbm.sips", ParamValue{std::int64_t{2}}, "test"},
          {"ahbm.cubes_per_sip", ParamValue{cubes_per_sip}, "test"},
          {"ahbm.pes_per_cube", ParamValue{std::int64_t{8}}, "test"},
          {"ahbm.io_chiplets", ParamValue{std::int64_t{1}}, "test"},
          {"ahbm.hbm_bytes_per_cube", ParamValue{std::int64_t{48} << 30}, "test"},
          {"ahbm.hbm_slice_bytes", ParamValue{std::int64_t{6} << 30}, "test"}};
}

AccessCheck check(u64 pa, u64 nbytes) { return check_access(MemoryMap::from(attrs()), pa, nbytes); }

TEST(MemoryMap, FromReadsEveryAttribute) {
  MemoryMap m = MemoryMap::from(attrs(4));
  EXPECT_EQ(m.sips, 2u);
  EXPECT_EQ(m.cubes_per_sip, 4u);
  EXPECT_EQ(m.pes_per_cube, 8u);
  EXPECT_EQ(m.io_chiplets, 1u);
  EXPECT_EQ(m.hbm_bytes_per_cube, 48 * GiB);
  EXPECT_EQ(m.slice_bytes, 6 * GiB);
}

TEST(MemoryMap, FromThrowsConfigErrorWhenAnAttributeIsMissing) {
  for (std::size_t i = 0; i < attrs().size(); ++i) {
    std::vector<RawParam> a = attrs();
    std::string name = a[i].name;
    a.erase(a.begin() + static_cast<std::ptrdiff_t>(i));
    try {
      MemoryMap::from(a);
      ADD_FAILURE() << "no ConfigError without " << name;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + name + "'"), std::string::npos) << e.what();
    }
  }
  std::vector<RawParam> wrong_type = attrs();
  wrong_type[0].value = ParamValue{2.0};
  EXPECT_THROW(MemoryMap::from(wrong_type), ConfigError);
}

TEST(MemoryMap, NamesTheServingNode) {
  AccessCheck hbm = check(pe_hbm_addr(0, 3, 5, 0x100, 6 * GiB), 64);
  ASSERT_TRUE(hbm.ok) << hbm.error;
  EXPECT_EQ(hbm.target.node, "sip0.cube3.hbm_ctrl.pe5");
  EXPECT_EQ(hbm.target.node, names::hbm_ctrl(0, 3, 5));
  EXPECT_EQ(hbm.target.cube, 3u);
  EXPECT_EQ(hbm.target.pe, 5u);
  EXPECT_EQ(hbm.target.addr.offset, 30 * GiB + 0x100);
  EXPECT_EQ(check(hbm_addr(1, 15, 48 * GiB - 1), 1).target.node, "sip1.cube15.hbm_ctrl.pe7");

  AccessCheck tcm = check(pe_tcm_addr(0, 0, 3, 0x400), 256);
  ASSERT_TRUE(tcm.ok) << tcm.error;
  EXPECT_EQ(tcm.target.node, "sip0.cube0.pe3.pe_tcm");
  EXPECT_EQ(tcm.target.pe, 3u);
  EXPECT_EQ(check(cube_sram_addr(1, 2, 0), 4).target.node, "sip1.cube2.sram");
  EXPECT_EQ(check(mcpu_resource_addr(1, 3, 5, 0), 4).target.node, "sip1.cube3.m_cpu");
  AccessCheck io = check(iocpu_resource_addr(1, 0, 2, 0x20000), 4);
  ASSERT_TRUE(io.ok) << io.error;
  EXPECT_EQ(io.target.node, "sip1.io0.io_cpu");
}

TEST(MemoryMap, RejectsZeroLengthAndOversize) {
  EXPECT_EQ(check(hbm_addr(0, 0, 0), 0).error_code, "ZERO_LENGTH");
  EXPECT_EQ(check(hbm_addr(0, 3, 48 * GiB), 1).error_code, "OVERSIZE");  // beyond the 48 GiB cube
  EXPECT_EQ(check(hbm_addr(0, 3, kHbmWindow - 1), 1).error_code, "OVERSIZE");
  EXPECT_TRUE(check(hbm_addr(0, 3, 48 * GiB - 4096), 4096).ok);  // last byte is the cube's last
  EXPECT_EQ(check(hbm_addr(0, 3, 48 * GiB - 4096), 4097).error_code, "OVERSIZE");
  EXPECT_TRUE(check(pe_tcm_addr(0, 0, 3, 0), 2 * MiB).ok);
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 3, 0), 2 * MiB + 1).error_code, "OVERSIZE");
  EXPECT_TRUE(check(pe_tcm_addr(0, 0, 3, 2 * MiB - 64), 64).ok);
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 3, 2 * MiB - 64), 65).error_code, "OVERSIZE");
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 3, 2 * MiB), 1).error_code, "OVERSIZE");
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 3, 0), ~u64{0}).error_code, "OVERSIZE");
  // Every sub-unit: its last byte is valid, the byte after it is not.
  for (unsigned s = 0; s < 7; ++s) {
    EXPECT_TRUE(check(pe_resource_addr(0, 1, 2, s, pe_sub_budget(s) - 1), 1).ok) << s;
    EXPECT_EQ(check(pe_resource_addr(0, 1, 2, s, pe_sub_budget(s)), 1).error_code, "OVERSIZE") << s;
  }
  for (unsigned s = 0; s < 6; ++s) {
    EXPECT_TRUE(check(mcpu_resource_addr(0, 1, s, mcpu_sub_budget(s) - 1), 1).ok) << s;
    EXPECT_EQ(check(mcpu_resource_addr(0, 1, s, mcpu_sub_budget(s) - 1), 2).error_code, "OVERSIZE") << s;
    EXPECT_TRUE(check(iocpu_resource_addr(1, 0, s, iocpu_sub_budget(s) - 1), 1).ok) << s;
    EXPECT_EQ(check(iocpu_resource_addr(1, 0, s, iocpu_sub_budget(s)), 1).error_code, "OVERSIZE") << s;
  }
  EXPECT_TRUE(check(cube_sram_addr(0, 0, kSramWindow - 1), 1).ok);
  EXPECT_EQ(check(cube_sram_addr(0, 0, kSramWindow - 1), 2).error_code, "OVERSIZE");
}

TEST(MemoryMap, RejectsAnAccessCrossingAnHbmSlice) {
  AccessCheck up_to = check(pe_hbm_addr(0, 0, 2, 6 * GiB - 8, 6 * GiB), 8);
  ASSERT_TRUE(up_to.ok) << up_to.error;
  EXPECT_EQ(up_to.target.pe, 2u);
  EXPECT_EQ(check(pe_hbm_addr(0, 0, 2, 6 * GiB - 8, 6 * GiB), 9).error_code, "CROSSES_SLICE");
  EXPECT_EQ(check(hbm_addr(0, 0, 0), 6 * GiB + 1).error_code, "CROSSES_SLICE");
  EXPECT_TRUE(check(hbm_addr(0, 0, 6 * GiB), 6 * GiB).ok);
}

TEST(MemoryMap, RejectsWhatTheSystemDoesNotHave) {
  EXPECT_EQ(check(hbm_addr(2, 0, 0), 8).error_code, "NO_SUCH_SIP");
  EXPECT_EQ(check(iocpu_resource_addr(15, 0, 0, 0), 8).error_code, "NO_SUCH_SIP");
  const MemoryMap four = MemoryMap::from(attrs(4));
  EXPECT_TRUE(check_access(four, hbm_addr(1, 3, 0), 8).ok);
  EXPECT_EQ(check_access(four, hbm_addr(1, 4, 0), 8).error_code, "NO_SUCH_CUBE");
  EXPECT_EQ(check_access(four, pe_tcm_addr(0, 15, 0, 0), 8).error_code, "NO_SUCH_CUBE");
  EXPECT_EQ(check_access(four, mcpu_resource_addr(0, 4, 0, 0), 8).error_code, "NO_SUCH_CUBE");
  EXPECT_EQ(check_access(four, cube_sram_addr(0, 4, 0), 8).error_code, "NO_SUCH_CUBE");
  EXPECT_TRUE(check(pe_tcm_addr(0, 0, 7, 0), 8).ok);
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 8, 0), 8).error_code, "NO_SUCH_PE");
  EXPECT_EQ(check(pe_tcm_addr(0, 0, 15, 0), 8).error_code, "NO_SUCH_PE");
  EXPECT_EQ(check(iocpu_resource_addr(0, 1, 0, 0), 8).error_code, "NO_SUCH_CHIPLET");
  EXPECT_EQ(check(iocpu_resource_addr(0, 4, 0, 0), 8).error_code, "NO_SUCH_CHIPLET");
  AccessCheck ual = check(ual_addr(0, 0, 4 * GiB), 8);
  EXPECT_FALSE(ual.ok);
  EXPECT_EQ(ual.error_code, "UNSUPPORTED");
  EXPECT_EQ(ual.error, "address 0x400100000000: UAL addresses are not modeled");
  // decode errors pass through with decode's code and sentence
  AccessCheck wide = check(u64{1} << 51, 8);
  EXPECT_FALSE(wide.ok);
  EXPECT_EQ(wide.error_code, "ADDR_WIDTH");
  EXPECT_EQ(wide.error, decode(u64{1} << 51).error);
  EXPECT_EQ(check(u64{3} << 34, 8).error_code, "RESERVED_KIND");
}

// ------------------------------------------------------------------- Names

TEST(Names, BuildersFollowTheNamingRule) {
  EXPECT_EQ(names::sip(1), "sip1");
  EXPECT_EQ(names::cube(1, 2), "sip1.cube2");
  EXPECT_EQ(names::router(1, 2, 0, 5), "sip1.cube2.r0c5");
  EXPECT_EQ(names::hbm_ctrl(0, 3, 5), "sip0.cube3.hbm_ctrl.pe5");
  EXPECT_EQ(names::m_cpu(0, 3), "sip0.cube3.m_cpu");
  EXPECT_EQ(names::sram(1, 15), "sip1.cube15.sram");
  EXPECT_EQ(names::pe(1, 2, 3), "sip1.cube2.pe3");
  EXPECT_EQ(names::pe_part(1, 2, 3, "pe_dma"), "sip1.cube2.pe3.pe_dma");
  EXPECT_EQ(names::io(0, 0, "pcie_ep"), "sip0.io0.pcie_ep");
  EXPECT_EQ(names::switch0(), "fabric.switch0");
}

void expect_location(std::string_view id, int sip, int cube, int pe, int io) {
  SCOPED_TRACE(std::string(id));
  names::Location loc = names::locate(id);
  EXPECT_EQ(loc.sip, sip);
  EXPECT_EQ(loc.cube, cube);
  EXPECT_EQ(loc.pe, pe);
  EXPECT_EQ(loc.io, io);
}

TEST(Names, LocateParsesThePosition) {
  expect_location("sip1.cube2.pe3.pe_dma", 1, 2, 3, -1);
  expect_location("sip0.cube3.hbm_ctrl.pe5", 0, 3, 5, -1);
  expect_location("sip0.io0.io_cpu", 0, -1, -1, 0);
  expect_location("fabric.switch0", -1, -1, -1, -1);
  expect_location("sip0.cube1.r2c0", 0, 1, -1, -1);
  expect_location("sip1.cube12.m_cpu", 1, 12, -1, -1);
  expect_location("sip1", 1, -1, -1, -1);
  expect_location(names::io(1, 3, "io_ucie-P0.conn1"), 1, -1, -1, 3);
  expect_location(names::pe_part(15, 15, 7, "pe_tcm"), 15, 15, 7, -1);
}

// A PE sub-component learns its PE from its id in one place; a controller's slice owner or a router is no PE's part.
TEST(Names, PeOfNamesThePeOfAPePartOnly) {
  EXPECT_EQ(pe_of("sip1.cube2.pe3.pe_dma"), (PeRef{1, 2, 3}));
  EXPECT_EQ(pe_of(names::pe_part(15, 15, 7, "pe_tcm")), (PeRef{15, 15, 7}));
  EXPECT_FALSE(pe_of("sip0.cube3.hbm_ctrl.pe5"));
  EXPECT_FALSE(pe_of("sip0.cube1.r2c0"));
  EXPECT_FALSE(pe_of("sip0.io0.io_cpu"));
  EXPECT_FALSE(pe_of("fabric.switch0"));
}

}  // namespace
}  // namespace kbsim::ahbm
