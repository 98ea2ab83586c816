#include "core/repl_backlog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

namespace goblin {
namespace {

TEST(ReplBacklogTest, StartsEmptyAtItsOffset) {
  ReplBacklog backlog(16, 101);
  EXPECT_EQ(backlog.first_offset(), 101u);
  EXPECT_EQ(backlog.end_offset(), 101u);
  EXPECT_TRUE(backlog.Holds(101));
  EXPECT_FALSE(backlog.Holds(100));
  EXPECT_FALSE(backlog.Holds(102));
  std::string out;
  EXPECT_EQ(backlog.CopyFrom(101, 100, &out), 0u);
  EXPECT_EQ(out, "");
}

TEST(ReplBacklogTest, KeepsTheNewestBytesAndWraps) {
  ReplBacklog backlog(8, 1);
  backlog.Append("abcdef");
  backlog.Append("ghij");  // wraps: holds offsets 3..10, "cdefghij"
  EXPECT_EQ(backlog.first_offset(), 3u);
  EXPECT_EQ(backlog.end_offset(), 11u);
  std::string out;
  EXPECT_EQ(backlog.CopyFrom(3, 100, &out), 8u);
  EXPECT_EQ(out, "cdefghij");
  out.clear();
  EXPECT_EQ(backlog.CopyFrom(9, 1, &out), 1u);
  EXPECT_EQ(out, "i");
  EXPECT_FALSE(backlog.Holds(2));
  backlog.Append(std::string(20, 'x') + "12345678");  // longer than the ring
  out.clear();
  backlog.CopyFrom(backlog.first_offset(), 100, &out);
  EXPECT_EQ(out, "12345678");
  EXPECT_EQ(backlog.end_offset(), 39u);
}

// A seeded model run: random appends, resizes and reads against the whole stream kept in a
// std::string.
TEST(ReplBacklogTest, RandomizedAgainstTheWholeStream) {
  std::mt19937_64 rng(20261202);
  const uint64_t start = 1 + rng() % 1000;
  ReplBacklog backlog(64, start);
  std::string stream;
  size_t capacity = 64;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t r = static_cast<uint32_t>(rng() % 100);
    if (r < 60) {
      std::string bytes(rng() % (r < 5 ? 300 : 40), '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      backlog.Append(bytes);
      stream += bytes;
    } else if (r < 63) {
      capacity = 1 + rng() % 200;
      backlog.Resize(capacity);
    } else {
      const uint64_t end = start + stream.size();
      const size_t held = backlog.size();
      ASSERT_EQ(backlog.end_offset(), end);
      ASSERT_LE(backlog.size(), backlog.capacity());
      ASSERT_LE(backlog.size(), stream.size());
      const uint64_t offset = backlog.first_offset() + (held == 0 ? 0 : rng() % (held + 1));
      ASSERT_TRUE(backlog.Holds(offset));
      if (backlog.first_offset() > start) {
        ASSERT_FALSE(backlog.Holds(backlog.first_offset() - 1));
      }
      ASSERT_FALSE(backlog.Holds(end + 1));
      const size_t max = rng() % 100;
      std::string out = "prefix";
      const size_t copied = backlog.CopyFrom(offset, max, &out);
      const std::string expected =
          stream.substr(static_cast<size_t>(offset - start), std::min<uint64_t>(max, end - offset));
      ASSERT_EQ(copied, expected.size());
      ASSERT_EQ(out, "prefix" + expected) << "step " << step;
    }
  }
  // After a run of appends the backlog is full and holds exactly the stream's tail.
  backlog.Append(std::string(500, 'z'));
  stream += std::string(500, 'z');
  EXPECT_EQ(backlog.size(), backlog.capacity());
  std::string tail;
  backlog.CopyFrom(backlog.first_offset(), SIZE_MAX, &tail);
  EXPECT_EQ(tail, stream.substr(stream.size() - backlog.capacity()));
}

}  // namespace
}  // namespace goblin
