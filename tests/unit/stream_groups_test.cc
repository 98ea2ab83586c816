#include "core/stream_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace goblin {
namespace {

// --- The model: plain std:: containers with Redis 7.2's rules written out directly. ---

struct ModelPending {
  std::string consumer;
  int64_t time = 0;
  uint64_t count = 0;
};
struct ModelConsumer {
  int64_t seen = 0;
  int64_t active = -1;
  std::set<StreamId> pel;
};
struct ModelGroup {
  StreamId last;
  int64_t entries_read = kEntriesReadUnknown;
  std::map<StreamId, ModelPending> pel;
  std::map<std::string, ModelConsumer> consumers;

  ModelConsumer& Ensure(const std::string& name, int64_t now) {
    auto it = consumers.find(name);
    if (it == consumers.end()) it = consumers.emplace(name, ModelConsumer{now, -1, {}}).first;
    return it->second;
  }
  void Move(StreamId id, const std::string& to) {
    ModelPending& p = pel.at(id);
    consumers.at(p.consumer).pel.erase(id);
    p.consumer = to;
    consumers.at(to).pel.insert(id);
  }
  void Erase(StreamId id) {
    consumers.at(pel.at(id).consumer).pel.erase(id);
    pel.erase(id);
  }
};
using Model = std::map<std::string, ModelGroup>;

void CheckGroup(const ConsumerGroup& group, const ModelGroup& model, int64_t now) {
  ASSERT_TRUE(group.CheckInvariants());
  ASSERT_EQ(group.last_delivered_id(), model.last);
  ASSERT_EQ(group.entries_read(), model.entries_read);
  ASSERT_EQ(group.pending_count(), model.pel.size());
  ASSERT_EQ(group.consumer_count(), model.consumers.size());

  const auto all =
      group.PendingRange(StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, 0, now);
  ASSERT_EQ(all.size(), model.pel.size());
  auto it = model.pel.begin();
  for (const PendingEntry& e : all) {
    ASSERT_EQ(e.id, it->first);
    ASSERT_EQ(e.consumer, it->second.consumer);
    ASSERT_EQ(e.delivery_time_ms, it->second.time);
    ASSERT_EQ(e.delivery_count, it->second.count);
    ++it;
  }

  const PendingSummary summary = group.Summary();
  ASSERT_EQ(summary.count, model.pel.size());
  if (!model.pel.empty()) {
    ASSERT_EQ(summary.min_id, model.pel.begin()->first);
    ASSERT_EQ(summary.max_id, model.pel.rbegin()->first);
  }
  std::vector<std::pair<std::string_view, uint64_t>> expected_counts;
  for (const auto& [name, c] : model.consumers) {
    if (!c.pel.empty()) expected_counts.emplace_back(name, c.pel.size());
  }
  ASSERT_EQ(summary.consumers, expected_counts);

  auto mc = model.consumers.begin();
  size_t visited = 0;
  group.ForEachConsumer([&](const ConsumerInfo& info) {
    ASSERT_NE(mc, model.consumers.end());
    EXPECT_EQ(info.name, mc->first);
    EXPECT_EQ(info.seen_time_ms, mc->second.seen);
    EXPECT_EQ(info.active_time_ms, mc->second.active);
    EXPECT_EQ(info.pending, mc->second.pel.size());
    ++mc;
    ++visited;
  });
  ASSERT_EQ(visited, model.consumers.size());
  for (const auto& [name, c] : model.consumers) {
    const auto ids = group.ConsumerPendingFrom(name, StreamId::Min(), 0);
    ASSERT_EQ(ids, std::vector<StreamId>(c.pel.begin(), c.pel.end())) << name;
  }
}

void CheckAll(const StreamGroups& groups, const Model& model, int64_t now) {
  ASSERT_TRUE(groups.CheckInvariants());
  ASSERT_EQ(groups.size(), model.size());
  std::vector<std::string> names;
  groups.ForEach([&](std::string_view name, const ConsumerGroup&) { names.emplace_back(name); });
  auto m = model.begin();
  for (const std::string& name : names) {
    ASSERT_EQ(name, m->first);
    ++m;
  }
  for (const auto& [name, mg] : model) {
    const ConsumerGroup* g = groups.Find(name);
    ASSERT_NE(g, nullptr);
    ASSERT_NO_FATAL_FAILURE(CheckGroup(*g, mg, now)) << "group " << name;
  }
}

struct RandomRun {
  uint32_t seed;
  size_t steps;
  size_t leaf_capacity;
  int consumer_names;            // over 64 makes consumers share mask bits
  uint64_t destroy_one_in = 30;  // how rare XGROUP DESTROY is, so PELs grow large
  uint64_t ack_batch = 2;        // XACK takes 1 to this many ids
};

class StreamGroupsModelTest : public ::testing::TestWithParam<RandomRun> {};

TEST_P(StreamGroupsModelTest, MatchesModel) {
  const RandomRun run = GetParam();
  std::mt19937_64 rng(run.seed);
  auto rand = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  StreamGroups groups(run.leaf_capacity);
  Model model;
  std::set<StreamId> gone;  // ids "deleted from the stream" (for claims' in_stream)
  int64_t now = 1000;
  auto random_id = [&] { return StreamId{1 + rand(500), rand(3)}; };
  auto group_name = [&] { return "g" + std::to_string(rand(3)); };
  auto consumer_name = [&] { return "c" + std::to_string(rand(run.consumer_names)); };
  // An id often pending in the model group.
  auto pick_id = [&](const ModelGroup& mg) {
    if (!mg.pel.empty() && rand(3) != 0) {
      auto it = mg.pel.lower_bound(random_id());
      if (it == mg.pel.end()) it = mg.pel.begin();
      return it->first;
    }
    return random_id();
  };
  auto in_stream = [&](StreamId id) { return gone.count(id) == 0; };
  size_t counts[16] = {};
  size_t max_pending = 0;

  for (size_t step = 0; step < run.steps; ++step) {
    SCOPED_TRACE("seed " + std::to_string(run.seed) + " step " + std::to_string(step));
    now += static_cast<int64_t>(rand(40));
    const std::string gname = group_name();
    ConsumerGroup* g = groups.Find(gname);
    auto mit = model.find(gname);
    ASSERT_EQ(g == nullptr, mit == model.end());
    const uint64_t op = rand(100);
    if (g == nullptr || op < 2) {
      const StreamId id = random_id();
      const int64_t er = rand(2) ? kEntriesReadUnknown : static_cast<int64_t>(rand(1000));
      ConsumerGroup* created = groups.Create(gname, id, er);
      ASSERT_EQ(created == nullptr, mit != model.end());
      if (created) model.emplace(gname, ModelGroup{id, er, {}, {}});
      ++counts[0];
    } else if (op < 3 && rand(run.destroy_one_in) == 0) {
      ASSERT_TRUE(groups.Destroy(gname));
      model.erase(mit);
      ASSERT_FALSE(groups.Destroy(gname));
      ++counts[1];
    } else {
      ModelGroup& mg = mit->second;
      const std::string cname = consumer_name();
      if (op < 9) {
        const bool created = g->CreateConsumer(cname, now);
        ASSERT_EQ(created, mg.consumers.count(cname) == 0);
        mg.Ensure(cname, now);
        ++counts[2];
      } else if (op < 12) {
        const bool created = g->SeeConsumer(cname, now);
        ASSERT_EQ(created, mg.consumers.count(cname) == 0);
        mg.Ensure(cname, now).seen = now;
        ++counts[3];
      } else if (op < 13) {
        const auto had = g->DeleteConsumer(cname);
        auto c = mg.consumers.find(cname);
        if (c == mg.consumers.end()) {
          ASSERT_FALSE(had.has_value());
        } else {
          ASSERT_EQ(had, c->second.pel.size());
          for (const StreamId id : c->second.pel) mg.pel.erase(id);
          mg.consumers.erase(c);
        }
        ++counts[4];
      } else if (op < 17) {
        const StreamId id = random_id();
        const int64_t er = rand(2) ? kEntriesReadUnknown : static_cast<int64_t>(rand(1000));
        g->SetId(id, er);
        mg.last = id;
        mg.entries_read = er;
        ++counts[5];
      } else if (op < 47) {
        const StreamId id = rand(4) == 0 ? pick_id(mg) : random_id();
        g->Deliver(cname, id, now);
        ModelConsumer& c = mg.Ensure(cname, now);
        if (mg.pel.count(id)) {
          mg.Move(id, cname);
        } else {
          mg.pel[id] = ModelPending{cname, 0, 0};
          c.pel.insert(id);
        }
        mg.pel[id].time = now;
        mg.pel[id].count = 1;
        c.active = now;
        ++counts[6];
      } else if (op < 52) {
        const StreamId id = pick_id(mg);
        const bool pending = mg.pel.count(id) > 0;
        ASSERT_EQ(g->Redeliver(id, now), pending);
        if (pending) {
          mg.pel[id].time = now;
          ++mg.pel[id].count;
        }
        ++counts[7];
      } else if (op < 62) {
        std::vector<StreamId> ids;
        for (uint64_t n = 1 + rand(run.ack_batch); n > 0; --n) ids.push_back(pick_id(mg));
        size_t expected = 0;
        for (const StreamId id : ids) {
          if (mg.pel.count(id)) {
            mg.Erase(id);
            ++expected;
          }
        }
        ASSERT_EQ(g->Ack(ids), expected);
        ++counts[8];
      } else if (op < 65) {
        const StreamId id = pick_id(mg);
        const bool pending = mg.pel.count(id) > 0;
        ASSERT_EQ(g->Remove(id), pending);
        if (pending) mg.Erase(id);
        if (rand(2)) gone.insert(id);  // the stream entry goes too, sometimes
        ++counts[9];
      } else if (op < 75) {
        const StreamId id = pick_id(mg);
        ClaimOptions options;
        options.now_ms = now;
        options.min_idle_ms = rand(2) ? 0 : static_cast<int64_t>(rand(200));
        options.delivery_time_ms = now - static_cast<int64_t>(rand(3) ? 0 : rand(100));
        if (rand(4) == 0) {  // small, or past the 32 bits a record holds, or about to wrap
          const uint64_t kind = rand(3);
          options.retry_count = kind == 0   ? rand(10)
                                : kind == 1 ? (uint64_t{1} << 33) + rand(3)
                                            : UINT64_MAX - rand(2);
        }
        options.increment_count = rand(3) != 0;
        options.force = rand(3) == 0;
        const bool exists = in_stream(id);
        const ClaimResult result = g->Claim(id, cname, options, exists);
        ClaimResult expected;
        auto p = mg.pel.find(id);
        bool update = false;
        if (p == mg.pel.end()) {
          if (!options.force || !exists) {
            expected = ClaimResult::kNotPending;
          } else {
            mg.Ensure(cname, now).pel.insert(id);
            mg.pel[id] = ModelPending{cname, now, 1};
            expected = ClaimResult::kClaimed;
            update = true;
          }
        } else if (!exists) {
          mg.Erase(id);
          expected = ClaimResult::kRemoved;
        } else if (options.min_idle_ms > 0 && now - p->second.time < options.min_idle_ms) {
          expected = ClaimResult::kTooRecent;
        } else {
          mg.Ensure(cname, now);
          mg.Move(id, cname);
          expected = ClaimResult::kClaimed;
          update = true;
        }
        if (update) {
          ModelPending& mp = mg.pel[id];
          mp.time = options.delivery_time_ms;
          if (options.retry_count) {
            mp.count = *options.retry_count;
          } else if (options.increment_count) {
            ++mp.count;
          }
          mg.consumers.at(cname).active = now;
        }
        ASSERT_EQ(result, expected);
        ++counts[10];
      } else if (op < 80) {
        const StreamId start = rand(3) ? StreamId::Min() : random_id();
        const size_t count = 1 + rand(20);
        const int64_t min_idle = rand(2) ? 0 : static_cast<int64_t>(rand(300));
        const bool justid = rand(3) == 0;
        const AutoClaimResult got =
            g->AutoClaim(cname, start, count, min_idle, now, justid, in_stream);
        AutoClaimResult want;
        uint64_t attempts = count * 10;
        size_t budget = count;
        auto it = mg.pel.lower_bound(start);
        while (attempts > 0 && budget > 0 && it != mg.pel.end()) {
          --attempts;
          const StreamId id = it->first;
          if (!in_stream(id)) {
            mg.Erase(id);
            want.deleted.push_back(id);
            --budget;
            it = mg.pel.lower_bound(id);
            continue;
          }
          if (min_idle > 0 && now - it->second.time < min_idle) {
            ++it;
            continue;
          }
          mg.Ensure(cname, now).active = now;
          mg.Move(id, cname);
          it->second.time = now;
          if (!justid) ++it->second.count;
          want.claimed.push_back(id);
          --budget;
          ++it;
        }
        want.next = it == mg.pel.end() ? StreamId::Min() : it->first;
        ASSERT_EQ(got.claimed, want.claimed);
        ASSERT_EQ(got.deleted, want.deleted);
        ASSERT_EQ(got.next, want.next);
        ++counts[11];
      } else if (op < 82) {
        if (rand(4) == 0) gone.insert(random_id());
      } else {
        // Queries with random bounds.
        const StreamId a = random_id(), b = random_id();
        const StreamId start = std::min(a, b), end = std::max(a, b);
        const size_t count = rand(30);
        const bool by_consumer = rand(2);
        const int64_t min_idle = rand(2) ? 0 : static_cast<int64_t>(rand(300));
        const auto got = g->PendingRange(
            start, end, count, by_consumer ? std::optional<std::string_view>(cname) : std::nullopt,
            min_idle, now);
        std::vector<StreamId> want;
        if (!by_consumer || mg.consumers.count(cname)) {
          for (auto it = mg.pel.lower_bound(start);
               it != mg.pel.end() && it->first <= end && want.size() < count; ++it) {
            if (by_consumer && it->second.consumer != cname) continue;
            if (min_idle > 0 && now - it->second.time < min_idle) continue;
            want.push_back(it->first);
          }
        }
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].id, want[i]);

        const size_t history_count = rand(10);
        const auto history = g->ConsumerPendingFrom(cname, start, history_count);
        std::vector<StreamId> want_history;
        if (auto c = mg.consumers.find(cname); c != mg.consumers.end()) {
          for (auto it = c->second.pel.lower_bound(start);
               it != c->second.pel.end() &&
               (history_count == 0 || want_history.size() < history_count);
               ++it) {
            want_history.push_back(*it);
          }
        }
        ASSERT_EQ(history, want_history);

        const StreamId probe = pick_id(mg);
        const auto found = g->FindPending(probe);
        ASSERT_EQ(found.has_value(), mg.pel.count(probe) > 0);
        if (found) {
          ASSERT_EQ(found->consumer, mg.pel[probe].consumer);
        }

        // XREADGROUP CLAIM's walk by delivery time, sometimes at a clock behind the latest
        // deliveries (their unsigned idle time is huge, as in Redis).
        const int64_t claim_now = now - static_cast<int64_t>(rand(3) == 0 ? rand(60) : 0);
        const int64_t claim_idle = rand(4) == 0 ? 0 : static_cast<int64_t>(rand(150));
        const size_t claim_count = rand(8);
        std::vector<std::pair<int64_t, StreamId>> by_time;
        for (const auto& [id, p] : mg.pel) by_time.emplace_back(p.time, id);
        std::sort(by_time.begin(), by_time.end());
        std::vector<StreamId> want_idle;
        for (const auto& [time, id] : by_time) {
          const uint64_t idle = static_cast<uint64_t>(claim_now) - static_cast<uint64_t>(time);
          if (idle < static_cast<uint64_t>(claim_idle)) break;
          if (claim_count > 0 && want_idle.size() == claim_count) break;
          want_idle.push_back(id);
        }
        std::vector<StreamId> got_idle;
        for (const PendingEntry& e : g->IdleEntries(claim_idle, claim_now, claim_count)) {
          got_idle.push_back(e.id);
        }
        ASSERT_EQ(got_idle, want_idle);
        std::optional<StreamId> want_first;
        for (const auto& [time, id] : by_time) {
          if (in_stream(id)) {
            want_first = id;
            break;
          }
        }
        const auto first = g->FirstDelivered(in_stream);
        ASSERT_EQ(first.has_value(), want_first.has_value());
        if (first) {
          ASSERT_EQ(first->id, *want_first);
        }
        ++counts[12];
      }
    }
    ASSERT_NO_FATAL_FAILURE(CheckAll(groups, model, now));
    for (const auto& [name, mg] : model) max_pending = std::max(max_pending, mg.pel.size());
    if (step % 500 == 0) {
      // A round trip through the dump must give the same state.
      std::string dump;
      groups.Dump(&dump);
      StreamGroups copy(run.leaf_capacity);
      ASSERT_TRUE(StreamGroups::Restore(dump, &copy));
      ASSERT_NO_FATAL_FAILURE(CheckAll(copy, model, now));
    }
  }
  size_t pending = 0;
  for (const auto& [name, mg] : model) pending += mg.pel.size();
  std::printf(
      "seed %u: %zu steps, %zu pending at the end, at most %zu in a group; ops create %zu deliver "
      "%zu ack %zu "
      "claim %zu autoclaim %zu delconsumer %zu queries %zu\n",
      run.seed, run.steps, pending, max_pending, counts[0], counts[6], counts[8], counts[10],
      counts[11], counts[4], counts[12]);
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, StreamGroupsModelTest,
    ::testing::Values(RandomRun{1, 5000, 4, 8, 30, 2}, RandomRun{2, 5000, 8, 12, 30, 2},
                      RandomRun{3, 5000, 16, 100, 30, 2}, RandomRun{4, 5000, 256, 10, 30, 5},
                      RandomRun{5, 5000, 6, 70, 1000, 1}, RandomRun{6, 5000, 5, 3, 1000, 1},
                      RandomRun{7, 8000, 32, 200, 1000, 1}));

