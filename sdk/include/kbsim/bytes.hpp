// The bytes of a message that crosses from one process of a split run to
// another (docs/scale-out.md): a message type writes its own fields with a
// ByteWriter in Message::save and reads them back, in the same order, with a
// ByteReader in Message::load. Plain values are copied as they are (both ends
// run the same build); strings and byte runs carry their length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kbsim/errors.hpp"

namespace kbsim {

class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) noexcept : out_(out) {}
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put(const T& v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void put_string(std::string_view s) {
    put(static_cast<std::uint64_t>(s.size()));
    out_.append(s);
  }
  void put_bytes(std::span<const std::byte> b) {
    put(static_cast<std::uint64_t>(b.size()));
    out_.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
  /// A run of plain values, with its length.
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put_vector(std::span<const T> v) {
    put(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
  }

 private:
  std::string& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) noexcept : in_(in) {}
  template <class T>
  requires std::is_trivially_copyable_v<T> T get() {
    const T v = peek<T>();
    at_ += sizeof v;
    return v;
  }
  /// The next value, left to read.
  template <class T>
  requires std::is_trivially_copyable_v<T> T peek()
  const {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  std::string_view get_bytes() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  /// A count of things that follow (written with put as a std::uint64_t), checked against what is left: each takes
  /// at least one byte.
  std::size_t get_count() {
    const auto n = get<std::uint64_t>();
    if (n > in_.size() - at_) need(n);
    return static_cast<std::size_t>(n);
  }
  /// A run of plain values put_vector wrote.
  template <class T>
  requires std::is_trivially_copyable_v<T> std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > (in_.size() - at_) / sizeof(T)) need(in_.size() - at_ + 1);  // (says how much is left)
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }
  bool done() const noexcept { return at_ == in_.size(); }
  std::size_t offset() const noexcept { return at_; }
  /// Bytes left to read.
  std::size_t remaining() const noexcept { return in_.size() - at_; }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - at_)
      throw SimError("what came from another process is cut short (" + std::to_string(n) + " bytes wanted at byte " +
                     std::to_string(at_) + " of " + std::to_string(in_.size()) + ")");
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace kbsim
