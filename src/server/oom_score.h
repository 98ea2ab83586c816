// oom-score-adj and oom-score-adj-values: which of Goblin's processes the kernel's OOM killer
// takes first, set as Redis sets it.
//
// oom-score-adj-values holds three scores: a master's, a replica's, a background child's (a
// snapshot or AOF rewrite, which may be killed with the least loss). Each is written to
// /proc/self/oom_score_adj as it is with "absolute", added to the score the process had before
// Goblin first changed it with "yes" or "relative", and clamped to the kernel's [-1000, 1000].
// "no" leaves the score alone, or puts that first score back if Goblin had changed it.
#pragma once

#include <string_view>

namespace goblin {

class OomScore {
 public:
  enum Role { kMaster = 0, kReplica = 1, kBackgroundChild = 2 };

  // Writes the score of role under mode (oom-score-adj) and values (oom-score-adj-values, three
  // integers). Returns false, with a warning logged, when the score cannot be read or written.
  bool Apply(std::string_view mode, std::string_view values, Role role);

 private:
  bool adjusted_ = false;  // Goblin has written a score: base_ holds the one before
  int base_ = 0;
};

}  // namespace goblin