// --- Directed tests of Redis's rules ---

Stream MakeStream(int n) {
  Stream s;
  const StreamField field{"f", "v"};
  for (int i = 1; i <= n; ++i) s.Append(StreamId{static_cast<uint64_t>(i), 1}, {&field, 1});
  return s;
}

// The ACKED and DELREF policies' questions: an entry is referenced while a group holds it
// pending or has not been delivered it; RemoveEverywhere drops it from every PEL.
TEST(StreamGroupsTest, ReferencesAndRemoveEverywhere) {
  StreamGroups groups;
  EXPECT_FALSE(groups.References(StreamId{1, 1}));  // no group refers to anything
  ConsumerGroup* a = groups.Create("a", StreamId::Min(), 0);
  ConsumerGroup* b = groups.Create("b", StreamId{3, 1}, 3);
  EXPECT_TRUE(groups.References(StreamId{1, 1}));  // a has not been delivered it
  a->Deliver("c", StreamId{1, 1}, 100);
  a->Deliver("c", StreamId{2, 1}, 100);
  a->SetId(StreamId{2, 1}, 2);  // XREADGROUP advances the group past what it delivered
  b->Deliver("c", StreamId{2, 1}, 100);
  EXPECT_TRUE(groups.References(StreamId{1, 1}));  // pending in a
  EXPECT_EQ(a->Ack(std::vector<StreamId>{StreamId{1, 1}}), 1u);
  EXPECT_FALSE(groups.References(StreamId{1, 1}));  // delivered to both, pending nowhere
  EXPECT_TRUE(groups.References(StreamId{3, 1}));   // a's last delivered is 2-1
  EXPECT_EQ(groups.RemoveEverywhere(StreamId{2, 1}), 2u);
  EXPECT_EQ(groups.RemoveEverywhere(StreamId{2, 1}), 0u);
  EXPECT_FALSE(groups.References(StreamId{2, 1}));
  EXPECT_EQ(a->pending_count() + b->pending_count(), 0u);
  EXPECT_TRUE(groups.CheckInvariants());
}

