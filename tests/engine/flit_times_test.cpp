// FlitTimes against the flit-by-flit recurrences it closes: random messages through random chains of links and
// serial workers, every flit's time compared.
#include "kbsim/flit_times.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "kbsim/rng.hpp"

namespace {

using kbsim::FlitTimes;
using kbsim::Tick;

std::vector<Tick> all(const FlitTimes& f) {
  std::vector<Tick> v;
  for (std::uint32_t i = 0; i < f.size(); ++i) v.push_back(f.at(i));
  return v;
}

TEST(FlitTimes, ATrainIsItsFlitsBackToBack) {
  // 4 flits of 8 ns, the last 3 ns, from 100 ns with 1 ns latency.
  FlitTimes f = FlitTimes::train(4, 100'000, 8'000, 3'000, 1'000);
  EXPECT_EQ(all(f), (std::vector<Tick>{109'000, 117'000, 125'000, 128'000}));
  EXPECT_EQ(f.first_at_or_after(117'000), 1u);
  EXPECT_EQ(f.first_at_or_after(117'001), 2u);
  EXPECT_EQ(f.first_at_or_after(200'000), 4u);
}

TEST(FlitTimes, MatchesFlitByFlitThroughRandomChains) {
  kbsim::Rng rng(7);
  auto pick = [&](Tick lo, Tick hi) { return lo + rng.next() % (hi - lo + 1); };
  for (int trial = 0; trial < 3000; ++trial) {
    const auto n = static_cast<std::uint32_t>(pick(1, trial % 5 == 0 ? 200 : 12));
    Tick full = pick(1, 9000), last = pick(1, full);
    const Tick start = pick(0, 50'000), lat = pick(0, 3000);
    FlitTimes f = FlitTimes::train(n, start, full, last, lat);
    std::vector<Tick> t(n);
    for (std::uint32_t i = 0; i < n; ++i) t[i] = start + lat + Tick{i} * full + (i + 1 < n ? full : last);
    ASSERT_EQ(all(f), t);
    bool fits = true;
    for (int hop = 0; hop < 6 && fits; ++hop) {
      // A worker: free from `w`, holding the first flit `o` more.
      const Tick w = pick(0, 60'000), o = pick(0, 20'000);
      auto d = f.served(w, o);
      if (!d) {
        fits = false;
        break;
      }
      Tick free = w;
      for (std::uint32_t i = 0; i < n; ++i) free = t[i] = std::max(t[i], free) + (i == 0 ? o : 0);
      ASSERT_EQ(all(*d), t) << "trial " << trial << " hop " << hop << " worker";
      // A link: free from `busy`, `lf` per full flit and `ll` for the last, latency `ll2`.
      const Tick busy = pick(0, 80'000), lf = pick(1, 12'000), ll = pick(1, lf), l2 = pick(0, 4000);
      auto st = d->link_starts(busy, lf);
      if (!st) {
        fits = false;
        break;
      }
      Tick b = busy;
      for (std::uint32_t i = 0; i < n; ++i) {
        const Tick s = std::max(t[i], b), ser = i + 1 < n ? lf : ll;
        b = s + ser;
        t[i] = s + ser + l2;
      }
      f = st->shifted((n > 1 ? lf : ll) + l2, lf + l2, ll + l2);
      ASSERT_EQ(all(f), t) << "trial " << trial << " hop " << hop << " link";
      for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(f.first_at_or_after(t[i]), i);
    }
  }
}

}  // namespace
