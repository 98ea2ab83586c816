// InputBuffer: pending bytes survive every grow, slide and resize; the resize rules give room
// back only when Redis's query-buffer rules say so.
#include "server/input_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace goblin {
namespace {

void Append(InputBuffer* buffer, std::string_view bytes) {
  char* target = buffer->PrepareWrite(bytes.size());
  std::memcpy(target, bytes.data(), bytes.size());
  buffer->CommitWrite(bytes.size());
}

TEST(InputBufferTest, MatchesAStringUnderRandomReadsConsumesAndResizes) {
  std::mt19937_64 rng(20261202);
  InputBuffer buffer;
  std::string model;
  for (int step = 0; step < 20000; ++step) {
    switch (rng() % 4) {
      case 0: {
        std::string bytes(rng() % 70000, static_cast<char>('a' + rng() % 26));
        Append(&buffer, bytes);
        model += bytes;
        break;
      }
      case 1: {
        size_t n = model.empty() ? 0 : rng() % (model.size() + 1);
        buffer.Consume(n);
        model.erase(0, n);
        break;
      }
      case 2:
        buffer.ResizeForIdleOrPeak(rng() % 2 == 0, rng() % 2 == 0 ? 0 : model.size() + 100);
        break;
      default:
        buffer.ShrinkIfEmpty(4096);
        break;
    }
    ASSERT_EQ(buffer.pending(), model) << "step " << step;
    ASSERT_GE(buffer.capacity(), model.size());
  }
}

TEST(InputBufferTest, IdleEmptyBufferIsReleased) {
  InputBuffer buffer;
  Append(&buffer, std::string(100000, 'x'));
  buffer.Consume(100000);
  ASSERT_GT(buffer.capacity(), 0u);
  buffer.ResizeForIdleOrPeak(true, 0);
  EXPECT_EQ(buffer.capacity(), 0u);
}

TEST(InputBufferTest, IdleBufferIsCutToItsPendingBytesOnlyBelowHalfPeak) {
  InputBuffer buffer;
  Append(&buffer, std::string(100000, 'x'));
  buffer.Consume(99000);
  // The peak of this period (100000 bytes) is more than half the room: kept.
  const size_t before = buffer.capacity();
  buffer.ResizeForIdleOrPeak(true, 0);
  EXPECT_EQ(buffer.capacity(), before);
  // Next period the peak is the 1000 pending bytes: cut to them.
  buffer.ResizeForIdleOrPeak(true, 0);
  EXPECT_EQ(buffer.capacity(), 1000u);
  EXPECT_EQ(buffer.pending(), std::string(1000, 'x'));
}

TEST(InputBufferTest, BusyBufferKeepsTheBulkBeingRead) {
  InputBuffer buffer;
  Append(&buffer, std::string(200000, 'x'));
  buffer.Consume(199000);
  buffer.ResetPeak();
  buffer.ResizeForIdleOrPeak(false, 50000);
  EXPECT_EQ(buffer.capacity(), 50000u);
  EXPECT_EQ(buffer.size(), 1000u);
  // Small buffers, or ones wasting under 4 KB, stay as they are.
  InputBuffer small;
  Append(&small, std::string(10, 'x'));
  const size_t capacity = small.capacity();
  small.ResizeForIdleOrPeak(false, 0);
  EXPECT_EQ(small.capacity(), capacity);
}

}  // namespace
}  // namespace goblin