TEST(StreamGroupsTest, EntriesReadAndLag) {
  Stream empty;
  ConsumerGroup fresh(StreamId::Min(), kEntriesReadUnknown);
  EXPECT_EQ(fresh.Lag(empty), 0);
  EXPECT_EQ(EstimateEntriesRead(empty, StreamId{5, 0}), 0);

  Stream s = MakeStream(10);
  ConsumerGroup g(StreamId::Min(), kEntriesReadUnknown);
  EXPECT_EQ(g.Lag(s), 10);  // 0-0 is before the first entry, no tombstones: estimate 0
  g.AdvanceLastDelivered(s, StreamId{1, 1});
  EXPECT_EQ(g.entries_read(), 1);  // the first entry's exact counter
  g.AdvanceLastDelivered(s, StreamId{2, 1});
  EXPECT_EQ(g.entries_read(), 2);
  EXPECT_EQ(g.Lag(s), 8);
  g.AdvanceLastDelivered(s, StreamId{1, 1});  // not above the last delivered: no change
  EXPECT_EQ(g.entries_read(), 2);

  ASSERT_TRUE(s.Delete(StreamId{5, 1}));
  EXPECT_FALSE(g.Lag(s).has_value());  // a tombstone ahead makes the lag unknown
  g.AdvanceLastDelivered(s, StreamId{3, 1});
  EXPECT_EQ(g.entries_read(), kEntriesReadUnknown);
  g.AdvanceLastDelivered(s, StreamId{10, 1});
  EXPECT_EQ(g.entries_read(), 10);  // the last id's counter is exact
  EXPECT_EQ(g.Lag(s), 0);
  EXPECT_EQ(EstimateEntriesRead(s, StreamId{11, 0}), kEntriesReadUnknown);
  EXPECT_TRUE(StreamRangeHasTombstones(s, StreamId{5, 1}, StreamId::Max()));
  EXPECT_FALSE(StreamRangeHasTombstones(s, StreamId{5, 2}, StreamId::Max()));

  ConsumerGroup known(StreamId{4, 1}, 4);
  Stream clean = MakeStream(6);
  EXPECT_EQ(known.Lag(clean), 2);
}

