#include "core/stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace goblin {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
using Model = std::map<StreamId, Fields>;

std::vector<StreamField> Views(const Fields& fields) {
  std::vector<StreamField> out;
  for (const auto& [name, value] : fields) out.emplace_back(name, value);
  return out;
}

Fields Copy(const std::vector<StreamField>& fields) {
  Fields out;
  for (const auto& [name, value] : fields) out.emplace_back(name, value);
  return out;
}

void Append(Stream* stream, StreamId id, const Fields& fields) {
  const std::vector<StreamField> views = Views(fields);
  stream->Append(id, views);
}

std::vector<std::pair<StreamId, Fields>> RangeOf(const Stream& stream, StreamId start, StreamId end,
                                                 bool reverse, size_t count) {
  std::vector<std::pair<StreamId, Fields>> out;
  const size_t visited = stream.Range(start, end, reverse, count, [&](const StreamEntryView& e) {
    out.emplace_back(e.id, Copy(e.fields));
    return true;
  });
  EXPECT_EQ(visited, out.size());
  return out;
}

std::vector<std::pair<StreamId, Fields>> RangeOf(const Model& model, StreamId start, StreamId end,
                                                 bool reverse, size_t count) {
  std::vector<std::pair<StreamId, Fields>> out;
  if (start > end) return out;
  auto lo = model.lower_bound(start);
  auto hi = model.upper_bound(end);
  if (!reverse) {
    for (auto it = lo; it != hi && (count == 0 || out.size() < count); ++it) out.push_back(*it);
  } else {
    for (auto it = hi; it != lo && (count == 0 || out.size() < count);) out.push_back(*--it);
  }
  return out;
}

Stream::Limits SmallLimits() { return {64, 3}; }

// ---- the randomized model test --------------------------------------------------------------

struct ModelCase {
  uint64_t seed;
  Stream::Limits limits;
  size_t steps;
};

class StreamModelTest : public testing::TestWithParam<ModelCase> {};

