// The JSON kit: one pretty JSON writer (RapidJSON underneath) for every file
// kbsim and its plugins write: results.json, topology dumps, the op log,
// traces, probe reports. Link kbsim::json (it brings RapidJSON's headers).
#pragma once

#include <rapidjson/filewritestream.h>
#include <rapidjson/prettywriter.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kbsim/errors.hpp"
#include "kbsim/files.hpp"

namespace kbsim::json {

/// A thin facade over RapidJSON's pretty writer, so callers need not see it.
class JsonWriter {
 public:
  virtual ~JsonWriter() = default;
  virtual void begin_object() = 0;
  virtual void end_object() = 0;
  virtual void begin_array() = 0;
  virtual void end_array() = 0;
  virtual void key(const std::string& k) = 0;
  virtual void value(const std::string& v) = 0;
  virtual void value(const char* v) = 0;
  virtual void value(double v) = 0;
  virtual void value(std::int64_t v) = 0;
  virtual void value(std::uint64_t v) = 0;
  virtual void value(bool v) = 0;
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
  template <class T>
  void field(const std::string& k, const T& v) {
    key(k);
    value(v);
  }
};

namespace detail {
/// `s` as valid UTF-8: each byte that does not start or continue a well-formed
/// sequence becomes U+FFFD, so whatever a user named, the file stays JSON.
inline std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size() && !(len == 2 && c < 0xC2) && !(len == 4 && c > 0xF4);
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (ok && len == 3) {  // no overlong forms, no surrogates
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

/// Whether `s` is plain ASCII (valid UTF-8 as it is: most keys and values, written without a copy).
inline bool ascii(std::string_view s) noexcept {
  unsigned char any = 0;
  for (char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

class RapidWriter final : public JsonWriter {
 public:
  explicit RapidWriter(std::FILE* f) : stream_(f, buffer_, sizeof buffer_), w_(stream_) { w_.SetIndent(' ', 2); }
  void begin_object() override { w_.StartObject(); }
  void end_object() override { w_.EndObject(); }
  void begin_array() override { w_.StartArray(); }
  void end_array() override { w_.EndArray(); }
  void key(const std::string& k) override {
    if (ascii(k)) return void(w_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())));
    const std::string s = valid_utf8(k);
    w_.Key(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void value(const std::string& v) override {
    if (ascii(v)) return void(w_.String(v.data(), static_cast<rapidjson::SizeType>(v.size())));
    const std::string s = valid_utf8(v);
    w_.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void value(const char* v) override { value(std::string(v)); }
  void value(double v) override {
    if (std::isfinite(v)) {
      w_.Double(v);
    } else {
      w_.Null();
    }
  }
  void value(std::int64_t v) override { w_.Int64(v); }
  void value(std::uint64_t v) override { w_.Uint64(v); }
  void value(bool v) override { w_.Bool(v); }
  void flush() { stream_.Flush(); }

 private:
  char buffer_[65536];
  rapidjson::FileWriteStream stream_;
  rapidjson::PrettyWriter<rapidjson::FileWriteStream> w_;
};
}  // namespace detail

/// Writes JSON into a temporary file beside `file` and returns its name; the
/// caller renames it into place (or removes it). Nothing is left on failure.
inline std::filesystem::path write_json_temp(const std::filesystem::path& file,
                                             const std::function<void(JsonWriter&)>& body) {
  const std::filesystem::path tmp = temp_name(file.string());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(file.string() + ": cannot write (" + std::strerror(errno) + ")");
  try {
    auto w = std::make_unique<detail::RapidWriter>(f);
    body(*w);
    w->flush();
    std::fputc('\n', f);
    if (std::fclose(f) != 0) throw Error(file.string() + ": write failed");
    f = nullptr;
  } catch (...) {
    if (f) std::fclose(f);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  return tmp;
}

/// Writes JSON to a file atomically: into a temporary file renamed on
/// success, so a failed run leaves no half-written file.
inline void write_json_file(const std::filesystem::path& file, const std::function<void(JsonWriter&)>& body) {
  const std::filesystem::path tmp = write_json_temp(file, body);
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw Error(file.string() + ": cannot write (" + why + ")");
  }
}

/// The JSON `body` writes, as a string.
inline std::string write_json_string(const std::function<void(JsonWriter&)>& body) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  if (!f) throw Error("cannot open a memory stream for JSON");
  {
    auto w = std::make_unique<detail::RapidWriter>(f);
    body(*w);
    w->flush();
  }
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

inline void write_json_stdout(const std::function<void(JsonWriter&)>& body) {
  auto w = std::make_unique<detail::RapidWriter>(stdout);
  body(*w);
  w->flush();
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace kbsim::json