TEST(StreamGroupsTest, RedisDeliveryRules) {
  StreamGroups groups;
  ConsumerGroup* g = groups.Create("g", StreamId::Min(), kEntriesReadUnknown);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(groups.Create("g", StreamId::Min(), 0), nullptr);

  EXPECT_TRUE(g->CreateConsumer("alice", 100));
  EXPECT_FALSE(g->CreateConsumer("alice", 200));
  auto alice = g->FindConsumer("alice");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->seen_time_ms, 100);
  EXPECT_EQ(alice->active_time_ms, -1);

  g->Deliver("alice", StreamId{1, 0}, 300);
  g->Redeliver(StreamId{1, 0}, 350);
  EXPECT_EQ(g->FindPending(StreamId{1, 0})->delivery_count, 2u);
  // '>' delivering an id already pending (after XSETID back) moves it and resets its count.
  g->Deliver("bob", StreamId{1, 0}, 400);
  auto e = g->FindPending(StreamId{1, 0});
  EXPECT_EQ(e->consumer, "bob");
  EXPECT_EQ(e->delivery_count, 1u);
  EXPECT_EQ(e->delivery_time_ms, 400);
  EXPECT_EQ(g->FindConsumer("alice")->pending, 0u);
  EXPECT_EQ(g->FindConsumer("bob")->active_time_ms, 400);

  // XCLAIM FORCE of an id in the stream but not pending creates it (count 1, then + 1).
  ClaimOptions force;
  force.now_ms = 500;
  force.delivery_time_ms = 500;
  force.force = true;
  force.min_idle_ms = 1000000;  // ignored for a created entry
  EXPECT_EQ(g->Claim(StreamId{2, 0}, "carol", force, true), ClaimResult::kClaimed);
  EXPECT_EQ(g->FindPending(StreamId{2, 0})->delivery_count, 2u);
  EXPECT_EQ(g->Claim(StreamId{3, 0}, "carol", force, false), ClaimResult::kNotPending);
  EXPECT_EQ(g->Claim(StreamId{2, 0}, "dave", force, true), ClaimResult::kTooRecent);
  // An entry gone from the stream leaves the PEL however recently it was delivered.
  EXPECT_EQ(g->Claim(StreamId{2, 0}, "dave", force, false), ClaimResult::kRemoved);
  EXPECT_FALSE(g->FindConsumer("dave"));  // nothing claimed, nobody created

  auto deleted = g->DeleteConsumer("bob");
  EXPECT_EQ(deleted, 1u);
  EXPECT_EQ(g->pending_count(), 0u);
  EXPECT_FALSE(g->DeleteConsumer("bob").has_value());
  EXPECT_TRUE(groups.Destroy("g"));
  EXPECT_EQ(groups.Find("g"), nullptr);
}

