// The Chrome trace of the op log: valid JSON, exact times, lanes for overlapping
// records, tile flows, escaped args, all-or-nothing files, determinism.
#include "chrome_trace.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kbsim/errors.hpp"

namespace kbsim {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

OpRecord rec(std::uint64_t seq, std::string_view component, Tick t0, Tick t1, std::string name = "op") {
  OpRecord r;
  r.seq = seq;
  r.component_id = component;
  r.t_start = t0;
  r.t_end = t1;
  r.kind = "memory";
  r.name = std::move(name);
  return r;
}

// Writes `records` to a fresh file; returns its text.
std::string write(const fs::path& file, const std::vector<OpRecord>& records) {
  chrome_trace::ChromeTrace t(file.string());
  for (const OpRecord& r : records) t.add(r);
  t.close();
  return slurp(file);
}

struct Parsed {
  rapidjson::Document doc;
  explicit Parsed(const std::string& text) {
    doc.Parse(text.c_str());
    EXPECT_FALSE(doc.HasParseError()) << text;
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("traceEvents"))
      doc.Parse(R"({"displayTimeUnit":"","traceEvents":[]})");  // fail the checks, not the test binary
  }
  const rapidjson::Value& events() const { return doc["traceEvents"]; }
  std::vector<const rapidjson::Value*> with_ph(const char* ph) const {
    std::vector<const rapidjson::Value*> out;
    for (const auto& e : events().GetArray())
      if (std::string(e["ph"].GetString()) == ph) out.push_back(&e);
    return out;
  }
  // The args.name of the metadata event `what` for pid (and tid when given).
  std::string meta_name(const char* what, int pid, int tid = 0) const {
    for (const auto* e : with_ph("M"))
      if (std::string((*e)["name"].GetString()) == what && (*e)["pid"].GetInt() == pid &&
          (tid == 0 || (*e)["tid"].GetInt() == tid))
        return (*e)["args"]["name"].GetString();
    return "";
  }
  int sort_index(int pid, int tid) const {
    for (const auto* e : with_ph("M"))
      if (std::string((*e)["name"].GetString()) == "thread_sort_index" && (*e)["pid"].GetInt() == pid &&
          (*e)["tid"].GetInt() == tid)
        return (*e)["args"]["sort_index"].GetInt();
    return -1;
  }
};

// Each test writes into a fresh directory of its own, removed afterwards.
class ChromeTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("kbsim-ct-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ChromeTrace, SlicesMetadataAndExactTimes) {
  const fs::path file = dir_ / "t.json";
  const std::string text = write(file, {rec(0, "sip0.cube0.pe0.pe_gemm", 1547250, 2000000, "gemm_f16"),
                                        rec(1, "sip0.cube0.pe0.pe_dma", 3, 1000003), rec(2, "host", 0, 999999)});
  Parsed p(text);
  EXPECT_STREQ(p.doc["displayTimeUnit"].GetString(), "ns");
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("\"ts\":1.547250"), std::string::npos);
  EXPECT_NE(text.find("\"dur\":0.452750"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":0.000003,\"dur\":1.000000"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":0.000000,\"dur\":0.999999"), std::string::npos);

  const auto x = p.with_ph("X");
  ASSERT_EQ(x.size(), 3u);
  EXPECT_STREQ((*x[0])["name"].GetString(), "gemm_f16");
  EXPECT_STREQ((*x[0])["cat"].GetString(), "memory");
  EXPECT_DOUBLE_EQ((*x[0])["ts"].GetDouble(), 1.54725);
  EXPECT_DOUBLE_EQ((*x[0])["dur"].GetDouble(), 0.45275);
  // Two components of one PE share a process; each has its own thread; "host" is a process of its own.
  EXPECT_EQ((*x[0])["pid"].GetInt(), 1);
  EXPECT_EQ((*x[1])["pid"].GetInt(), 1);
  EXPECT_EQ((*x[2])["pid"].GetInt(), 2);
  EXPECT_NE((*x[0])["tid"].GetInt(), (*x[1])["tid"].GetInt());
  EXPECT_EQ(p.meta_name("process_name", 1), "sip0.cube0.pe0");
  EXPECT_EQ(p.meta_name("process_name", 2), "host");
  EXPECT_EQ(p.meta_name("thread_name", 1, (*x[0])["tid"].GetInt()), "pe_gemm");
  EXPECT_EQ(p.meta_name("thread_name", 1, (*x[1])["tid"].GetInt()), "pe_dma");
  EXPECT_EQ(p.meta_name("thread_name", 2, (*x[2])["tid"].GetInt()), "host");
  EXPECT_LT(p.sort_index(1, (*x[0])["tid"].GetInt()), p.sort_index(1, (*x[1])["tid"].GetInt()));
  EXPECT_EQ(p.with_ph("M").size(), 2u + 3u * 2u);
}

