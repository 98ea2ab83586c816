// The computer art LOLWUT draws: Schotter (after Georg Nees's 1968 plotter drawing), squares
// that fall into disorder row by row, drawn with Braille dots; and a night skyline in four
// shades of gray, drawn with terminal colors. Both are random, as LOLWUT's art is.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace goblin {

// A bitmap of dots printed as Braille characters, each covering 2 x 4 dots.
class BrailleCanvas {
 public:
  BrailleCanvas(int width, int height);

  int width() const { return width_; }
  int height() const { return height_; }
  void Set(int x, int y);  // dots outside the canvas are ignored
  bool Get(int x, int y) const;
  void Line(int x0, int y0, int x1, int y1);
  // One line of text per 4 dot rows, each ending in '\n'; UTF-8.
  std::string Render() const;

 private:
  int width_;
  int height_;
  std::vector<uint8_t> dots_;
};

// Schotter: `columns` characters wide, squares_per_row x squares_per_col squares.
std::string DrawSchotter(int columns, int squares_per_row, int squares_per_col,
                         std::mt19937_64& rng);

// A skyline `columns` x `rows` cells, each cell one colored space, rows ending in '\n'.
std::string DrawSkyline(int columns, int rows, std::mt19937_64& rng);

}  // namespace goblin