TEST(StreamGroupsTest, AutoClaimCursorAndBudget) {
  ConsumerGroup g(StreamId::Min(), 0, 4);
  for (uint64_t i = 1; i <= 100; ++i) g.Deliver("a", StreamId{i, 0}, 0);
  auto all = [](StreamId) { return true; };
  // Nothing idle enough: scans count * 10 entries and returns the one after them.
  auto r = g.AutoClaim("b", StreamId::Min(), 2, 1000, 10, false, all);
  EXPECT_TRUE(r.claimed.empty());
  EXPECT_EQ(r.next, (StreamId{21, 0}));
  EXPECT_FALSE(g.FindConsumer("b"));
  r = g.AutoClaim("b", StreamId{50, 0}, 3, 5, 10, false, [](StreamId id) { return id.ms != 51; });
  EXPECT_EQ(r.claimed, (std::vector<StreamId>{{50, 0}, {52, 0}}));
  EXPECT_EQ(r.deleted, (std::vector<StreamId>{{51, 0}}));
  EXPECT_EQ(r.next, (StreamId{53, 0}));
  EXPECT_EQ(g.FindPending(StreamId{50, 0})->delivery_count, 2u);
  r = g.AutoClaim("b", StreamId{98, 0}, 10, 0, 10, true, all);
  EXPECT_EQ(r.claimed.size(), 3u);
  EXPECT_EQ(r.next, StreamId::Min());
  EXPECT_EQ(g.FindPending(StreamId{99, 0})->delivery_count, 1u);  // JUSTID
  EXPECT_TRUE(g.CheckInvariants());
}