TEST_F(ChromeTrace, OverlappingRecordsGetLanes) {
  const fs::path file = dir_ / "t.json";
  // a [0,100) and c [100,200) fit one lane; b [50,150) overlaps a; then d starts a third component.
  Parsed p(write(file, {rec(0, "pe0.pe_dma", 0, 100, "a"), rec(1, "pe0.pe_dma", 50, 150, "b"),
                        rec(2, "pe0.pe_dma", 100, 200, "c"), rec(3, "pe0.pe_gemm", 0, 10, "d")}));
  const auto x = p.with_ph("X");
  ASSERT_EQ(x.size(), 4u);
  const int a = (*x[0])["tid"].GetInt(), b = (*x[1])["tid"].GetInt(), c = (*x[2])["tid"].GetInt();
  const int d = (*x[3])["tid"].GetInt();
  EXPECT_NE(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(p.meta_name("thread_name", 1, a), "pe_dma");
  EXPECT_EQ(p.meta_name("thread_name", 1, b), "pe_dma #2");
  EXPECT_EQ(p.meta_name("thread_name", 1, d), "pe_gemm");
  // The second lane sorts right after its component, before the next component.
  EXPECT_EQ(p.sort_index(1, b), p.sort_index(1, a) + 1);
  EXPECT_LT(p.sort_index(1, b), p.sort_index(1, d));
}

TEST_F(ChromeTrace, LanesNeverOverlapInAnyOrder) {
  const fs::path file = dir_ / "t.json";
  // Out of t_end order: the late [0,10) cannot go after [20,30) in its lane.
  Parsed p(write(file, {rec(0, "pe0.pe_dma", 20, 30), rec(1, "pe0.pe_dma", 0, 10), rec(2, "pe0.pe_dma", 30, 40)}));
  const auto x = p.with_ph("X");
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NE((*x[0])["tid"].GetInt(), (*x[1])["tid"].GetInt());
  EXPECT_EQ((*x[0])["tid"].GetInt(), (*x[2])["tid"].GetInt());
}

TEST_F(ChromeTrace, TileFlows) {
  const fs::path file = dir_ / "t.json";
  std::vector<OpRecord> rs = {rec(0, "pe0.pe_dma", 0, 1000), rec(1, "pe0.pe_gemm", 1000, 2000),
                              rec(2, "pe0.other", 0, 5), rec(3, "pe0.pe_dma", 2000, 3000),
                              rec(4, "pe0.pe_dma", 3000, 4000)};
  rs[0].flow = rs[1].flow = rs[3].flow = 77;
  rs[3].flow_end = true;
  rs[4].flow = 77;  // the same tile value again after its end: a new flow
  const std::string text = write(file, rs);
  Parsed p(text);
  const auto s = p.with_ph("s"), t = p.with_ph("t"), f = p.with_ph("f");
  ASSERT_EQ(s.size(), 2u);
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(f.size(), 1u);
  const auto x = p.with_ph("X");
  ASSERT_EQ(x.size(), 5u);
  const int id = (*s[0])["id"].GetInt();
  EXPECT_EQ((*t[0])["id"].GetInt(), id);
  EXPECT_EQ((*f[0])["id"].GetInt(), id);
  EXPECT_NE((*s[1])["id"].GetInt(), id);
  EXPECT_STREQ((*f[0])["bp"].GetString(), "e");
  EXPECT_EQ((*s[0])["tid"].GetInt(), (*x[0])["tid"].GetInt());
  EXPECT_EQ((*t[0])["tid"].GetInt(), (*x[1])["tid"].GetInt());
  EXPECT_EQ((*f[0])["tid"].GetInt(), (*x[3])["tid"].GetInt());
  EXPECT_DOUBLE_EQ((*t[0])["ts"].GetDouble(), 0.001);
  EXPECT_DOUBLE_EQ((*f[0])["ts"].GetDouble(), 0.002);
  EXPECT_STREQ((*s[0])["cat"].GetString(), "tile");
  // Each flow event follows its slice.
  EXPECT_NE(text.find("\"seq\":1}},\n{\"ph\":\"t\",\"id\":" + std::to_string(id)), std::string::npos) << text;
}

TEST_F(ChromeTrace, ArgsAreTypedAndEscaped) {
  const fs::path file = dir_ / "t.json";
  OpRecord r = rec(42, "pe0.pe_gemm", 0, 1);
  r.param("m", 128);
  r.param("ratio", 0.1);
  r.param("bad", std::nan(""));
  r.param("note", "say \"hi\"\nback\\slash\x01");
  r.dependency_ids = {3, 5};
  const std::string text = write(file, {r});
  EXPECT_NE(text.find(R"("note":"say \"hi\"\u000aback\\slash\u0001")"), std::string::npos) << text;
  Parsed p(text);
  const auto x = p.with_ph("X");
  ASSERT_EQ(x.size(), 1u);
  const auto& args = (*x[0])["args"];
  EXPECT_TRUE(args["m"].IsInt64());
  EXPECT_EQ(args["m"].GetInt64(), 128);
  EXPECT_TRUE(args["ratio"].IsDouble());
  EXPECT_EQ(args["ratio"].GetDouble(), 0.1);
  EXPECT_STREQ(args["bad"].GetString(), "nan");
  EXPECT_STREQ(args["note"].GetString(), "say \"hi\"\nback\\slash\x01");
  EXPECT_EQ(args["seq"].GetInt(), 42);
  ASSERT_EQ(args["deps"].Size(), 2u);
  EXPECT_EQ(args["deps"][1].GetInt(), 5);
}

TEST_F(ChromeTrace, FileAppearsOnlyAtClose) {
  const fs::path& dir = dir_;
  const fs::path file = dir / "t.json";
  {
    chrome_trace::ChromeTrace t(file.string());
    t.add(rec(0, "pe0.pe_dma", 0, 1));
    EXPECT_FALSE(fs::exists(file));
  }
  EXPECT_TRUE(fs::is_empty(dir));  // no file, no temporary
  {
    chrome_trace::ChromeTrace t(file.string());
    t.add(rec(0, "pe0.pe_dma", 0, 1));
    t.close();
    t.close();
  }
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  Parsed p(slurp(file));
  EXPECT_EQ(p.with_ph("X").size(), 1u);
}

TEST_F(ChromeTrace, EmptyTraceIsValid) {
  const fs::path file = dir_ / "t.json";
  Parsed p(write(file, {}));
  EXPECT_EQ(p.events().Size(), 0u);
}

TEST_F(ChromeTrace, ErrorsNameThePath) {
  const fs::path& dir = dir_;
  const std::string missing = (dir / "no" / "t.json").string();
  try {
    chrome_trace::ChromeTrace t(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "trace: cannot write " + missing + ": No such file or directory");
  }
  // The rename at close fails: the path is a non-empty directory. The temporary is removed.
  const fs::path busy = dir / "busy";
  fs::create_directories(busy / "x");
  chrome_trace::ChromeTrace t(busy.string());
  t.add(rec(0, "pe0.pe_dma", 0, 1));
  try {
    t.close();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(busy.string()), std::string::npos) << e.what();
  }
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().rfind("busy.tmp", 0), std::string::npos) << e.path();
}

TEST_F(ChromeTrace, Deterministic) {
  const fs::path& dir = dir_;
  std::vector<OpRecord> rs;
  const char* ids[] = {"sip0.cube0.pe0.pe_dma", "sip0.cube0.pe1.pe_gemm", "host", "sip0.cube0.pe0.pe_math"};
  for (std::uint64_t i = 0; i < 200; ++i) {
    OpRecord r = rec(i, ids[i % 4], i * 700, i * 700 + 1500 + (i % 3) * 900, "op" + std::to_string(i % 5));
    r.param("bytes", i * 64);
    r.param("util", 1.0 / static_cast<double>(i + 1));
    r.flow = i % 7 + 1;
    r.flow_end = i % 11 == 0;
    rs.push_back(r);
  }
  const std::string a = write(dir / "a.json", rs), b = write(dir / "b.json", rs);
  EXPECT_EQ(a, b);
  Parsed p(a);
  EXPECT_EQ(p.with_ph("X").size(), 200u);
}

}  // namespace
}  // namespace kbsim
