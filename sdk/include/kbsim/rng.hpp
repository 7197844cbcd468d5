// A small, portable, seeded random generator (xoshiro256** seeded by
// splitmix64), so that results are bit-identical on every platform.
#pragma once

#include <cstdint>

namespace kbsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept {
    for (auto& s : s_) s = splitmix(seed);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform integer in [0, n), n > 0, without modulo bias (multiply-shift with rejection).
  std::uint32_t below(std::uint32_t n) noexcept {
    std::uint64_t m = (next() >> 32) * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
      const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
      while (low < threshold) {
        m = (next() >> 32) * n;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

  /// Uniform real in [0, 1).
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Mix a base seed with a stream number (e.g. a node index) into a new seed.
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t stream) noexcept {
    std::uint64_t x = seed ^ (stream * 0x9e3779b97f4a7c15ULL);
    return splitmix(x);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t s_[4];
};

}  // namespace kbsim