// --- Memory ---

TEST(StreamGroupsTest, BytesPerPendingEntry) {
  constexpr uint64_t kEntries = 1'000'000;
  StreamGroups groups;
  ConsumerGroup* g = groups.Create("workers", StreamId::Min(), 0);
  std::vector<std::string> names;
  for (int c = 0; c < 10; ++c) names.push_back("consumer-" + std::to_string(c));
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kEntries; ++i) {
    g->Deliver(names[i % names.size()], StreamId{1'700'000'000'000 + i / 3, i % 3},
               static_cast<int64_t>(i));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t bytes = groups.MemoryUsage();
  const double per_entry = static_cast<double>(bytes) / kEntries;
  std::printf(
      "1M pending entries, 10 consumers: %zu bytes, %.2f B per pending entry, "
      "%zu leaves, %.0f ns per Deliver\n",
      bytes, per_entry, g->leaf_count(), seconds * 1e9 / kEntries);
  EXPECT_LT(per_entry, 36.0);
  EXPECT_EQ(g->pending_count(), kEntries);
  EXPECT_TRUE(g->CheckInvariants());

  // A consumer's own entries are found without reading the others' leaves' records one by one
  // beyond its own (10 consumers share every leaf here, so this reads every 10th record).
  const auto history = g->ConsumerPendingFrom("consumer-3", StreamId::Min(), 5);
  ASSERT_EQ(history.size(), 5u);
  EXPECT_EQ(history[1], (StreamId{1'700'000'000'000 + 13 / 3, 13 % 3}));

  // Acks from the head free whole leaves.
  std::vector<StreamId> acks;
  for (uint64_t i = 0; i < kEntries / 2; ++i) acks.push_back({1'700'000'000'000 + i / 3, i % 3});
  EXPECT_EQ(g->Ack(acks), kEntries / 2);
  const double after = static_cast<double>(groups.MemoryUsage()) / (kEntries / 2);
  std::printf("after acking the older half: %.2f B per pending entry\n", after);
  EXPECT_LT(after, 36.0);
  EXPECT_EQ(g->DeleteConsumer("consumer-0"), kEntries / 2 / 10);
  EXPECT_TRUE(g->CheckInvariants());
}

