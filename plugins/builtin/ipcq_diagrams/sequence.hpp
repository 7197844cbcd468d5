// A sequence diagram as SVG: one lifeline per component, left to right, and one
// row per observed message, top to bottom in time order: an arrow from the
// component that handled it to the next one, labelled with what it carried and
// when it got there; the time it left is in the left column.
#pragma once

#include <string>
#include <vector>

#include "kbsim/time.hpp"

namespace kbsim::ipcq_diagrams {

struct Arrow {
  std::size_t from = 0, to = 0;  ///< lifelines
  Tick t_from = 0, t_to = 0;     ///< when `from` handled it, when `to` did (both observed)
  std::string label;             ///< what it carried
};

struct Sequence {
  std::string title;
  std::vector<std::string> lifelines;  ///< node ids ("a.b.c": drawn as "a.b" over "c")
  std::vector<Arrow> arrows;           ///< in the order they are drawn
};

/// Ticks as nanoseconds, shortest exact form: "76.45", "1900.9", "12".
std::string ns_text(Tick t);

/// The diagram as a standalone SVG document.
std::string svg(const Sequence& s);

}  // namespace kbsim::ipcq_diagrams
