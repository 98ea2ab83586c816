// LOLWUT's drawing: Braille dots land in the right bit of the right character, lines join
// their end points, and the art has the size it was asked for.
#include "core/lolwut_art.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace goblin {
namespace {

// The code points of one rendered line of Braille (3-byte UTF-8 each).
std::vector<int> CodePoints(const std::string& line) {
  std::vector<int> points;
  for (size_t i = 0; i + 2 < line.size(); i += 3) {
    points.push_back(((line[i] & 0x0F) << 12) | ((line[i + 1] & 0x3F) << 6) | (line[i + 2] & 0x3F));
  }
  return points;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  EXPECT_EQ(start, text.size()) << "text must end with a newline";
  return lines;
}

TEST(BrailleCanvasTest, EachDotHasItsBit) {
  // Unicode's numbering: dots 1-3 down the left column, 4-6 down the right, 7 and 8 below.
  const int expected[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 2; ++x) {
      BrailleCanvas canvas(4, 4);
      canvas.Set(x + 2, y);  // the second character
      const std::vector<std::string> lines = Lines(canvas.Render());
      ASSERT_EQ(lines.size(), 1u);
      EXPECT_EQ(CodePoints(lines[0]), (std::vector<int>{0x2800, 0x2800 + expected[y][x]}));
    }
  }
}

TEST(BrailleCanvasTest, DotsOutsideAreIgnoredAndPartialCellsRender) {
  BrailleCanvas canvas(3, 5);  // 2 characters wide, 2 lines high
  canvas.Set(-1, 0);
  canvas.Set(3, 0);
  canvas.Set(0, 5);
  canvas.Set(2, 4);
  const std::vector<std::string> lines = Lines(canvas.Render());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(CodePoints(lines[0]), (std::vector<int>{0x2800, 0x2800}));
  EXPECT_EQ(CodePoints(lines[1]), (std::vector<int>{0x2800, 0x2801}));
}

TEST(BrailleCanvasTest, LinesJoinTheirEndPointsWithoutGaps) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    BrailleCanvas canvas(40, 40);
    const int x0 = static_cast<int>(rng() % 40), y0 = static_cast<int>(rng() % 40);
    const int x1 = static_cast<int>(rng() % 40), y1 = static_cast<int>(rng() % 40);
    canvas.Line(x0, y0, x1, y1);
    EXPECT_TRUE(canvas.Get(x0, y0));
    EXPECT_TRUE(canvas.Get(x1, y1));
    // Every dot set has a set neighbour (8-connected), unless the line is one dot.
    int dots = 0;
    for (int y = 0; y < 40; ++y) {
      for (int x = 0; x < 40; ++x) {
        if (!canvas.Get(x, y)) continue;
        ++dots;
        bool neighbour = false;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) neighbour |= (dx || dy) && canvas.Get(x + dx, y + dy);
        EXPECT_TRUE(neighbour || (x0 == x1 && y0 == y1));
      }
    }
    EXPECT_EQ(dots, std::max(std::abs(x1 - x0), std::abs(y1 - y0)) + 1);
  }
}

TEST(LolwutArtTest, SchotterIsAsWideAsAsked) {
  std::mt19937_64 rng(1);
  for (int columns : {1, 2, 20, 66, 1000}) {
    const std::vector<std::string> lines = Lines(DrawSchotter(columns, 8, 12, rng));
    ASSERT_FALSE(lines.empty());
    for (const std::string& line : lines) EXPECT_EQ(CodePoints(line).size(), size_t(columns));
  }
}

TEST(LolwutArtTest, SkylineHasTheCellsAsked) {
  std::mt19937_64 rng(2);
  const std::vector<std::string> lines = Lines(DrawSkyline(30, 7, rng));
  ASSERT_EQ(lines.size(), 7u);
  for (const std::string& line : lines) {
    size_t cells = 0;
    for (size_t at = 0; (at = line.find("m \033[0m", at)) != std::string::npos; ++at) ++cells;
    EXPECT_EQ(cells, 30u);
  }
}

}  // namespace
}  // namespace goblin
