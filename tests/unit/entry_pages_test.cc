// Tests of goblin::EntryPages alone: seeded randomized model tests against a std::map of
// ref -> entry bytes through appends, kills, compactions (every move checked against the
// relocations reported) and page frees, for set entries (one cell) and hash entries (two),
// plus the edges: 1-byte entries and their dead marker, entries that get a page of their own,
// the first page's growth, and chains emptied and refilled.

#include "core/entry_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/packed_cell.h"

namespace goblin {
namespace {

// Encoded cells of an entry: each text as a cell, back to back.
std::string EncodeEntry(const std::vector<std::string>& texts) {
  std::string out;
  for (const std::string& text : texts) {
    const CellInput cell = CellInput::Of(text);
    std::string bytes(cell.EncodedSize(), '\0');
    EncodeCell(reinterpret_cast<uint8_t*>(bytes.data()), cell);
    out += bytes;
  }
  return out;
}

// The pages beside a model of what each live ref holds, updated from the relocations.
class Model : public EntryRelocator {
 public:
  explicit Model(int cells) : pages(cells) {}

  void Relocated(EntryRef old_ref, EntryRef new_ref, const uint8_t* entry) override {
    ++relocations;
    const auto it = entries.find(old_ref);
    ASSERT_NE(it, entries.end()) << "moved an entry that is not live";
    ASSERT_EQ(ChainOfRef(old_ref), ChainOfRef(new_ref));
    ASSERT_LT(OffsetOfRef(new_ref), OffsetOfRef(old_ref)) << "compaction moves entries down";
    ASSERT_EQ(entry, pages.At(new_ref));
    const std::string bytes = std::move(it->second);
    entries.erase(it);
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(entry), bytes.size()), bytes);
    ASSERT_TRUE(entries.emplace(new_ref, bytes).second) << "moved onto a live entry";
  }

  EntryRef Append(uint32_t chain, const std::string& bytes) {
    EntryRef ref;
    uint8_t* p = pages.Append(chain, bytes.size(), &ref);
    std::memcpy(p, bytes.data(), bytes.size());
    EXPECT_EQ(ChainOfRef(ref), chain);
    EXPECT_TRUE(entries.emplace(ref, bytes).second) << "two live entries at one ref";
    return ref;
  }
  void Kill(EntryRef ref) {
    entries.erase(ref);
    pages.Kill(ref, this);
  }

  // Every live entry reads back as written, ForEach lists exactly them, counters agree.
  void Check() {
    ASSERT_EQ(pages.Validate(), "");
    size_t live = 0;
    for (const auto& [ref, bytes] : entries) {
      const uint8_t* at = pages.At(ref);
      ASSERT_EQ(std::string(reinterpret_cast<const char*>(at), bytes.size()), bytes);
      ASSERT_EQ(pages.EntrySize(at), bytes.size());
      live += bytes.size();
    }
    EXPECT_EQ(pages.live_bytes(), live);
    std::map<EntryRef, std::string> listed;
    pages.ForEach([&](EntryRef ref, const uint8_t* entry, size_t size) {
      listed.emplace(ref, std::string(reinterpret_cast<const char*>(entry), size));
    });
    ASSERT_EQ(listed, entries);
    EXPECT_GE(pages.MemoryUsage(), pages.page_bytes());
    EXPECT_LE(pages.dead_bytes() * 3, pages.page_bytes());
  }

  EntryPages pages;
  std::map<EntryRef, std::string> entries;
  size_t relocations = 0;
};

TEST(EntryPagesTest, AppendReadsBackAndKillFreesThePage) {
  Model m(1);
  const EntryRef a = m.Append(3, EncodeEntry({"hello"}));
  const EntryRef b = m.Append(3, EncodeEntry({"world"}));
  EXPECT_EQ(OffsetOfRef(a), 0u);
  EXPECT_EQ(OffsetOfRef(b), 6u);  // "hello" is a 6-byte cell, the next entry follows it
  m.Check();
  EXPECT_EQ(m.pages.page_count(), 1u);
  // Half the page dead: it compacts, and "world" moves down to where "hello" was.
  m.Kill(a);
  m.Check();
  EXPECT_EQ(m.relocations, 1u);
  ASSERT_EQ(m.entries.size(), 1u);
  EXPECT_EQ(m.entries.begin()->first, a);
  m.Kill(a);
  m.Check();
  EXPECT_EQ(m.pages.page_count(), 0u);
  EXPECT_EQ(m.pages.page_bytes(), 0u);
  EXPECT_EQ(m.pages.dead_bytes(), 0u);
  // The emptied chain starts again with a small first page.
  m.Append(3, EncodeEntry({"again"}));
  m.Check();
  EXPECT_LT(m.pages.page_bytes(), size_t{EntryPages::kPageBytes});
}

