// Test helper: the SDK's figure test kit (kbsim/testing_figure.hpp) under the
// names the core's tests use.
#pragma once

#include "kbsim/testing_figure.hpp"

namespace kbsim::test {

using testkit::can_render_svg;
using testkit::Ink;
using testkit::ink_of_png;
using testkit::render_svg;

}  // namespace kbsim::test
