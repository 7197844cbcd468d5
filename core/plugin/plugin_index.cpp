#include "plugin/plugin_index.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kbsim::core {

namespace {
// One line per record, fields separated by tabs:
//   kbsim-plugin-index <TAB> 1 <TAB> ABI
//   library <TAB> FILE <TAB> SIZE <TAB> MTIME_NS       (then its offers, up to the next library line)
//   KIND <TAB> NAME [<TAB> DETAIL]
constexpr const char* kMagic = "kbsim-plugin-index";
constexpr int kFormat = 1;
constexpr std::array<const char*, 9> kKindNames = {"component", "bench",     "section",   "command", "observer",
                                                   "service",   "front-end", "extension", "message"};

std::vector<std::string> tab_fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

/// A whole field as a number (std::from_chars: digits only, a sign for signed types).
template <class T>
bool parse_number(const std::string& s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool writable_name(const std::string& s) { return !s.empty() && s.find_first_of("\t\n\r") == std::string::npos; }
}  // namespace

std::string message_offer_name(TypeId type) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(type));
  return hex;
}

std::vector<Offer> offers_of(const PluginDescriptor& d) {
  std::vector<Offer> out;
  for (const auto& c : d.components) out.push_back({OfferKind::kComponent, c.info.type, {}});
  for (const auto& b : d.benches) out.push_back({OfferKind::kBench, b.info.name, {}});
  for (const auto& s : d.sections) out.push_back({OfferKind::kSection, s.name, {}});
  for (const auto& c : d.commands) out.push_back({OfferKind::kCommand, c.info.name, {}});
  for (const auto& o : d.observers) out.push_back({OfferKind::kObserver, o.info.name, {}});
  for (const auto& v : d.services) out.push_back({OfferKind::kService, v.info.name, {}});
  for (const auto& f : d.frontends) out.push_back({OfferKind::kFrontEnd, f.name, {}});
  for (const auto& e : d.extensions) out.push_back({OfferKind::kExtension, e.kind, e.name});
  for (const auto& m : d.messages)
    out.push_back({OfferKind::kMessage, message_offer_name(m.type), std::string(m.name)});
  return out;
}

bool file_stamp(const fs::path& file, FileStamp& out) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) return false;
  const auto mtime = fs::last_write_time(file, ec);
  if (ec) return false;
  out.size = size;
  out.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
  return true;
}

std::vector<IndexedLibrary> read_plugin_index(const fs::path& dir) {
  const fs::path file = dir / kPluginIndexFile;
  std::ifstream in(file);
  if (!in) return {};
  std::vector<IndexedLibrary> out;
  std::string line;
  unsigned line_no = 0;
  auto ignore = [&](const std::string& why) {
    spdlog::debug("{}:{}: {}; the index is ignored and every library of the directory is loaded", file.string(),
                  line_no, why);
    return std::vector<IndexedLibrary>{};
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::vector<std::string> f = tab_fields(line);
    if (line_no == 1) {
      if (f.size() != 3 || f[0] != kMagic) return ignore("not a kbsim plugin index");
      if (f[1] != std::to_string(kFormat)) return ignore("an index of format " + f[1]);
      if (f[2] != std::to_string(kAbiVersion)) return ignore("written for plugin ABI " + f[2]);
      continue;
    }
    if (f[0] == "library") {
      std::uint64_t size = 0;
      std::int64_t mtime = 0;  // (of the file clock, whose epoch may make it negative)
      if (f.size() != 4 || f[1].empty() || !parse_number(f[2], size) || !parse_number(f[3], mtime))
        return ignore("a malformed library line");
      out.push_back({f[1], {size, mtime}, {}});
      continue;
    }
    std::size_t kind = 0;
    while (kind < kKindNames.size() && f[0] != kKindNames[kind]) ++kind;
    if (kind == kKindNames.size()) return ignore("an unknown record '" + f[0] + "'");
    const bool two = kind == static_cast<std::size_t>(OfferKind::kExtension) ||
                     kind == static_cast<std::size_t>(OfferKind::kMessage);
    if (out.empty() || f.size() != (two ? 3u : 2u) || f[1].empty()) return ignore("a malformed " + f[0] + " line");
    out.back().offers.push_back({static_cast<OfferKind>(kind), f[1], two ? f[2] : std::string()});
  }
  if (line_no == 0) return ignore("an empty file");
  return out;
}

void write_plugin_index(const fs::path& dir, const std::vector<IndexedLibrary>& libraries) {
  const fs::path file = dir / kPluginIndexFile;
  std::ostringstream text;
  text << kMagic << '\t' << kFormat << '\t' << kAbiVersion << '\n';
  for (const IndexedLibrary& lib : libraries) {
    text << "library\t" << lib.file << '\t' << lib.stamp.size << '\t' << lib.stamp.mtime_ns << '\n';
    for (const Offer& o : lib.offers) {
      const bool two = o.kind == OfferKind::kExtension || o.kind == OfferKind::kMessage;
      if (!writable_name(o.name) || (two && !writable_name(o.detail)))
        throw PluginError(lib.file + ": a " + kKindNames[static_cast<std::size_t>(o.kind)] + " name ('" + o.name +
                          "') is empty or holds a tab or a line break: it cannot be indexed");
      text << kKindNames[static_cast<std::size_t>(o.kind)] << '\t' << o.name;
      if (two) text << '\t' << o.detail;
      text << '\n';
    }
  }
  const fs::path tmp = dir / (std::string(kPluginIndexFile) + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw PluginError(file.string() + ": cannot be written");
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw PluginError(file.string() + ": cannot be written: " + ec.message());
  }
}

}  // namespace kbsim::core