// Seeded random operations on a Stream and a std::map of its live entries, every result and
// counter compared after each step, and the whole contents every few steps.
TEST_P(StreamModelTest, MatchesMap) {
  const ModelCase c = GetParam();
  std::mt19937_64 rng(c.seed);
  auto below = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  Stream stream(c.limits);
  Model model;
  StreamId last_id, max_deleted;
  uint64_t entries_added = 0;
  std::vector<std::string> shape = {"f"};

  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& ch : s) ch = static_cast<char>(rng());
    return s;
  };
  auto value = [&]() {
    const uint64_t kind = below(100);
    if (kind < 8) return std::string();
    if (kind < 70) return random_bytes(1 + below(20));
    if (kind < 96) return random_bytes(20 + below(200));
    return random_bytes(c.limits.max_node_bytes + 1 + below(3000));  // bigger than a node
  };
  auto fields = [&]() {
    if (below(100) < 3) {  // a new usual shape
      shape.clear();
      const size_t n = 1 + below(4);
      for (size_t i = 0; i < n; ++i)
        shape.push_back(below(4) == 0 ? std::string() : "k" + std::to_string(below(6)));
    }
    Fields out;
    if (below(100) < 80) {
      for (const std::string& name : shape) out.emplace_back(name, value());
    } else {
      const size_t n = 1 + below(5);
      for (size_t i = 0; i < n; ++i) out.emplace_back(random_bytes(below(5)), value());
    }
    return out;
  };
  auto next_id = [&]() {
    const StreamId last = last_id;
    const uint64_t kind = below(100);
    if (kind < 55 && last.seq < UINT64_MAX - 10) return StreamId{last.ms, last.seq + 1 + below(3)};
    if (kind < 90 && last.ms < UINT64_MAX - 1000)
      return StreamId{last.ms + 1 + below(300), below(3)};
    if (kind < 95 && last.seq < UINT64_MAX)
      return StreamId{last.ms, UINT64_MAX};  // then the ms wraps
    if (kind < 98 && last.ms < UINT64_MAX / 2)
      return StreamId{last.ms + (uint64_t{1} << 40), rng()};
    return last.Next();
  };
  // An id near the model's ids: one of them, just beside one, or anywhere.
  auto probe = [&]() -> StreamId {
    const uint64_t kind = below(10);
    if (kind < 6 && !model.empty()) {
      auto it = model.begin();
      std::advance(it, static_cast<ptrdiff_t>(below(model.size())));
      if (kind < 4) return it->first;
      if (kind == 4 && it->first != StreamId::Max()) return it->first.Next();
      if (it->first != StreamId::Min()) return it->first.Previous();
    }
    if (kind < 8) return StreamId{below(last_id.ms + 2), below(5)};
    return kind == 8 ? StreamId::Min() : StreamId::Max();
  };
  // A trim: it leaves max_deleted as it was (only XDEL raises it, as in Redis).
  auto remove_model = [&](Model::iterator begin, Model::iterator end) {
    const auto n = static_cast<size_t>(std::distance(begin, end));
    model.erase(begin, end);
    return n;
  };

  for (size_t step = 0; step < c.steps; ++step) {
    const uint64_t op = below(100);
    SCOPED_TRACE("step " + std::to_string(step) + " op " + std::to_string(op));
    if (op < 45) {
      if (last_id == StreamId::Max()) continue;
      const StreamId id = next_id();
      const Fields f = fields();
      Append(&stream, id, f);
      model[id] = f;
      last_id = id;
      ++entries_added;
    } else if (op < 55) {
      const StreamId id = probe();
      const bool expected = model.erase(id) == 1;
      if (expected) max_deleted = std::max(max_deleted, id);
      ASSERT_EQ(stream.Delete(id), expected);
    } else if (op < 62) {
      const size_t maxlen = below(model.size() + 3);
      const bool approx = below(2) == 0;
      const size_t limit = approx && below(2) == 0 ? 1 + below(10) : 0;
      const size_t exact = model.size() > maxlen ? model.size() - maxlen : 0;
      const size_t removed = stream.TrimMaxLen(maxlen, approx, limit);
      if (!approx) {
        ASSERT_EQ(removed, exact);
      } else {
        ASSERT_LE(removed, exact);
        if (limit != 0) {
          ASSERT_LE(removed, limit);
        }
      }
      ASSERT_EQ(
          remove_model(model.begin(), std::next(model.begin(), static_cast<ptrdiff_t>(removed))),
          removed);
      if (approx && limit == 0) {
        ASSERT_EQ(stream.TrimMaxLen(maxlen, true, 0), 0u);  // it removed all it could
      }
    } else if (op < 68) {
      const StreamId min_id = probe();
      const bool approx = below(2) == 0;
      const size_t limit = approx && below(2) == 0 ? 1 + below(10) : 0;
      const size_t exact =
          static_cast<size_t>(std::distance(model.begin(), model.lower_bound(min_id)));
      const size_t removed = stream.TrimMinId(min_id, approx, limit);
      if (!approx) {
        ASSERT_EQ(removed, exact);
      } else {
        ASSERT_LE(removed, exact);
        if (limit != 0) {
          ASSERT_LE(removed, limit);
        }
      }
      remove_model(model.begin(), std::next(model.begin(), static_cast<ptrdiff_t>(removed)));
      if (approx && limit == 0) {
        ASSERT_EQ(stream.TrimMinId(min_id, true, 0), 0u);
      }
    } else if (op < 82) {
      StreamId a = probe(), b = probe();
      if (below(5) != 0 && a > b) std::swap(a, b);
      const bool reverse = below(2) == 0;
      const size_t count = below(3) == 0 ? 0 : 1 + below(8);
      ASSERT_EQ(RangeOf(stream, a, b, reverse, count), RangeOf(model, a, b, reverse, count));
      if (below(4) == 0) {
        // A visitor that stops early.
        const size_t stop = 1 + below(4);
        size_t calls = 0;
        const size_t visited =
            stream.Range(a, b, reverse, 0, [&](const StreamEntryView&) { return ++calls < stop; });
        ASSERT_EQ(visited, std::min(stop, RangeOf(model, a, b, reverse, 0).size()));
      }
    } else if (op < 88) {
      const StreamId id = probe();
      const auto found = stream.Find(id);
      const auto it = model.find(id);
      ASSERT_EQ(found.has_value(), it != model.end());
      if (found) {
        ASSERT_EQ(found->id, id);
        ASSERT_EQ(Copy(found->fields), it->second);
      }
    } else if (op < 93) {
      const StreamId id = probe();
      ASSERT_EQ(stream.CountAfter(id),
                static_cast<size_t>(std::distance(model.upper_bound(id), model.end())));
    } else if (op < 96) {
      // XSETID: anywhere from the last live id (or 0-0) to a bit past last_id.
      const StreamId floor = model.empty() ? StreamId::Min() : model.rbegin()->first;
      StreamId id = floor;
      if (below(2) == 0 && last_id.ms < UINT64_MAX - 10)
        id = StreamId{last_id.ms + below(3), below(4)};
      if (id < floor) id = floor;
      std::optional<uint64_t> added;
      std::optional<StreamId> deleted;
      if (below(3) == 0) added = entries_added + below(5);
      if (below(3) == 0) deleted = StreamId{below(id.ms + 1), below(3)};
      stream.SetLastId(id, added, deleted);
      last_id = id;
      if (added) entries_added = *added;
      if (deleted) max_deleted = *deleted;
    } else {
      std::string dump;
      stream.Dump(&dump);
      Stream restored(c.limits);
      ASSERT_TRUE(Stream::Restore(dump, &restored));
      std::string again;
      restored.Dump(&again);
      ASSERT_EQ(again, dump);
      stream = std::move(restored);
    }

    ASSERT_TRUE(stream.CheckInvariants());
    ASSERT_EQ(stream.size(), model.size());
    ASSERT_EQ(stream.empty(), model.empty());
    ASSERT_EQ(stream.last_id(), last_id);
    ASSERT_EQ(stream.max_deleted_id(), max_deleted);
    ASSERT_EQ(stream.entries_added(), entries_added);
    if (!model.empty()) {
      ASSERT_EQ(stream.first_id(), model.begin()->first);
      ASSERT_EQ(stream.last_live_id(), model.rbegin()->first);
    } else {
      ASSERT_EQ(stream.node_count(), 0u);
    }
    if (step % 64 == 0) {
      ASSERT_EQ(RangeOf(stream, StreamId::Min(), StreamId::Max(), false, 0),
                RangeOf(model, StreamId::Min(), StreamId::Max(), false, 0));
    }
    // Keep the stream from growing without bound: drain it now and then.
    if (model.size() > 3000) {
      stream.TrimMaxLen(100, false, 0);
      remove_model(model.begin(),
                   std::next(model.begin(), static_cast<ptrdiff_t>(model.size() - 100)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, StreamModelTest,
                         testing::Values(ModelCase{1, {}, 6000}, ModelCase{2, {}, 6000},
                                         ModelCase{3, {}, 6000}, ModelCase{11, SmallLimits(), 6000},
                                         ModelCase{12, SmallLimits(), 6000},
                                         ModelCase{13, SmallLimits(), 6000},
                                         ModelCase{14, SmallLimits(), 6000},
                                         ModelCase{21, {0, 5}, 4000}, ModelCase{22, {200, 0}, 4000},
                                         ModelCase{23, {0, 0}, 3000}, ModelCase{24, {1, 1}, 3000}));

// ---- memory ---------------------------------------------------------------------------------

// One field "f", a 16-byte value, four ids per millisecond: the budget is 24 bytes per entry
// (Redis 7.2 spends 31.3).
TEST(StreamTest, MemoryBudget) {
  Stream stream;
  const std::string value = "0123456789abcdef";
  const StreamField field{"f", value};
  const size_t checkpoints[] = {500000, 1000000, 2000000};
  size_t i = 0;
  for (const size_t target : checkpoints) {
    for (; i < target; ++i) stream.Append(StreamId{1700000000000 + i / 4, i % 4}, {&field, 1});
    const double per_entry = static_cast<double>(stream.MemoryUsage()) / stream.size();
    std::printf("[ budget   ] %zu entries: %.2f bytes/entry, %zu nodes\n", stream.size(), per_entry,
                stream.node_count());
    EXPECT_LE(per_entry, 24.0);
  }
  EXPECT_EQ(stream.node_count(), 2000000u / 100);
  EXPECT_TRUE(stream.CheckInvariants());
  const auto last = stream.Find(StreamId{1700000000000 + 1999999 / 4, 3});
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->fields[0].second, value);
}

// A small stream's tail block starts small; a closed node keeps no spare capacity.
TEST(StreamTest, MemoryIsHonestForSmallStreams) {
  Stream stream(Stream::Limits{4096, 4});
  const std::string value(16, 'v');
  const StreamField field{"f", value};
  const size_t empty = stream.MemoryUsage();
  EXPECT_EQ(empty, sizeof(Stream));
  stream.Append({1, 1}, {&field, 1});
  const size_t one = stream.MemoryUsage();
  EXPECT_GT(one, empty + 20);  // the Node and a heap block for its 23 bytes
  EXPECT_LE(one, empty + 80 + 65);
  for (uint64_t seq = 2; seq <= 5; ++seq) stream.Append({1, seq}, {&field, 1});
  // Two nodes: the first closed at 3 + 4 * 20 bytes exactly, plus its terminator.
  EXPECT_EQ(stream.node_count(), 2u);
  EXPECT_LE(stream.MemoryUsage(), sizeof(Stream) + 2 * 80 + (83 + 1) + 65);
}

// ---- targeted cases -------------------------------------------------------------------------

TEST(StreamTest, EdgeIds) {
  Stream stream(SmallLimits());
  const StreamField field{"a", "1"};
  const StreamId ids[] = {{0, 1},
                          {0, UINT64_MAX},
                          {1, 0},
                          {5, UINT64_MAX},
                          {6, 0},
                          {UINT64_MAX - 1, UINT64_MAX},
                          {UINT64_MAX, 0},
                          {UINT64_MAX, UINT64_MAX - 1},
                          {UINT64_MAX, UINT64_MAX}};
  for (const StreamId id : ids) stream.Append(id, {&field, 1});
  ASSERT_TRUE(stream.CheckInvariants());
  EXPECT_EQ(stream.first_id(), (StreamId{0, 1}));
  EXPECT_EQ(stream.last_live_id(), StreamId::Max());
  EXPECT_EQ(stream.last_id(), StreamId::Max());
  std::vector<StreamId> forward, backward;
  stream.Range(StreamId::Min(), StreamId::Max(), false, 0, [&](const StreamEntryView& e) {
    forward.push_back(e.id);
    return true;
  });
  stream.Range(StreamId::Min(), StreamId::Max(), true, 0, [&](const StreamEntryView& e) {
    backward.push_back(e.id);
    return true;
  });
  EXPECT_EQ(forward, std::vector<StreamId>(std::begin(ids), std::end(ids)));
  EXPECT_EQ(backward, std::vector<StreamId>(std::rbegin(ids), std::rend(ids)));
  for (const StreamId id : ids) EXPECT_TRUE(stream.Find(id).has_value()) << id.ToString();
  EXPECT_FALSE(stream.Find(StreamId::Min()).has_value());
  EXPECT_FALSE(stream.Find({5, UINT64_MAX - 1}).has_value());
  EXPECT_EQ(stream.CountAfter({5, UINT64_MAX}), 5u);
  EXPECT_EQ(stream.CountAfter(StreamId::Max()), 0u);
  EXPECT_EQ(stream.CountAfter(StreamId::Min()), 9u);
  EXPECT_TRUE(stream.Delete(StreamId::Max()));
  EXPECT_EQ(stream.max_deleted_id(), StreamId::Max());
  EXPECT_EQ(stream.last_id(), StreamId::Max());
  std::string dump;
  stream.Dump(&dump);
  Stream restored;
  ASSERT_TRUE(Stream::Restore(dump, &restored));
  EXPECT_TRUE(restored.CheckInvariants());
  EXPECT_EQ(restored.size(), 8u);
  EXPECT_EQ(restored.last_live_id(), (StreamId{UINT64_MAX, UINT64_MAX - 1}));
  EXPECT_EQ(StreamId::Max().ToString(), "18446744073709551615-18446744073709551615");
  EXPECT_EQ((StreamId{5, UINT64_MAX}).Next(), (StreamId{6, 0}));
  EXPECT_EQ((StreamId{6, 0}).Previous(), (StreamId{5, UINT64_MAX}));
}

TEST(StreamTest, NodesFollowTheLimits) {
  Stream stream(Stream::Limits{0, 10});
  const StreamField field{"f", "v"};
  for (uint64_t i = 1; i <= 100; ++i) stream.Append({i, 0}, {&field, 1});
  EXPECT_EQ(stream.node_count(), 10u);
  Stream by_bytes(Stream::Limits{100, 0});
  const std::string big(300, 'x');
  const StreamField large{"f", big};
  by_bytes.Append({1, 0}, {&field, 1});
  by_bytes.Append({2, 0}, {&large, 1});  // bigger than a node: a node of its own
  by_bytes.Append({3, 0}, {&field, 1});
  EXPECT_EQ(by_bytes.node_count(), 3u);
  EXPECT_TRUE(by_bytes.CheckInvariants());
  EXPECT_EQ(by_bytes.Find({2, 0})->fields[0].second, big);
}

TEST(StreamTest, DeleteDropsEmptyNodesAndKeepsLastId) {
  Stream stream(Stream::Limits{0, 2});
  const StreamField field{"f", "v"};
  for (uint64_t i = 1; i <= 6; ++i) stream.Append({i, 0}, {&field, 1});
  EXPECT_EQ(stream.node_count(), 3u);
  EXPECT_TRUE(stream.Delete({3, 0}));
  EXPECT_FALSE(stream.Delete({3, 0}));
  EXPECT_EQ(stream.node_count(), 3u);
  EXPECT_TRUE(stream.Delete({4, 0}));
  EXPECT_EQ(stream.node_count(), 2u);
  EXPECT_TRUE(stream.Delete({6, 0}));
  EXPECT_TRUE(stream.Delete({5, 0}));
  EXPECT_EQ(stream.node_count(), 1u);
  EXPECT_EQ(stream.last_id(), (StreamId{6, 0}));
  EXPECT_EQ(stream.max_deleted_id(), (StreamId{6, 0}));
  EXPECT_EQ(stream.size(), 2u);
  stream.Append({7, 0}, {&field, 1});  // into the closed tail node
  EXPECT_TRUE(stream.CheckInvariants());
  EXPECT_EQ(stream.last_live_id(), (StreamId{7, 0}));
}

TEST(StreamTest, TrimWholeNodesAndExact) {
  auto make = [] {
    Stream stream(Stream::Limits{0, 10});
    const StreamField field{"f", "v"};
    for (uint64_t i = 1; i <= 100; ++i) stream.Append({i, 0}, {&field, 1});
    return stream;
  };
  Stream approx = make();
  EXPECT_EQ(approx.TrimMaxLen(55, true, 0), 40u);  // 4 nodes: a 5th would leave 50 < 55
  EXPECT_EQ(approx.size(), 60u);
  EXPECT_EQ(approx.max_deleted_id(), StreamId::Min());  // trims are not deletions (Redis)
  Stream limited = make();
  EXPECT_EQ(limited.TrimMaxLen(55, true, 25), 20u);  // a 3rd node would pass the limit
  Stream exact = make();
  EXPECT_EQ(exact.TrimMaxLen(55, false, 7), 45u);  // exact trims ignore the limit
  EXPECT_EQ(exact.first_id(), (StreamId{46, 0}));
  EXPECT_EQ(exact.node_count(), 6u);
  EXPECT_EQ(exact.max_deleted_id(), StreamId::Min());
  Stream by_id = make();
  EXPECT_EQ(by_id.TrimMinId({35, 0}, true, 0), 30u);
  EXPECT_EQ(by_id.TrimMinId({35, 0}, false, 0), 4u);
  EXPECT_EQ(by_id.first_id(), (StreamId{35, 0}));
  EXPECT_EQ(by_id.TrimMaxLen(0, false, 0), 66u);
  EXPECT_TRUE(by_id.empty());
  EXPECT_EQ(by_id.node_count(), 0u);
  EXPECT_EQ(by_id.last_id(), (StreamId{100, 0}));
  EXPECT_TRUE(by_id.CheckInvariants());
}

// ACKED and DELREF trims: kept entries stay, a node holding one stops the run of whole nodes,
// the exact trim passes over kept entries inside that node and stops at its end, and every
// entry removed is reported.
TEST(StreamTest, TrimWithReferences) {
  auto make = [] {
    Stream stream(Stream::Limits{0, 10});
    const StreamField field{"f", "v"};
    for (uint64_t i = 1; i <= 50; ++i) stream.Append({i, 0}, {&field, 1});
    return stream;
  };
  std::vector<StreamId> reported;
  Stream::TrimRefs refs{[](StreamId id) { return id.ms == 13 || id.ms == 15; },
                        [&](StreamId id) { reported.push_back(id); }};
  Stream exact = make();
  // Node 1 (ids 1..10) goes whole; node 2 holds kept 13 and 15: its other entries go, and the
  // trim ends with that node although 32 entries remain above maxlen 5.
  EXPECT_EQ(exact.TrimMaxLen(5, false, 0, refs), 18u);
  EXPECT_EQ(exact.size(), 32u);
  EXPECT_EQ(exact.first_id(), (StreamId{13, 0}));
  EXPECT_TRUE(exact.Find({15, 0}).has_value());
  EXPECT_FALSE(exact.Find({14, 0}).has_value());
  EXPECT_EQ(reported.size(), 18u);
  EXPECT_EQ(reported.front(), (StreamId{1, 0}));
  EXPECT_EQ(reported.back(), (StreamId{20, 0}));
  EXPECT_TRUE(exact.CheckInvariants());

  reported.clear();
  Stream approx = make();
  EXPECT_EQ(approx.TrimMaxLen(5, true, 0, refs), 10u);  // whole nodes only, up to the kept ones
  EXPECT_EQ(reported.size(), 10u);

  reported.clear();
  Stream by_id = make();
  EXPECT_EQ(by_id.TrimMinId({14, 0}, false, 0, refs), 12u);  // 1..12; 13 is kept
  EXPECT_EQ(by_id.first_id(), (StreamId{13, 0}));
  EXPECT_FALSE(by_id.Find({12, 0}).has_value());
  EXPECT_EQ(by_id.size(), 38u);
  EXPECT_TRUE(by_id.CheckInvariants());

  // Reporting alone (DELREF) removes what a plain trim removes.
  reported.clear();
  Stream reporting = make();
  EXPECT_EQ(reporting.TrimMaxLen(7, false, 0, {nullptr, refs.removed}), 43u);
  EXPECT_EQ(reported.size(), 43u);
  EXPECT_EQ(reporting.first_id(), (StreamId{44, 0}));
}

// Seeded random streams and kept sets: a trim never removes a kept entry, reports exactly the
// entries it removed, leaves a valid stream, and without kept entries removes what a plain trim
// removes.
TEST(StreamTest, TrimWithReferencesRandom) {
  std::mt19937_64 rng(4242);
  const StreamField field{"f", "v"};
  for (int round = 0; round < 400; ++round) {
    Stream stream(Stream::Limits{0, 1 + rng() % 12});
    Stream plain(Stream::Limits{stream.limits()});
    const uint64_t n = rng() % 120;
    std::map<StreamId, bool> live;
    for (uint64_t i = 1; i <= n; ++i) {
      stream.Append({i, 0}, {&field, 1});
      plain.Append({i, 0}, {&field, 1});
      live[{i, 0}] = true;
    }
    for (uint64_t i = 1; i <= n; ++i) {
      if (rng() % 6 == 0) {
        stream.Delete({i, 0});
        plain.Delete({i, 0});
        live.erase({i, 0});
      }
    }
    const int keep_one_in = static_cast<int>(rng() % 4);  // 0: nothing kept
    std::set<StreamId> kept;
    for (const auto& [id, unused] : live) {
      if (keep_one_in != 0 && rng() % (4 * keep_one_in) == 0) kept.insert(id);
    }
    std::vector<StreamId> reported;
    Stream::TrimRefs refs{[&](StreamId id) { return kept.contains(id); },
                          [&](StreamId id) { reported.push_back(id); }};
    const bool approx = rng() % 3 == 0;
    const bool by_length = rng() % 2 == 0;
    const size_t maxlen = rng() % (n + 2);
    const StreamId min_id{rng() % (n + 2), 0};
    const size_t removed = by_length ? stream.TrimMaxLen(maxlen, approx, 0, refs)
                                     : stream.TrimMinId(min_id, approx, 0, refs);
    ASSERT_TRUE(stream.CheckInvariants()) << "round " << round;
    ASSERT_EQ(removed, reported.size()) << "round " << round;
    ASSERT_EQ(stream.size() + removed, live.size()) << "round " << round;
    for (StreamId id : reported) {
      ASSERT_FALSE(kept.contains(id)) << "round " << round;
      ASSERT_TRUE(live.contains(id)) << "round " << round;
      ASSERT_FALSE(stream.Find(id).has_value()) << "round " << round;
    }
    for (StreamId id : kept) ASSERT_TRUE(stream.Find(id).has_value()) << "round " << round;
    if (kept.empty()) {
      const size_t plain_removed =
          by_length ? plain.TrimMaxLen(maxlen, approx, 0) : plain.TrimMinId(min_id, approx, 0);
      ASSERT_EQ(removed, plain_removed) << "round " << round;
    }
  }
}

// An exact MINID trim whose head node keeps only deleted entries at or above min_id drops it.
TEST(StreamTest, ExactMinIdDropsNodeLeftWithoutLiveEntries) {
  Stream stream(Stream::Limits{0, 4});
  const StreamField field{"f", "v"};
  for (uint64_t i = 1; i <= 8; ++i) stream.Append({i, 0}, {&field, 1});
  EXPECT_TRUE(stream.Delete({4, 0}));
  EXPECT_TRUE(stream.Delete({3, 0}));
  EXPECT_EQ(stream.TrimMinId({3, 0}, false, 0), 2u);
  EXPECT_EQ(stream.node_count(), 1u);
  EXPECT_EQ(stream.first_id(), (StreamId{5, 0}));
  EXPECT_TRUE(stream.CheckInvariants());
}

// XSETID below deleted tail entries cuts them, so later ids can reuse that range.
TEST(StreamTest, SetLastIdBelowDeletedTail) {
  Stream stream;
  const StreamField field{"f", "v"};
  stream.Append({1, 1}, {&field, 1});
  stream.Append({1, 2}, {&field, 1});
  stream.Append({1, 3}, {&field, 1});
  EXPECT_TRUE(stream.Delete({1, 3}));
  EXPECT_TRUE(stream.Delete({1, 2}));
  stream.SetLastId({1, 1}, std::nullopt, std::nullopt);
  EXPECT_TRUE(stream.CheckInvariants());
  stream.Append({1, 2}, {&field, 1});
  EXPECT_TRUE(stream.CheckInvariants());
  EXPECT_EQ(stream.size(), 2u);
  EXPECT_EQ(stream.last_live_id(), (StreamId{1, 2}));
  EXPECT_EQ(stream.max_deleted_id(), (StreamId{1, 3}));
  EXPECT_EQ(stream.entries_added(), 4u);
}

TEST(StreamTest, RangeCountsAndBounds) {
  Stream stream(SmallLimits());
  const StreamField field{"f", "v"};
  for (uint64_t i = 1; i <= 20; ++i) stream.Append({i, 0}, {&field, 1});
  EXPECT_EQ(RangeOf(stream, {5, 0}, {3, 0}, false, 0).size(), 0u);
  const auto forward = RangeOf(stream, {5, 1}, {9, 0}, false, 2);
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_EQ(forward[0].first, (StreamId{6, 0}));
  const auto backward = RangeOf(stream, {5, 1}, {9, 0}, true, 3);
  ASSERT_EQ(backward.size(), 3u);
  EXPECT_EQ(backward[0].first, (StreamId{9, 0}));
  EXPECT_EQ(backward[2].first, (StreamId{7, 0}));
  Stream empty;
  EXPECT_EQ(RangeOf(empty, StreamId::Min(), StreamId::Max(), true, 0).size(), 0u);
  EXPECT_EQ(empty.CountAfter(StreamId::Min()), 0u);
}

// ---- restore of damaged bytes ---------------------------------------------------------------

// Truncations, byte flips and garbage: Restore either refuses them or yields a stream that
// passes its own checks and can be read end to end (the sanitizers watch the reads).
TEST(StreamTest, RestoreRejectsDamage) {
  std::mt19937_64 rng(7);
  std::vector<std::string> dumps;
  for (const Stream::Limits limits : {Stream::Limits{}, SmallLimits(), Stream::Limits{0, 7}}) {
    Stream stream(limits);
    uint64_t ms = 1;
    for (int i = 0; i < 60; ++i) {
      ms += rng() % 3;
      const std::string value(rng() % 12, static_cast<char>('a' + i % 26));
      std::vector<StreamField> fields = {{"f", value}};
      if (i % 5 == 0) fields.emplace_back("g", "x");
      stream.Append({ms, static_cast<uint64_t>(i)}, fields);
      if (i % 7 == 3) stream.Delete({ms, static_cast<uint64_t>(i)});
    }
    std::string dump;
    stream.Dump(&dump);
    dumps.push_back(dump);
  }
  size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string data = dumps[rng() % dumps.size()];
    const uint64_t kind = rng() % 4;
    if (kind == 0) {
      data.resize(rng() % data.size());
    } else if (kind == 3) {
      data.assign(rng() % 64, '\0');
      for (char& ch : data) ch = static_cast<char>(rng());
    } else {
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        data[rng() % data.size()] ^= static_cast<char>(1 + rng() % 255);
      if (kind == 2) data.resize(data.size() - rng() % 4);
    }
    Stream out(SmallLimits());
    if (!Stream::Restore(data, &out)) {
      EXPECT_EQ(out.size(), 0u);  // left as it was
      continue;
    }
    ++accepted;
    ASSERT_TRUE(out.CheckInvariants());
    size_t seen = 0;
    out.Range(StreamId::Min(), StreamId::Max(), round % 2 == 0, 0, [&](const StreamEntryView& e) {
      ++seen;
      EXPECT_FALSE(e.fields.empty());
      return true;
    });
    ASSERT_EQ(seen, out.size());
    if (!out.empty()) {
      ASSERT_TRUE(out.Find(out.first_id()).has_value());
      ASSERT_TRUE(out.Delete(out.last_live_id()));
      ASSERT_TRUE(out.CheckInvariants());
    }
    if (out.last_id() != StreamId::Max()) {
      const StreamField field{"f", "v"};
      out.Append(out.last_id().Next(), {&field, 1});
      ASSERT_TRUE(out.CheckInvariants());
    }
  }
  std::printf("[ fuzz     ] %zu of 20000 damaged dumps accepted\n", accepted);
  for (const std::string& dump : dumps) {
    Stream out;
    EXPECT_TRUE(Stream::Restore(dump, &out));
    for (size_t n = 0; n < dump.size(); ++n) {
      EXPECT_FALSE(Stream::Restore(std::string_view(dump).substr(0, n), &out)) << n;
    }
  }
}

}  // namespace
}  // namespace goblin
