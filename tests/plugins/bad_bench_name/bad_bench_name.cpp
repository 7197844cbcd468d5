// test_bad_bench_name: a bench whose name is not kebab-case, which the registry refuses when the library registers.
#include "kbsim/bench.hpp"
#include "kbsim/plugin.hpp"

namespace {

class BadName final : public kbsim::Bench {
 public:
  static kbsim::BenchInfo info() { return {"My_Bench", "test bench: named against the rule", {}}; }
  void run(kbsim::BenchContext&) override {}
};

}  // namespace

KBSIM_PLUGIN("test_bad_bench_name") { kbsim::add_bench<BadName>(plugin); }