TEST(EntryPagesTest, OneByteEntriesAndTheirDeadMarker) {
  // Small integers and "" are 1-byte cells: a dead 1-byte entry is the single 0xFD marker.
  Model m(1);
  std::vector<EntryRef> refs;
  for (int i = 0; i < 59; ++i) refs.push_back(m.Append(0, EncodeEntry({std::to_string(i)})));
  refs.push_back(m.Append(0, EncodeEntry({""})));
  for (EntryRef ref : refs) ASSERT_EQ(m.pages.EntrySize(m.pages.At(ref)), 1u);
  // Kill every third entry: lone 1-byte holes, a third of the page, not above it.
  for (size_t i = 0; i < refs.size(); i += 3) m.Kill(refs[i]);
  m.Check();
  EXPECT_EQ(m.relocations, 0u);
  EXPECT_EQ(m.pages.dead_bytes(), 20u);
  // One more hole passes a third: the page compacts and holds no holes.
  m.Kill(refs[1]);
  m.Check();
  EXPECT_GT(m.relocations, 0u);
  EXPECT_EQ(m.pages.dead_bytes(), 0u);
}

TEST(EntryPagesTest, DeadRunsOfEverySize) {
  // Holes of 2..300 bytes: the varint after 0xFC takes one byte, then two (>= 128).
  for (size_t length : {1, 2, 126, 127, 128, 129, 300}) {
    SCOPED_TRACE("length " + std::to_string(length));
    Model m(1);
    const EntryRef keep1 = m.Append(5, EncodeEntry({std::string(400, 'a')}));
    const EntryRef hole = m.Append(5, EncodeEntry({std::string(length, 'x')}));
    const EntryRef keep2 = m.Append(5, EncodeEntry({std::string(400, 'b')}));
    m.Kill(hole);
    m.Check();
    EXPECT_EQ(m.relocations, 0u);
    EXPECT_TRUE(m.entries.count(keep1) && m.entries.count(keep2));
  }
}

TEST(EntryPagesTest, LargeEntriesGetPagesOfTheirOwn) {
  Model m(2);
  const EntryRef small = m.Append(1, EncodeEntry({"field", "value"}));
  const std::string at_limit_value(EntryPages::kOwnPageBytes - 6 - 3, 'v');
  const EntryRef shared = m.Append(1, EncodeEntry({"field", at_limit_value}));
  EXPECT_EQ(m.entries[shared].size(), size_t{EntryPages::kOwnPageBytes});
  const EntryRef own = m.Append(1, EncodeEntry({"f", std::string(EntryPages::kOwnPageBytes, 'w')}));
  const EntryRef huge = m.Append(1, EncodeEntry({"g", std::string(20000, 'z')}));
  m.Check();
  // Own pages start at offset 0 of a page of their own.
  EXPECT_EQ(OffsetOfRef(own) & (EntryPages::kPageBytes - 1), 0u);
  EXPECT_EQ(OffsetOfRef(huge) & (EntryPages::kPageBytes - 1), 0u);
  EXPECT_NE(OffsetOfRef(own) >> EntryPages::kPageBits, OffsetOfRef(small) >> EntryPages::kPageBits);
  EXPECT_NE(OffsetOfRef(huge) >> EntryPages::kPageBits, OffsetOfRef(own) >> EntryPages::kPageBits);
  // The next small entry goes on the append page, not after an own page's entry.
  const EntryRef next = m.Append(1, EncodeEntry({"x", "y"}));
  EXPECT_EQ(OffsetOfRef(next) >> EntryPages::kPageBits,
            OffsetOfRef(small) >> EntryPages::kPageBits);
  const size_t pages_before = m.pages.page_count();
  m.Kill(huge);
  m.Check();
  EXPECT_EQ(m.pages.page_count(), pages_before - 1);
  m.Kill(own);
  m.Check();
  EXPECT_EQ(m.pages.page_count(), pages_before - 2);
}