TEST(StreamGroupsTest, BytesPerPendingEntryInRandomOrder) {
  // Inserts in the middle (XCLAIM FORCE, deliveries after XSETID) split leaves in halves.
  constexpr uint64_t kEntries = 200'000;
  std::vector<StreamId> ids;
  for (uint64_t i = 0; i < kEntries; ++i) ids.push_back({1000 + i, 0});
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(3));
  StreamGroups groups;
  ConsumerGroup* g = groups.Create("g", StreamId::Min(), 0);
  for (const StreamId id : ids) g->Deliver("c", id, 0);
  const double per_entry = static_cast<double>(groups.MemoryUsage()) / kEntries;
  std::printf("200k pending entries inserted in random order: %.2f B per pending entry\n",
              per_entry);
  EXPECT_LT(per_entry, 50.0);
  EXPECT_TRUE(g->CheckInvariants());
}

TEST(StreamGroupsTest, MemoryIsHonestForSmallGroups) {
  StreamGroups groups;
  const size_t empty = groups.MemoryUsage();
  ConsumerGroup* g = groups.Create("a-group-with-a-long-name", StreamId::Min(), 0);
  const size_t one_group = groups.MemoryUsage();
  EXPECT_GT(one_group, empty + sizeof(ConsumerGroup));
  g->Deliver("a-consumer-with-a-long-name", StreamId{1, 1}, 0);
  EXPECT_GT(groups.MemoryUsage(), one_group + 32 + 32);
  g->Ack(std::vector<StreamId>{{1, 1}});
  EXPECT_EQ(g->leaf_count(), 0u);
}

