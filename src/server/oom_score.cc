#include "server/oom_score.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "server/log.h"

namespace goblin {

namespace {

constexpr char kProcFile[] = "/proc/self/oom_score_adj";

}  // namespace

bool OomScore::Apply(std::string_view mode, std::string_view values, Role role) {
  int score;
  if (mode != "no") {
    if (!adjusted_) {
      std::ifstream in(kProcFile);
      if (!(in >> base_)) {
        LogWarning(std::string("Unable to read oom_score_adj: ") + std::strerror(errno));
        return false;
      }
      adjusted_ = true;
    }
    std::istringstream words{std::string(values)};
    int scores[3] = {0, 0, 0};
    words >> scores[0] >> scores[1] >> scores[2];  // validated by the config table
    score = scores[role];
    if (mode != "absolute") score += base_;
    score = std::clamp(score, -1000, 1000);
  } else if (adjusted_) {
    adjusted_ = false;
    score = base_;
  } else {
    return true;
  }
  std::ofstream out(kProcFile);
  if (!(out << score << "\n") || !out.flush()) {
    LogWarning(std::string("Unable to write oom_score_adj: ") + std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace goblin
