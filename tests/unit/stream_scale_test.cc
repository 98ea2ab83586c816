// A stream and a consumer group at a million entries, against plain std:: containers: the
// work-queue pattern (entries appended four per millisecond, delivered in batches to three
// consumers as XREADGROUP > does, acknowledged out of order, some deleted, some claimed by
// another consumer, the head trimmed as MAXLEN ~ does). Everything is compared at checkpoints.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/stream.h"
#include "core/stream_groups.h"

namespace goblin {
namespace {

struct Pending {
  std::string consumer;
  uint64_t count;
};

TEST(StreamScaleTest, MillionEntriesWithAGroupMatchModel) {
  constexpr uint64_t kEntries = 1'000'000;
  constexpr uint64_t kCheckEvery = 100'000;
  const char* consumers[] = {"alice", "bob", "carol"};
  std::mt19937_64 rng(20261202);
  auto below = [&](uint64_t n) { return rng() % n; };

  Stream stream;
  StreamGroups groups;
  ConsumerGroup* group = groups.Create("workers", StreamId::Min(), 0);
  std::map<StreamId, std::string> entries;  // the live entries: id -> value
  std::map<StreamId, Pending> pel;
  std::vector<StreamId> pending_ids;  // ids once delivered (maybe acked since), to pick from
  StreamId last_delivered;
  int64_t now = 1'700'000'000'000;

  auto check = [&] {
    ASSERT_TRUE(stream.CheckInvariants());
    ASSERT_TRUE(groups.CheckInvariants());
    ASSERT_EQ(stream.size(), entries.size());
    ASSERT_EQ(group->pending_count(), pel.size());
    ASSERT_EQ(group->last_delivered_id(), last_delivered);
    // The whole PEL, in order, with owners and counts.
    const auto got =
        group->PendingRange(StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, 0, now);
    ASSERT_EQ(got.size(), pel.size());
    auto it = pel.begin();
    for (const PendingEntry& entry : got) {
      ASSERT_EQ(entry.id, it->first);
      ASSERT_EQ(entry.consumer, it->second.consumer);
      ASSERT_EQ(entry.delivery_count, it->second.count);
      ++it;
    }
    // Each consumer's count, and a window of the stream from a random live id.
    for (const char* name : consumers) {
      uint64_t own = 0;
      for (const auto& [id, p] : pel) own += p.consumer == name ? 1 : 0;
      const auto info = group->FindConsumer(name);
      ASSERT_EQ(info ? info->pending : 0, own);
    }
    if (!entries.empty()) {
      auto from = entries.begin();
      std::advance(from, static_cast<ptrdiff_t>(below(entries.size())));
      std::vector<std::pair<StreamId, std::string>> window;
      stream.Range(from->first, StreamId::Max(), false, 50, [&](const StreamEntryView& e) {
        window.emplace_back(e.id, std::string(e.fields[0].second));
        return true;
      });
      auto m = from;
      for (const auto& [id, value] : window) {
        ASSERT_EQ(id, m->first);
        ASSERT_EQ(value, m->second);
        ++m;
      }
      ASSERT_TRUE(window.size() == 50 || m == entries.end());
    }
  };

  for (uint64_t i = 0; i < kEntries; ++i) {
    ++now;
    const StreamId id{1 + i / 4, i % 4};
    const std::string value = std::to_string(rng());
    const StreamField field{"f", value};
    stream.Append(id, {&field, 1});
    entries[id] = value;

    const uint64_t op = below(100);
    if (op < 25) {  // XREADGROUP COUNT 4 >: a batch to one consumer
      const char* name = consumers[below(3)];
      stream.Range(last_delivered.Next(), StreamId::Max(), false, 4, [&](const StreamEntryView& e) {
        group->AdvanceLastDelivered(stream, e.id);
        group->Deliver(name, e.id, now);
        last_delivered = e.id;
        pel[e.id] = Pending{name, 1};
        pending_ids.push_back(e.id);
        return true;
      });
    } else if (op < 50 && !pending_ids.empty()) {  // XACK of a delivered id, maybe acked before
      const size_t at = below(pending_ids.size());
      const StreamId id = pending_ids[at];
      pending_ids[at] = pending_ids.back();
      pending_ids.pop_back();
      ASSERT_EQ(group->Ack({&id, 1}), pel.erase(id));
    } else if (op < 53 && !entries.empty()) {  // XDEL of a live entry (pending or not)
      auto it = entries.lower_bound(StreamId{1 + below(1 + i / 4), 0});
      if (it != entries.end()) {
        ASSERT_TRUE(stream.Delete(it->first));
        entries.erase(it);
      }
    } else if (op < 56 && !pending_ids.empty()) {  // XCLAIM by another consumer
      const StreamId id = pending_ids[below(pending_ids.size())];
      const char* name = consumers[below(3)];
      ClaimOptions options;
      options.now_ms = now;
      options.delivery_time_ms = now;
      const bool in_stream = entries.count(id) == 1;
      const ClaimResult result = group->Claim(id, name, options, in_stream);
      auto p = pel.find(id);
      if (p == pel.end()) {
        ASSERT_EQ(result, ClaimResult::kNotPending);
      } else if (!in_stream) {
        ASSERT_EQ(result, ClaimResult::kRemoved);
        pel.erase(p);
      } else {
        ASSERT_EQ(result, ClaimResult::kClaimed);
        p->second = Pending{name, p->second.count + 1};
      }
    }
    if (i % 1000 == 999 && entries.size() > 500'000) {  // MAXLEN ~ 500000
      const size_t removed = stream.TrimMaxLen(500'000, true, 0);
      ASSERT_LE(removed, entries.size() - 500'000);  // never more than the exact trim
      for (size_t n = 0; n < removed; ++n) entries.erase(entries.begin());
      ASSERT_EQ(stream.size(), entries.size());
    }
    if (i % kCheckEvery == kCheckEvery - 1) {
      SCOPED_TRACE("after " + std::to_string(i + 1) + " entries");
      check();
      if (HasFatalFailure()) return;
    }
  }
  // XAUTOCLAIM sweeps the rest to one consumer: entries gone from the stream leave the PEL.
  StreamId cursor = StreamId::Min();
  do {
    const AutoClaimResult r = group->AutoClaim("carol", cursor, 1000, 0, now, false, [&](StreamId id) {
      return entries.count(id) == 1;
    });
    for (const StreamId& id : r.deleted) ASSERT_EQ(pel.erase(id), 1u);
    for (const StreamId& id : r.claimed) {
      Pending& p = pel.at(id);
      p = Pending{"carol", p.count + 1};
    }
    cursor = r.next;
  } while (cursor != StreamId::Min());
  check();
  for (const auto& [id, p] : pel) ASSERT_EQ(entries.count(id), 1u);
  std::printf("%zu live entries, %zu pending at the end\n", entries.size(), pel.size());
}

}  // namespace
}  // namespace goblin