// --- Dump / Restore ---

void FillRandom(StreamGroups* groups, uint32_t seed) {
  std::mt19937_64 rng(seed);
  for (int gi = 0; gi < 3; ++gi) {
    ConsumerGroup* g =
        groups->Create("group" + std::to_string(gi), StreamId{rng() % 1000, rng() % 5},
                       gi == 0 ? kEntriesReadUnknown : static_cast<int64_t>(rng() % 99));
    for (int i = 0; i < 300; ++i) {
      g->Deliver("c" + std::to_string(rng() % 7), StreamId{rng() % 200, rng() % 4},
                 static_cast<int64_t>(rng() % 100000) - 50000);
    }
    g->CreateConsumer("idle-one", -5);
    ClaimOptions o;
    o.retry_count = uint64_t{1} << 31;
    g->Claim(StreamId{rng() % 200, 0}, "claimer", o, true);
  }
  groups->Create("empty", StreamId::Max(), INT64_MAX);
}

TEST(StreamGroupsTest, DumpRoundTrip) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    StreamGroups groups(8);
    FillRandom(&groups, seed);
    std::string dump;
    groups.Dump(&dump);
    StreamGroups restored(64);
    ASSERT_TRUE(StreamGroups::Restore(dump, &restored));
    ASSERT_TRUE(restored.CheckInvariants());
    std::string again;
    restored.Dump(&again);
    EXPECT_EQ(dump, again);
    groups.ForEach([&](std::string_view name, const ConsumerGroup& g) {
      const ConsumerGroup* r = restored.Find(name);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->entries_read(), g.entries_read());
      EXPECT_EQ(r->last_delivered_id(), g.last_delivered_id());
      const auto a = g.PendingRange(StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, 0, 0);
      const auto b =
          r->PendingRange(StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, 0, 0);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id);
        EXPECT_EQ(a[i].consumer, b[i].consumer);
        EXPECT_EQ(a[i].delivery_time_ms, b[i].delivery_time_ms);
        EXPECT_EQ(a[i].delivery_count, b[i].delivery_count);
      }
    });
  }
  StreamGroups none;
  std::string dump;
  none.Dump(&dump);
  StreamGroups restored;
  ASSERT_TRUE(StreamGroups::Restore(dump, &restored));
  EXPECT_TRUE(restored.empty());
}

TEST(StreamGroupsTest, RestoreRejectsCorruptInput) {
  StreamGroups groups(8);
  FillRandom(&groups, 42);
  std::string dump;
  groups.Dump(&dump);
  StreamGroups target;
  target.Create("keep-me", StreamId{1, 1}, 1);
  std::string target_dump;
  target.Dump(&target_dump);

  std::mt19937_64 rng(7);
  size_t accepted = 0, rejected = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string bad = dump;
    switch (rng() % 5) {
      case 0:  // flip a few bytes
        for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n)
          bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      case 1:  // truncate
        bad.resize(rng() % bad.size());
        break;
      case 2:  // insert a byte
        bad.insert(bad.begin() + static_cast<ptrdiff_t>(rng() % bad.size()),
                   static_cast<char>(rng()));
        break;
      case 3:  // remove a run
        bad.erase(rng() % bad.size(), 1 + rng() % 8);
        break;
      default:  // garbage with a valid version byte
        bad.assign(1 + rng() % 64, '\0');
        for (char& ch : bad) ch = static_cast<char>(rng());
        bad[0] = 1;
        break;
    }
    StreamGroups out;
    out.Create("keep-me", StreamId{1, 1}, 1);
    if (StreamGroups::Restore(bad, &out)) {
      ++accepted;
      ASSERT_TRUE(out.CheckInvariants());
      std::string redump;
      out.Dump(&redump);
      StreamGroups again;
      ASSERT_TRUE(StreamGroups::Restore(redump, &again));
    } else {
      ++rejected;
      std::string unchanged;
      out.Dump(&unchanged);
      ASSERT_EQ(unchanged, target_dump);
    }
  }
  std::printf("fuzz: %zu mutated dumps accepted (still valid), %zu rejected\n", accepted, rejected);
  EXPECT_GT(rejected, 10000u);
}

}  // namespace
}  // namespace goblin
