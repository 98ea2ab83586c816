#include "core/stream_object.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/bytes.h"
#include "core/value_digest.h"
#include "core/value_types.h"

namespace goblin {
namespace {

// A stream of n entries with one group "g": consumer "a" holds the even entries, "b" the odd.
std::unique_ptr<StreamObject> StreamWithGroup(uint64_t n) {
  auto object = std::make_unique<StreamObject>();
  for (uint64_t i = 1; i <= n; ++i) {
    const std::string value = "v" + std::to_string(i);
    const StreamField field{"f", value};
    object->stream().Append(StreamId{i, 0}, std::span(&field, 1));
  }
  ConsumerGroup* group = object->EnsureGroups().Create("g", StreamId::Min(), 0);
  for (uint64_t i = 1; i <= n; ++i) {
    group->AdvanceLastDelivered(object->stream(), StreamId{i, 0});
    group->Deliver(i % 2 == 0 ? "a" : "b", StreamId{i, 0}, 1000 + static_cast<int64_t>(i));
  }
  return object;
}

std::string DigestOf(const Collection& value) {
  ValueDigest digest;
  value.Digest(&digest);
  return digest.Hex();
}

std::unique_ptr<Collection> RoundTrip(const Collection& value) {
  std::string bytes, scratch, what;
  value.AppendSnapshotValue(&bytes, &scratch);
  // AppendSnapshotValue writes [length][value]; the decoder gets the value.
  ByteReader reader(bytes);
  std::string_view inner;
  EXPECT_TRUE(reader.LengthPrefixed(&inner));
  EXPECT_TRUE(reader.done());
  Collection* decoded = StreamObject::DecodeSnapshot(inner, EncodingLimits{}, &what);
  EXPECT_NE(decoded, nullptr) << what;
  return std::unique_ptr<Collection>(decoded);
}

TEST(StreamObjectTest, CloneCopiesGroupsDeeply) {
  auto original = StreamWithGroup(100);
  std::unique_ptr<Collection> copy(original->Clone());
  auto& clone = static_cast<StreamObject&>(*copy);
  EXPECT_EQ(DigestOf(*original), DigestOf(clone));
  ConsumerGroup* group = clone.FindGroup("g");
  ASSERT_NE(group, nullptr);
  const StreamId first{1, 0};
  EXPECT_EQ(group->Ack(std::span(&first, 1)), 1u);
  clone.EnsureGroups().Create("other", StreamId::Min(), kEntriesReadUnknown);
  EXPECT_EQ(original->FindGroup("g")->pending_count(), 100u);
  EXPECT_EQ(original->groups()->size(), 1u);
  EXPECT_EQ(group->pending_count(), 99u);
  EXPECT_NE(DigestOf(*original), DigestOf(clone));
}

TEST(StreamObjectTest, SnapshotKeepsGroupsConsumersAndPendingEntries) {
  auto original = StreamWithGroup(1000);
  original->FindGroup("g")->CreateConsumer("idle", 5);
  original->EnsureGroups().Create("unread", StreamId{7, 0}, kEntriesReadUnknown);
  std::unique_ptr<Collection> decoded = RoundTrip(*original);
  auto& restored = static_cast<StreamObject&>(*decoded);
  EXPECT_EQ(DigestOf(*original), DigestOf(restored));
  ASSERT_NE(restored.groups(), nullptr);
  EXPECT_TRUE(restored.groups()->CheckInvariants());
  EXPECT_EQ(restored.groups()->size(), 2u);
  const ConsumerGroup* group = restored.FindGroup("g");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->pending_count(), 1000u);
  EXPECT_EQ(group->entries_read(), 1000);
  EXPECT_EQ(group->last_delivered_id(), (StreamId{1000, 0}));
  EXPECT_EQ(group->consumer_count(), 3u);
  const auto entry = group->FindPending(StreamId{10, 0});
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->consumer, "a");
  EXPECT_EQ(entry->delivery_time_ms, 1010);
  EXPECT_EQ(entry->delivery_count, 1u);
  EXPECT_EQ(restored.FindGroup("unread")->entries_read(), kEntriesReadUnknown);
}

TEST(StreamObjectTest, StreamWithoutGroupsPaysNoGroupBytes) {
  StreamObject plain;
  const StreamField field{"f", "v"};
  plain.stream().Append(StreamId{1, 0}, std::span(&field, 1));
  EXPECT_EQ(plain.groups(), nullptr);
  std::unique_ptr<Collection> decoded = RoundTrip(plain);
  EXPECT_EQ(static_cast<StreamObject&>(*decoded).groups(), nullptr);
  EXPECT_EQ(DigestOf(plain), DigestOf(*decoded));
}

TEST(StreamObjectTest, DigestSeesGroupState) {
  auto a = StreamWithGroup(10);
  auto b = StreamWithGroup(10);
  EXPECT_EQ(DigestOf(*a), DigestOf(*b));
  b->FindGroup("g")->Redeliver(StreamId{3, 0}, 2000);  // a delivery count changes
  EXPECT_NE(DigestOf(*a), DigestOf(*b));
  auto c = StreamWithGroup(10);
  c->FindGroup("g")->SetId(StreamId{4, 0}, 4);
  EXPECT_NE(DigestOf(*a), DigestOf(*c));
}

TEST(StreamObjectTest, CorruptGroupBytesAreRefused) {
  auto original = StreamWithGroup(20);
  std::string bytes, scratch, what;
  original->AppendSnapshotValue(&bytes, &scratch);
  ByteReader reader(bytes);
  std::string_view inner;
  ASSERT_TRUE(reader.LengthPrefixed(&inner));
  std::string cut(inner.substr(0, inner.size() - 3));
  EXPECT_EQ(StreamObject::DecodeSnapshot(cut, EncodingLimits{}, &what), nullptr);
  EXPECT_EQ(what, "malformed stream consumer groups");
}

}  // namespace
}  // namespace goblin
