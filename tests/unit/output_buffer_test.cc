// OutputBuffer: the unsent bytes match a plain string under random appends, writes, truncations
// and clears, and written blocks are freed as they go.
#include "resp/output_buffer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace goblin {
namespace {

// What a writev of the gathered blocks would send, up to max bytes.
std::string Gathered(const OutputBuffer& buffer, size_t max_vectors) {
  std::vector<iovec> vectors(max_vectors);
  const size_t count = buffer.Gather(vectors.data(), vectors.size());
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    EXPECT_GT(vectors[i].iov_len, 0u);
    out.append(static_cast<const char*>(vectors[i].iov_base), vectors[i].iov_len);
  }
  return out;
}

TEST(OutputBufferTest, MatchesAStringUnderRandomOperations) {
  std::mt19937_64 random(20240611);
  OutputBuffer buffer;
  std::string model;
  uint64_t consumed = 0;
  auto size_up_to = [&](size_t max) { return static_cast<size_t>(random() % (max + 1)); };
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(random() % 100);
    if (op < 40) {
      // Mostly small replies, sometimes one larger than a block.
      const size_t length =
          random() % 10 == 0 ? size_up_to(3 * OutputBuffer::kBlockSize) : size_up_to(64);
      std::string bytes(length, static_cast<char>('a' + step % 26));
      if (length > 0) bytes[length - 1] = '\r';
      buffer.append(bytes);
      model += bytes;
    } else if (op < 50) {
      const char c = static_cast<char>('A' + step % 26);
      buffer.push_back(c);
      model.push_back(c);
    } else if (op < 70) {
      const size_t count = size_up_to(model.size());
      buffer.Consume(count);
      model.erase(0, count);
      consumed += count;
    } else if (op < 78) {
      const size_t count = size_up_to(model.size());
      buffer.Truncate(count);
      model.resize(count);
    } else if (op < 80) {
      consumed += model.size();
      buffer.clear();
      model.clear();
    } else if (op < 85) {
      OutputBuffer other;
      const std::string bytes(size_up_to(100), 'o');
      other.append(bytes);
      other.Consume(std::min<size_t>(bytes.size(), 3));
      buffer.append(other);
      model += bytes.substr(std::min<size_t>(bytes.size(), 3));
    } else if (!model.empty()) {
      const size_t pos = size_up_to(model.size() - 1);
      ASSERT_EQ(buffer.at(pos), model[pos]);
      ASSERT_EQ(buffer.find('\r', pos), model.find('\r', pos));
      ASSERT_EQ(buffer.substr(pos, 100), model.substr(pos, 100));
    }
    ASSERT_EQ(buffer.size(), model.size()) << "step " << step;
    ASSERT_EQ(buffer.consumed(), consumed);
    ASSERT_EQ(buffer.end_position(), consumed + model.size());
    // Written blocks are freed: what is held is what is unsent, plus at most the partly
    // written head and the partly filled tail.
    ASSERT_LE(buffer.allocated(), model.size() + 2 * (3 * OutputBuffer::kBlockSize));
    if (step % 16 == 0) {
      ASSERT_EQ(buffer.ToString(), model) << "step " << step;
      const std::string gathered = Gathered(buffer, 4);
      ASSERT_EQ(gathered, model.substr(0, gathered.size()));
      if (buffer.blocks() <= 4) {
        ASSERT_EQ(gathered, model);
      }
    }
  }
}

TEST(OutputBufferTest, AnAppendLargerThanABlockFillsTheTailAndTakesOneBlockForTheRest) {
  OutputBuffer buffer;
  buffer.append("$1048576\r\n");
  const std::string value(1 << 20, 'v');
  buffer.append(value);
  EXPECT_EQ(buffer.blocks(), 2u);
  EXPECT_EQ(buffer.allocated(), 10 + value.size());
  EXPECT_EQ(buffer.size(), 10 + value.size());
}

TEST(OutputBufferTest, ADrainedBufferKeepsOneStandardBlockAndNoLargeOne) {
  OutputBuffer buffer;
  for (int i = 0; i < 64; ++i) buffer.append(std::string(1 << 20, 'x'));
  EXPECT_GE(buffer.allocated(), 64u << 20);
  buffer.Consume(32u << 20);
  EXPECT_LE(buffer.allocated(), (32u << 20) + OutputBuffer::kBlockSize);
  buffer.Consume(buffer.size());
  EXPECT_EQ(buffer.allocated(), 0u);  // the last block was a large one
  buffer.append("+OK\r\n");
  buffer.Consume(5);
  EXPECT_EQ(buffer.allocated(), OutputBuffer::kBlockSize);
  EXPECT_EQ(buffer.blocks(), 1u);
  EXPECT_TRUE(buffer.empty());
}

TEST(OutputBufferTest, ReleaseIfEmptyGivesTheKeptBlockBackOnlyWhenNothingIsUnsent) {
  OutputBuffer buffer;
  EXPECT_FALSE(buffer.ReleaseIfEmpty());  // nothing allocated yet
  buffer.append("+OK\r\n");
  EXPECT_FALSE(buffer.ReleaseIfEmpty());  // unsent bytes stay
  EXPECT_EQ(buffer.ToString(), "+OK\r\n");
  buffer.Consume(5);
  EXPECT_EQ(buffer.allocated(), OutputBuffer::kBlockSize);
  EXPECT_TRUE(buffer.ReleaseIfEmpty());
  EXPECT_EQ(buffer.allocated(), 0u);
  EXPECT_EQ(buffer.blocks(), 0u);
  const uint64_t end = buffer.end_position();
  buffer.append(":1\r\n");  // a later reply takes a new block; positions go on
  EXPECT_EQ(buffer.ToString(), ":1\r\n");
  EXPECT_EQ(buffer.end_position(), end + 4);
}

TEST(OutputBufferTest, MovesTakeTheBlocks) {
  OutputBuffer buffer;
  buffer.append("hello");
  OutputBuffer moved(std::move(buffer));
  EXPECT_EQ(moved.ToString(), "hello");
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.allocated(), 0u);
  buffer = std::move(moved);
  EXPECT_EQ(buffer.ToString(), "hello");
}

}  // namespace
}  // namespace goblin
