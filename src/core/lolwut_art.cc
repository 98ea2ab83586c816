#include "core/lolwut_art.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace goblin {

BrailleCanvas::BrailleCanvas(int width, int height)
    : width_(width), height_(height), dots_(static_cast<size_t>(width) * height) {}

void BrailleCanvas::Set(int x, int y) {
  if (x >= 0 && y >= 0 && x < width_ && y < height_) dots_[static_cast<size_t>(y) * width_ + x] = 1;
}

bool BrailleCanvas::Get(int x, int y) const {
  return x >= 0 && y >= 0 && x < width_ && y < height_ &&
         dots_[static_cast<size_t>(y) * width_ + x] != 0;
}

void BrailleCanvas::Line(int x0, int y0, int x1, int y1) {
  const int dx = std::abs(x1 - x0);
  const int dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1;
  const int sy = y0 < y1 ? 1 : -1;
  int error = dx + dy;
  while (true) {
    Set(x0, y0);
    if (x0 == x1 && y0 == y1) return;
    const int twice = 2 * error;
    if (twice >= dy) {
      error += dy;
      x0 += sx;
    }
    if (twice <= dx) {
      error += dx;
      y0 += sy;
    }
  }
}

std::string BrailleCanvas::Render() const {
  // Unicode's Braille patterns: U+2800 plus one bit per dot, numbered down the left column
  // (bits 0-2), down the right (3-5), then the bottom row left and right (6, 7).
  static constexpr int kBit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
  std::string text;
  for (int y = 0; y < height_; y += 4) {
    for (int x = 0; x < width_; x += 2) {
      int bits = 0;
      for (int dy = 0; dy < 4; ++dy) {
        for (int dx = 0; dx < 2; ++dx) {
          if (Get(x + dx, y + dy)) bits |= kBit[dy][dx];
        }
      }
      const int code = 0x2800 + bits;  // three bytes of UTF-8
      text.push_back(static_cast<char>(0xE0 | (code >> 12)));
      text.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
    text.push_back('\n');
  }
  return text;
}

std::string DrawSchotter(int columns, int squares_per_row, int squares_per_col,
                         std::mt19937_64& rng) {
  const int width = columns * 2;
  const int padding = width > 4 ? 2 : 0;
  const int side = std::max(1, (width - padding * 2) / squares_per_row);
  const int height = side * squares_per_col + padding * 2;
  BrailleCanvas canvas(width, height);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int row = 0; row < squares_per_col; ++row) {
    // Order in the top row, more disorder in each row below it.
    const double disorder =
        squares_per_col > 1 ? static_cast<double>(row) / (squares_per_col - 1) : 0.0;
    for (int col = 0; col < squares_per_row; ++col) {
      const double angle = unit(rng) * disorder * M_PI / 4;
      const double cx = padding + side * col + side / 2.0 + unit(rng) * disorder * side / 4;
      const double cy = padding + side * row + side / 2.0 + unit(rng) * disorder * side / 4;
      const double half = side / 2.0;
      int corner_x[4];
      int corner_y[4];
      for (int k = 0; k < 4; ++k) {
        const double a = angle + M_PI / 4 + k * M_PI / 2;
        corner_x[k] = static_cast<int>(std::lround(cx + std::cos(a) * half * M_SQRT2));
        corner_y[k] = static_cast<int>(std::lround(cy + std::sin(a) * half * M_SQRT2));
      }
      for (int k = 0; k < 4; ++k) {
        canvas.Line(corner_x[k], corner_y[k], corner_x[(k + 1) % 4], corner_y[(k + 1) % 4]);
      }
    }
  }
  return canvas.Render();
}

std::string DrawSkyline(int columns, int rows, std::mt19937_64& rng) {
  // Shades, darkest first: black, dark gray, light gray, white (as foreground;background).
  static constexpr const char* kShade[] = {"0;30;40", "0;90;100", "0;37;47", "0;97;107"};
  enum Shade { kBlack, kDarkGray, kLightGray, kWhite };
  std::vector<int> cells(static_cast<size_t>(columns) * rows, kDarkGray);  // the night sky
  auto cell = [&](int x, int y) -> int& { return cells[static_cast<size_t>(y) * columns + x]; };
  // A few stars high up.
  for (int i = 0; i < columns * rows / 60; ++i) {
    cell(static_cast<int>(rng() % columns), static_cast<int>(rng() % std::max(1, rows / 3))) =
        kLightGray;
  }
  // Two layers of buildings: a far one in light gray, a near one in black with lit windows.
  for (int layer = 0; layer < 2; ++layer) {
    int x = -static_cast<int>(rng() % 4);
    while (x < columns) {
      const int wide = 3 + static_cast<int>(rng() % 8);
      const int low = layer == 0 ? rows / 3 : rows / 5;
      const int span = std::max(1, rows - rows / 5 - low);
      const int top = low + static_cast<int>(rng() % span);
      for (int bx = std::max(0, x); bx < std::min(columns, x + wide); ++bx) {
        for (int y = top; y < rows; ++y) {
          const bool window = layer == 1 && bx > x && bx < x + wide - 1 && y > top &&
                              (y - top) % 2 == 1 && (bx - x) % 2 == 1 && rng() % 3 == 0;
          cell(bx, y) = layer == 0 ? kLightGray : (window ? kWhite : kBlack);
        }
      }
      x += wide + static_cast<int>(rng() % 3);
    }
  }
  std::string text;
  for (int y = 0; y < rows; ++y) {
    for (int x = 0; x < columns; ++x) {
      text += "\033[";
      text += kShade[cell(x, y)];
      text += "m \033[0m";
    }
    text.push_back('\n');
  }
  return text;
}

}  // namespace goblin
