// Tests of a bench's figures (kbsim/figure.hpp): render an SVG with
// rsvg-convert (Debian's librsvg2-bin) and measure how much of the picture is
// drawn, so a test can tell a real plot from a blank or garbled one.
// Header-only; decodes the 8-bit RGB/RGBA, non-interlaced PNG rsvg-convert
// writes with zlib (link ZLIB::ZLIB, from find_package(ZLIB)).
//
//   #include "kbsim/testing_figure.hpp"
//
//   if (!kbsim::testkit::can_render_svg()) GTEST_SKIP() << "rsvg-convert is missing";
//   const kbsim::testkit::Ink ink = kbsim::testkit::render_svg(dir / "latency.svg");
//   ASSERT_TRUE(ink.error.empty()) << ink.error;
//   EXPECT_GT(ink.drawn, ink.pixels / 50) << "nearly blank";
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace kbsim::testkit {

/// How much of a picture is drawn.
struct Ink {
  std::size_t pixels = 0, drawn = 0;  ///< all pixels, and those that are not (near) white
  std::size_t colours = 0;            ///< distinct colours of the drawn pixels
  std::string error;                  ///< why the picture could not be read
};

/// The ink of a PNG image (its bytes), or why it could not be read.
inline Ink ink_of_png(const std::string& png) {
  Ink ink;
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(png[at])) << 24) | (std::uint32_t(std::uint8_t(png[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(png[at + 2])) << 8) | std::uint32_t(std::uint8_t(png[at + 3]));
  };
  if (png.size() < 33 || png.compare(1, 3, "PNG") != 0) return ink.error = "not a PNG", ink;
  const std::uint32_t w = be32(16), h = be32(20);
  const int depth = std::uint8_t(png[24]), type = std::uint8_t(png[25]), interlace = std::uint8_t(png[28]);
  if (depth != 8 || (type != 2 && type != 6) || interlace) return ink.error = "unsupported PNG format", ink;
  const std::size_t bpp = type == 6 ? 4 : 3;
  std::string idat;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    const std::uint32_t len = be32(at);
    if (png.compare(at + 4, 4, "IDAT") == 0) idat.append(png, at + 8, len);
    at += 12 + len;
  }
  std::vector<unsigned char> raw((w * bpp + 1) * h);
  uLongf out = raw.size();
  if (uncompress(raw.data(), &out, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK)
    return ink.error = "PNG data does not inflate", ink;
  const std::size_t stride = w * bpp;
  std::vector<unsigned char> prev(stride, 0), row(stride);
  std::set<std::uint32_t> colours;
  for (std::uint32_t y = 0; y < h; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* in = &raw[y * (stride + 1) + 1];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? row[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: break;
      }
      row[i] = static_cast<unsigned char>(in[i] + pred);
    }
    for (std::uint32_t x = 0; x < w; ++x) {
      const unsigned char* px = &row[x * bpp];
      const bool clear = bpp == 4 && px[3] < 16;
      ++ink.pixels;
      if (!clear && (px[0] < 235 || px[1] < 235 || px[2] < 235)) {
        ++ink.drawn;
        colours.insert((std::uint32_t(px[0] / 16) << 8) | (std::uint32_t(px[1] / 16) << 4) | (px[2] / 16));
      }
    }
    prev = row;
  }
  ink.colours = colours.size();
  return ink;
}

/// Whether rsvg-convert is installed (a test that renders skips, and says so, without it).
inline bool can_render_svg() { return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0; }

/// Render `svg` to a PNG beside it and measure its ink.
inline Ink render_svg(const std::filesystem::path& svg) {
  const std::filesystem::path png = svg.string() + ".png";
  if (std::system(("rsvg-convert -o '" + png.string() + "' '" + svg.string() + "'").c_str()) != 0)
    return Ink{0, 0, 0, "rsvg-convert failed on " + svg.string()};
  std::ifstream in(png, std::ios::binary);
  return ink_of_png(std::string(std::istreambuf_iterator<char>(in), {}));
}

}  // namespace kbsim::testkit
