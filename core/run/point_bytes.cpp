#include "run/point_bytes.hpp"

#include <stdexcept>
#include <type_traits>
#include <variant>

#include "kbsim/bytes.hpp"

namespace kbsim::core {

namespace {

/// A point's record as bytes (kbsim/bytes.hpp), with the metrics trees written recursively.
class Out {
 public:
  template <class T>
  void raw(const T& v) {
    w_.put(v);
  }
  void str(std::string_view v) { w_.put_string(v); }
  void metrics(const Metrics& m) {
    raw(static_cast<std::uint8_t>(m.is_list()));
    raw(static_cast<std::uint64_t>(m.entries().size()));
    for (const Metrics::Entry& e : m.entries()) {
      str(e.key);
      if (e.node) {
        raw(std::uint8_t{5});
        metrics(*e.node);
        continue;
      }
      raw(static_cast<std::uint8_t>(e.scalar.index()));
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              str(v);
            } else {
              raw(v);
            }
          },
          e.scalar);
    }
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
  ByteWriter w_{s_};
};

class In {
 public:
  explicit In(std::string_view s) : r_(s) {}
  template <class T>
  T raw() {
    return r_.get<T>();
  }
  std::string str() { return r_.get_string(); }
  void metrics(Metrics& m) {
    raw<std::uint8_t>();  // list or object: the caller made `m` so
    const auto n = raw<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string key = str();
      const auto kind = raw<std::uint8_t>();
      Metrics* into = &m;
      switch (kind) {
        case 0: put(m, key, raw<bool>()); break;
        case 1: put(m, key, raw<std::int64_t>()); break;
        case 2: put(m, key, raw<std::uint64_t>()); break;
        case 3: put(m, key, raw<double>()); break;
        case 4: put(m, key, str()); break;
        case 5: {
          const bool list = r_.peek<std::uint8_t>() != 0;  // the nested node's own first byte
          into = m.is_list() ? (list ? &m.append_list() : &m.append()) : (list ? &m.list(key) : &m.object(key));
          metrics(*into);
          break;
        }
        default: throw std::runtime_error("sweep: a point's result is corrupt");
      }
    }
  }
  bool done() const { return r_.done(); }

 private:
  static void put(Metrics& m, const std::string& key, Metrics::Scalar v) {
    if (m.is_list()) {
      m.append(std::move(v));
    } else {
      m.set(key, std::move(v));
    }
  }
  ByteReader r_;
};

}  // namespace

std::string encode(const PointRecord& r) {
  Out o;
  o.raw(static_cast<std::uint8_t>(r.result.ok));
  o.str(r.result.error);
  o.metrics(r.result.metrics);
  o.metrics(r.config);
  o.raw(r.sim_time);
  o.raw(r.events);
  o.raw(r.build_wall_s);
  return o.take();
}

PointRecord decode(std::string_view bytes) {
  In in(bytes);
  PointRecord r;
  r.result.ok = in.raw<std::uint8_t>() != 0;
  r.result.error = in.str();
  in.metrics(r.result.metrics);
  in.metrics(r.config);
  r.sim_time = in.raw<Tick>();
  r.events = in.raw<std::uint64_t>();
  r.build_wall_s = in.raw<double>();
  if (!in.done()) throw std::runtime_error("sweep: a point's result has trailing bytes");
  return r;
}

}  // namespace kbsim::core