TEST(EntryPagesTest, FirstPageGrowsThenFullPagesFollow) {
  Model m(1);
  const std::string entry = EncodeEntry({std::string(99, 'm')});  // 100 bytes
  size_t last_bytes = 0;
  for (int i = 0; i < 81; ++i) {
    m.Append(7, entry);
    // One page grows in place (by realloc) until it holds 8 KB.
    ASSERT_EQ(m.pages.page_count(), 1u) << i;
    ASSERT_GE(m.pages.page_bytes(), last_bytes);
    last_bytes = m.pages.page_bytes();
  }
  EXPECT_LE(m.pages.page_bytes(), size_t{EntryPages::kPageBytes});
  m.Append(7, entry);
  EXPECT_EQ(m.pages.page_count(), 2u);
  m.Check();
}

TEST(EntryPagesTest, CompactionShrinksAPageThatIsNotAppendedTo) {
  Model m(1);
  const std::string entry = EncodeEntry({std::string(63, 'q')});  // 64 bytes
  std::vector<EntryRef> refs;
  for (int i = 0; i < 300; ++i) refs.push_back(m.Append(2, entry));
  ASSERT_GE(m.pages.page_count(), 2u);
  const size_t bytes_before = m.pages.page_bytes();
  // Kill most of the first page's entries, lowest first (refs go stale as the page compacts):
  // it compacts, more than once, and gives its room back.
  const uint32_t first_page = OffsetOfRef(refs[0]) >> EntryPages::kPageBits;
  for (int i = 0; i < 110; ++i) {
    const EntryRef lowest = m.entries.begin()->first;
    ASSERT_EQ(OffsetOfRef(lowest) >> EntryPages::kPageBits, first_page);
    m.Kill(lowest);
  }
  m.Check();
  EXPECT_GT(m.relocations, 0u);
  EXPECT_LT(m.pages.page_bytes(), bytes_before);
}

void RunModel(uint64_t seed, int cells, int steps) {
  SCOPED_TRACE("seed=" + std::to_string(seed) + " cells=" + std::to_string(cells));
  std::mt19937_64 rng(seed);
  Model m(cells);
  auto text = [&]() -> std::string {
    switch (rng() % 8) {
      case 0:
        return std::to_string(static_cast<int64_t>(rng() % 200) - 50);  // 1- and 2-byte cells
      case 1:
        return std::to_string(static_cast<int64_t>(rng()));  // up to 9-byte integer cells
      case 2:
        return std::string(rng() % 3000, static_cast<char>('a' + rng() % 26));  // own pages too
      case 3:
        return std::string(100 + rng() % 200, 'L');  // long-string cells (varint length)
      default:
        return "member:" + std::to_string(rng() % 100000);
    }
  };
  int grow_percent = 65;
  for (int step = 0; step < steps; ++step) {
    if (step % 3000 == 0) grow_percent = grow_percent == 65 ? 35 : 65;
    if (m.entries.empty() || static_cast<int>(rng() % 100) < grow_percent) {
      std::vector<std::string> texts;
      for (int c = 0; c < cells; ++c) texts.push_back(text());
      // Few chains now and then, so single chains hold many pages.
      const uint32_t chain = static_cast<uint32_t>(rng() % (step % 2 ? 16 : 2));
      m.Append(chain, EncodeEntry(texts));
    } else {
      auto it = m.entries.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % m.entries.size()));
      m.Kill(it->first);
    }
    if (::testing::Test::HasFatalFailure()) return;
    if (step % 500 == 499) {
      m.Check();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  m.Check();
  // Drain: every page is freed once its entries are gone.
  while (!m.entries.empty()) m.Kill(m.entries.begin()->first);
  m.Check();
  EXPECT_EQ(m.pages.page_count(), 0u);
  EXPECT_EQ(m.pages.page_bytes(), 0u);
}

TEST(EntryPagesTest, RandomizedModelOfSetEntries) {
  for (uint64_t seed : {1, 2, 3}) RunModel(seed, 1, 15000);
}

TEST(EntryPagesTest, RandomizedModelOfHashEntries) {
  for (uint64_t seed : {4, 5, 6}) RunModel(seed, 2, 15000);
}

}  // namespace
}  // namespace goblin
