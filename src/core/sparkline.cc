#include "core/sparkline.h"

#include <algorithm>
#include <cmath>

namespace goblin {

namespace {

// A line's cell filled a third, two thirds or fully; a cell under the top one is '|'.
constexpr char kGlyphs[] = "_o#";
constexpr int kLevelsPerRow = 3;

}  // namespace

std::string RenderSparkline(const std::vector<SparklineSample>& samples, int columns, int rows) {
  std::string out;
  if (samples.empty()) return out;
  double min = samples[0].value, max = samples[0].value;
  bool labelled = false;
  for (const SparklineSample& sample : samples) {
    min = std::min(min, sample.value);
    max = std::max(max, sample.value);
    labelled = labelled || !sample.label.empty();
  }
  const double range = max > min ? max - min : 1;
  const int levels = kLevelsPerRow * rows;
  std::vector<int> level(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    // Whole levels first, then the share of the range: the top sample reaches the top cell.
    const double scaled = std::floor((samples[i].value - min) * levels) / range;
    level[i] = scaled >= levels - 1 ? levels - 1 : static_cast<int>(scaled);
  }
  const size_t width = static_cast<size_t>(columns);
  for (size_t first = 0; first < samples.size(); first += width) {
    const size_t end = std::min(samples.size(), first + width);
    if (first != 0) out += '\n';
    for (int row = 0; row < rows; ++row) {
      const int below = (rows - 1 - row) * kLevelsPerRow;  // levels under this line
      for (size_t i = first; i < end; ++i) {
        const int above = level[i] - below;
        out += above < 0 ? ' ' : above < kLevelsPerRow ? kGlyphs[above] : '|';
      }
      out += '\n';
    }
    if (!labelled) continue;
    out.append(end - first, ' ');
    out += '\n';
    for (size_t line = 0;; ++line) {
      std::string text(end - first, ' ');
      bool any = false;
      for (size_t i = first; i < end; ++i) {
        if (line < samples[i].label.size()) {
          text[i - first] = samples[i].label[line];
          any = true;
        }
      }
      if (!any) break;
      out += text;
      out += '\n';
    }
  }
  return out;
}

}  // namespace goblin
