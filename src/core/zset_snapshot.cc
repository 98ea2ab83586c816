// The sorted set's snapshot value (docs/FORMAT.md, "Sorted set"): a head (form, member count,
// longest member, run count), then the packed runs as the set holds them (zset_packed.h), one
// leaf's run at a time for the large form, so that loading copies runs into leaves.
#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "core/hashing.h"
#include "core/zset_member_index.h"
#include "core/zset_object.h"

namespace goblin {

namespace {

// Decodes one packed run (zset_packed.h) with every bound checked, feeding each entry to fn.
// prev_key/prev_member carry the order check across the runs of one set.
template <typename Fn>
bool ReadRun(std::string_view run, uint64_t count, bool* have_prev, uint64_t* prev_key,
             std::string_view* prev_member, std::string* what, Fn&& fn) {
  ByteReader reader(run);
  uint64_t key = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t delta, length;
    std::string_view member;
    if (!reader.Var(&delta) || !reader.Var(&length) || !reader.Bytes(length >> 1, &member)) {
      *what = "sorted set run ends inside an entry";
      return false;
    }
    if (i > 0 && key + delta < key) {
      *what = "sorted set score out of order";
      return false;
    }
    key = (i == 0) ? delta : key + delta;
    if (*have_prev && CompareZsetKeys(*prev_key, *prev_member, key, member) >= 0) {
      *what = "sorted set entries out of order or repeated";
      return false;
    }
    if ((length & 1) && key != ScoreToKey(0.0)) {
      *what = "sorted set entry marks a non-zero score as -0";
      return false;
    }
    const double score = KeyToScore(key, length & 1);
    if (std::isnan(score)) {
      *what = "sorted set score is NaN";
      return false;
    }
    *have_prev = true;
    *prev_key = key;
    *prev_member = member;
    fn(score, member);
  }
  if (!reader.done()) {
    *what = "sorted set run longer than its entries";
    return false;
  }
  return true;
}

struct RunRef {
  std::string_view bytes;
  uint32_t count;
};

// The large form's fast path: each run becomes a leaf by one copy while the entries are
// checked, hashed and indexed (on a second thread for big sets: the two halves touch
// disjoint memory and take about as long each).
bool CopyRuns(const std::vector<RunRef>& refs, uint64_t longest, SortedSet& set,
              std::string* what) {
  uint64_t count = 0;
  for (const RunRef& ref : refs) count += ref.count;
  ZsetMemberIndex index;
  std::string index_error;
  auto build_index = [&] {
    std::vector<std::pair<uint64_t, uint32_t>> entries;
    entries.reserve(static_cast<size_t>(count));
    bool have_prev = false;
    uint64_t prev_key = 0;
    std::string_view prev_member;
    size_t longest_seen = 0;
    for (size_t r = 0; r < refs.size(); ++r) {
      const uint32_t leaf = static_cast<uint32_t>(r);  // AppendRun numbers leaves in order
      const bool ok = ReadRun(refs[r].bytes, refs[r].count, &have_prev, &prev_key, &prev_member,
                              &index_error, [&](double, std::string_view member) {
                                longest_seen = std::max(longest_seen, member.size());
                                entries.emplace_back(HashBytes(member), leaf);
                              });
      if (!ok) return;
    }
    if (longest_seen != longest) {
      index_error = "sorted set longest member does not match its runs";
      return;
    }
    index.BulkLoad(entries);
  };
  constexpr uint64_t kThreadedMembers = 1 << 16;
  std::thread builder;
  if (count >= kThreadedMembers) {
    builder = std::thread(build_index);
  } else {
    build_index();
  }
  bool numbered_in_order = true;
  for (size_t r = 0; r < refs.size(); ++r) {
    const uint32_t leaf = set.AppendRun(reinterpret_cast<const uint8_t*>(refs[r].bytes.data()),
                                        refs[r].count, static_cast<uint32_t>(refs[r].bytes.size()));
    numbered_in_order = numbered_in_order && leaf == r;
  }
  if (builder.joinable()) builder.join();
  if (!index_error.empty()) {
    *what = index_error;
    return false;
  }
  if (!numbered_in_order) {
    *what = "internal: leaves were not numbered in run order";
    return false;
  }
  set.AdoptIndex(index);
  return true;
}

}  // namespace

