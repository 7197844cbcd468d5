// The sequence diagram's layout (sequence.hpp): fixed steps, no measuring of text.
#include "sequence.hpp"

#include <cstdio>

#include "kbsim/figure.hpp"

namespace kbsim::ipcq_diagrams {

namespace {

constexpr double kTimeColumn = 110, kGap = 180, kBoxW = 168, kHeadTop = 48, kHeadH = 38, kRow = 30;

double x_of(std::size_t i) { return kTimeColumn + kBoxW / 2 + 10 + kGap * static_cast<double>(i); }

}  // namespace

std::string ns_text(Tick t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(t / kPsPerNs),
                static_cast<unsigned long long>(t % kPsPerNs));
  std::string s(buf);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string svg(const Sequence& s) {
  using fig::detail::escape;
  using fig::detail::line;
  using fig::detail::text;
  const double first = kHeadTop + kHeadH + 36;
  const double bottom = first + kRow * static_cast<double>(s.arrows.size());
  const double width = x_of(s.lifelines.size() - 1) + kBoxW / 2 + 20;
  fig::detail::Frame f{static_cast<int>(width), static_cast<int>(bottom + 20)};
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + fig::detail::open_svg(f, s.title);
  o += "<defs><marker id=\"head\" markerWidth=\"8\" markerHeight=\"8\" refX=\"8\" refY=\"4\" orient=\"auto\">"
       "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n";
  o += text(kTimeColumn - 10, first - 14, "leaves (ns)", "end", " font-weight=\"bold\"");
  for (std::size_t i = 0; i < s.lifelines.size(); ++i) {
    const std::string& id = s.lifelines[i];
    const double x = x_of(i);
    const std::size_t dot = id.rfind('.');
    o += "<rect x=\"" + fig::detail::num(x - kBoxW / 2, "%.1f") + "\" y=\"" + fig::detail::num(kHeadTop, "%.1f") +
         "\" width=\"" + fig::detail::num(kBoxW, "%.1f") + "\" height=\"" + fig::detail::num(kHeadH, "%.1f") +
         "\" fill=\"#eef3fb\" stroke=\"#4a6fa5\"><title>" + escape(id) + "</title></rect>\n";
    if (dot == std::string::npos) {
      o += text(x, kHeadTop + 23, id, "middle", " class=\"lifeline\"");
    } else {
      o += text(x, kHeadTop + 15, id.substr(0, dot), "middle", " font-size=\"10\" fill=\"#555\"");
      o += text(x, kHeadTop + 31, id.substr(dot + 1), "middle", " class=\"lifeline\" font-weight=\"bold\"");
    }
    o += line(x, kHeadTop + kHeadH, x, bottom, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
  }
  for (std::size_t k = 0; k < s.arrows.size(); ++k) {
    const Arrow& a = s.arrows[k];
    const double y = first + kRow * static_cast<double>(k), x0 = x_of(a.from), x1 = x_of(a.to);
    const std::string when = ns_text(a.t_to) + " ns";
    o += "<g class=\"msg\"><title>" +
         escape(s.lifelines[a.from] + " -> " + s.lifelines[a.to] + ": " + a.label + ", " + ns_text(a.t_from) + " -> " +
                when) +
         "</title>\n";
    o += text(kTimeColumn - 10, y + 4, ns_text(a.t_from), "end", " class=\"t\"");
    o += line(x0, y, x1 + (x1 > x0 ? -2 : 2), y, "stroke=\"#333\" stroke-width=\"1.5\" marker-end=\"url(#head)\"");
    o += text((x0 + x1) / 2, y - 6, a.label + " @ " + when, "middle", " class=\"label\" font-size=\"11\"");
    o += "</g>\n";
  }
  return o + "</svg>\n";
}

}  // namespace kbsim::ipcq_diagrams
