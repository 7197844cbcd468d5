// test.bad_undefined: a plugin that calls a function nobody defines. Bound
// eagerly, it is refused when loaded, naming the library and the symbol.
#include "kbsim/plugin.hpp"

extern "C" int kbsim_test_nowhere_defined(int);

namespace {

class Undefined final : public kbsim::Component {
 public:
  using Component::Component;
  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "undefined_call";
    i.summary = "test component calling an undefined function";
    return i;
  }
  void on_timer(std::uint64_t tag, kbsim::Ref<kbsim::Message>) override { (void)kbsim_test_nowhere_defined(int(tag)); }
};

}  // namespace

KBSIM_PLUGIN("test_bad_undefined") { kbsim::add_component<Undefined>(plugin); }