void ZsetObject::AppendSnapshotValue(std::string* out, std::string* /*scratch*/) const {
  const SortedSet& set = set_;
  size_t runs = 0;
  size_t run_bytes = 0;
  size_t longest = 0;
  set.ForEachRun([&](const uint8_t* run, size_t entries, size_t bytes) {
    ++runs;
    run_bytes += VarintSize(entries) + VarintSize(bytes) + bytes;
    const uint8_t* p = run;
    ZsetEntry e;
    for (size_t i = 0; i < entries; ++i) {
      p = DecodeZsetEntry(p, e.key, &e);
      longest = std::max(longest, e.member.size());
    }
  });
  const uint8_t form =
      set.encoding() == SortedSet::Encoding::kSkiplist ? kSnapshotLarge : kSnapshotSmall;
  const size_t value_bytes =
      1 + VarintSize(set.size()) + VarintSize(longest) + VarintSize(runs) + run_bytes;
  AppendVar(out, value_bytes);
  AppendU8(out, form);
  AppendVar(out, set.size());
  AppendVar(out, longest);
  AppendVar(out, runs);
  set.ForEachRun([&](const uint8_t* run, size_t entries, size_t bytes) {
    AppendVar(out, entries);
    AppendVar(out, bytes);
    out->append(reinterpret_cast<const char*>(run), bytes);
  });
}

Collection* ZsetObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                       std::string* what) {
  ByteReader reader(bytes);
  uint8_t form;
  uint64_t count, longest, runs;
  if (!reader.U8(&form) || !reader.Var(&count) || !reader.Var(&longest) || !reader.Var(&runs) ||
      form > kSnapshotLarge) {
    *what = "malformed sorted set head";
    return nullptr;
  }
  if (count == 0 || count > bytes.size() || runs > count) {
    *what = "sorted set member count " + std::to_string(count) + " is impossible here";
    return nullptr;
  }
  std::vector<RunRef> refs;
  refs.reserve(static_cast<size_t>(runs));
  uint64_t listed = 0;
  bool leaf_sized = true;  // every run fits a leaf of the large form as it is
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t entries;
    std::string_view run;
    if (!reader.Var(&entries) || !reader.LengthPrefixed(&run) || entries == 0 ||
        entries > count - listed) {
      *what = "malformed sorted set run " + std::to_string(r);
      return nullptr;
    }
    listed += entries;
    leaf_sized = leaf_sized && (run.size() <= ZsetTree::kLeafPayload || entries == 1);
    refs.push_back({run, static_cast<uint32_t>(entries)});
  }
  if (!reader.done() || listed != count) {
    *what = "sorted set counts do not match its runs";
    return nullptr;
  }
  auto object = std::make_unique<ZsetObject>(static_cast<size_t>(count),
                                             static_cast<size_t>(longest), limits.zset);
  SortedSet& set = object->set();
  const bool small = set.encoding() == SortedSet::Encoding::kListpack;
  if (!small && leaf_sized) {
    if (!CopyRuns(refs, longest, set, what)) return nullptr;
    return object.release();
  }
  bool have_prev = false;
  uint64_t prev_key = 0;
  std::string_view prev_member;
  size_t longest_seen = 0;
  for (const RunRef& ref : refs) {
    const bool ok =
        ReadRun(ref.bytes, ref.count, &have_prev, &prev_key, &prev_member, what,
                [&](double score, std::string_view member) {
                  longest_seen = std::max(longest_seen, member.size());
                  // The small form never stores -0 (zset_object.h, invariant 2).
                  set.AppendSorted(small && score == 0 ? 0.0 : score, member, limits.zset);
                });
    if (!ok) return nullptr;
  }
  if (longest_seen != longest) {
    *what = "sorted set longest member does not match its runs";
    return nullptr;
  }
  set.FinishAppends();
  return object.release();
}

}  // namespace goblin
