// RenderSparkline: the chart redis-server 7.0 drew for LATENCY GRAPH of three samples (50, 20
// and 30 ms, 2, 1 and 0 s ago), its continuation past the column limit, and seeded series
// checked for the chart's properties.
#include "core/sparkline.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace goblin {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SparklineTest, TheChartRedisDrew) {
  const std::vector<SparklineSample> samples = {{50, "2s"}, {20, "1s"}, {30, "0s"}};
  EXPECT_EQ(RenderSparkline(samples, 80, 4), "#  \n|  \n| o\n|_|\n   \n210\nsss\n");
}

TEST(SparklineTest, LongSeriesContinueBelow) {
  const std::vector<SparklineSample> samples = {{50, "2s"}, {20, "1s"}, {30, "0s"}};
  EXPECT_EQ(RenderSparkline(samples, 2, 4),
            "# \n| \n| \n|_\n  \n21\nss\n"
            "\n \n \no\n|\n \n0\ns\n");
}

TEST(SparklineTest, EqualValuesAndNoLabels) {
  EXPECT_EQ(RenderSparkline({{7, ""}, {7, ""}}, 80, 2), "  \n__\n");
  EXPECT_EQ(RenderSparkline({}, 80, 4), "");
}

TEST(SparklineTest, LabelsOfDifferentLengths) {
  EXPECT_EQ(RenderSparkline({{0, "12m"}, {1, ""}, {2, "5s"}}, 80, 1), "_o#\n   \n1 5\n2 s\nm  \n");
}

TEST(SparklineTest, SeededSeriesKeepTheirOrderOfHeights) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    const int rows = 1 + static_cast<int>(rng() % 6);
    std::vector<SparklineSample> samples(1 + rng() % 60);
    for (auto& sample : samples) sample.value = static_cast<double>(rng() % 1000);
    const std::vector<std::string> lines = Lines(RenderSparkline(samples, 80, rows));
    ASSERT_EQ(lines.size(), static_cast<size_t>(rows)) << seed;
    // A column's height in thirds of a line, read back from the picture.
    auto height = [&](size_t column) {
      int thirds = 0;
      for (int row = 0; row < rows; ++row) {
        const char c = lines[static_cast<size_t>(row)][column];
        const int below = (rows - 1 - row) * 3;
        if (c == '|') thirds = std::max(thirds, below + 3);
        if (c == '_' || c == 'o' || c == '#') {
          EXPECT_EQ(thirds, 0) << "seed " << seed << ": a glyph under a filled cell";
          thirds = below + (c == '_' ? 1 : c == 'o' ? 2 : 3);
        }
      }
      return thirds;
    };
    double min = samples[0].value, max = samples[0].value;
    for (const auto& s : samples) min = std::min(min, s.value), max = std::max(max, s.value);
    for (size_t i = 0; i < samples.size(); ++i) {
      ASSERT_GE(height(i), 1) << seed;
      if (samples[i].value == max && max > min) {
        EXPECT_EQ(height(i), 3 * rows) << seed;
      }
      if (samples[i].value == min) {
        EXPECT_EQ(height(i), 1) << seed;
      }
      for (size_t j = 0; j < samples.size(); ++j) {
        if (samples[i].value < samples[j].value) {
          EXPECT_LE(height(i), height(j)) << seed;
        }
      }
    }
  }
}

}  // namespace
}  // namespace goblin
