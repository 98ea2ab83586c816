// A series of samples drawn as an ASCII chart, the picture LATENCY GRAPH shows.
//
// Each sample is one column, `rows` lines high; the column's height is the sample's place
// between the series' minimum and maximum, in thirds of a line: a partly filled top cell
// shows '_', 'o' or '#' (a third, two thirds, full) and the full cells under it '|'.
// Below the chart, after one blank line, each sample's label is written downwards in its
// column. A series longer than `columns` continues in further charts, a blank line apart.
//
//   #            three samples, 50, 20 and 30, rows = 4:
//   |            50 is the top level, 20 the bottom one, 30 a third of the way
//   | o
//   |_|
//
//   210
//   sss
#pragma once

#include <string>
#include <vector>

namespace goblin {

struct SparklineSample {
  double value;
  std::string label;  // empty: none
};

// The chart of samples, every line ending in '\n'. REQUIRES: columns > 0, rows > 0.
std::string RenderSparkline(const std::vector<SparklineSample>& samples, int columns, int rows);

}  // namespace goblin
