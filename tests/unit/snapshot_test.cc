// Tests of the Goblin snapshot (persist/snapshot_format.h): seeded random keyspaces written
// with WriteSnapshotToFd and loaded back, compared with a plain std:: model; the form a
// collection takes under other limits; a 200k-member sorted set; every truncation and every
// single-bit flip of a small file; and hand-made files (with correct checks, built section by
// section) that break one semantic rule each and must be refused with a precise message.

#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/zset_object.h"
#include "keyspace/database.h"
#include "persist/snapshot_format.h"
#include "persist/snapshot_loader.h"
#include "persist/snapshot_writer.h"

namespace goblin {
namespace {

constexpr int64_t kNowMs = 1'700'000'000'000;
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kDatabases = 6;

// ---- The model ---------------------------------------------------------------------------

using ModelHash = std::map<std::string, std::string>;
using ModelSet = std::set<std::string>;
using ModelZset = std::map<std::string, double>;  // member -> score
using ModelList = std::vector<std::string>;
using ModelValue = std::variant<std::string, ModelHash, ModelSet, ModelZset, ModelList>;

struct ModelKey {
  ModelValue value;
  std::optional<int64_t> deadline;
  std::string encoding;  // what the original object's OBJECT ENCODING said
};

// database index -> key -> what the key holds
using Model = std::map<size_t, std::map<std::string, ModelKey>>;

ValueType TypeOf(const ModelValue& value) {
  switch (value.index()) {
    case 0:
      return ValueType::kString;
    case 1:
      return ValueType::kHash;
    case 2:
      return ValueType::kSet;
    case 3:
      return ValueType::kZSet;
    default:
      return ValueType::kList;
  }
}

bool Alive(const ModelKey& key) { return !key.deadline || *key.deadline > kNowMs; }

// Redis's choice for a string SET stores: integer text that reads back the same is "int",
// other text up to 44 bytes "embstr", longer text "raw".
std::string StringEncodingOf(const std::string& value) {
  int64_t integer;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), integer);
  if (error == std::errc() && end == value.data() + value.size() &&
      std::to_string(integer) == value) {
    return "int";
  }
  return value.size() <= 44 ? "embstr" : "raw";
}

// Same bits, not just equal: -0.0 must stay -0.0.
bool SameScore(double a, double b) { return std::signbit(a) == std::signbit(b) && a == b; }

std::string Printable(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

// (score, member) in Redis order: by score (-0 ties with +0), then member bytes.
std::vector<std::pair<double, std::string>> ZsetOrder(const ModelZset& zset) {
  std::vector<std::pair<double, std::string>> out;
  for (const auto& [member, score] : zset) out.emplace_back(score, member);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second < b.second;
  });
  return out;
}

// The element sequence a hash or set reports, for comparing listpack/intset order.
std::vector<std::string> Sequence(const KeyEntry* entry) {
  std::vector<std::string> out;
  if (entry->type() == ValueType::kHash) {
    static_cast<const HashObject*>(entry->object())
        ->hash()
        .ForEach([&](std::string_view field, std::string_view value) {
          out.emplace_back(field);
          out.emplace_back(value);
        });
  } else if (entry->type() == ValueType::kSet) {
    static_cast<const SetObject*>(entry->object())->set().ForEach([&](std::string_view member) {
      out.emplace_back(member);
    });
  }
  return out;
}

// Compares one stored entry with the model: type, deadline, value and (if asked) encoding.
void ExpectEntryMatches(const ModelKey& want, const KeyEntry* entry, bool check_encoding,
                        const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->type(), TypeOf(want.value));
  ASSERT_EQ(entry->has_expire(), want.deadline.has_value());
  if (want.deadline) {
    EXPECT_EQ(entry->expire_ms(), *want.deadline);
  }
  // A list's encoding is chosen afresh when it loads (packed_list_test.cc checks that rule).
  if (check_encoding && entry->type() != ValueType::kList) {
    EXPECT_EQ(entry->EncodingName(), want.encoding);
  }
  switch (entry->type()) {
    case ValueType::kStream:
      // The model holds no streams (stream_test.cc checks their dump and restore).
      ADD_FAILURE() << "a stream where the model has a " << static_cast<int>(TypeOf(want.value));
      break;
    case ValueType::kList: {
      const PackedList& list = static_cast<const ListObject*>(entry->object())->list();
      ModelList got;
      list.ForEach(0, list.size(), [&](std::string_view element) { got.emplace_back(element); });
      EXPECT_EQ(got, std::get<ModelList>(want.value));
      break;
    }
    case ValueType::kString: {
      char scratch[32];
      EXPECT_EQ(Printable(entry->string_value(scratch)),
                Printable(std::get<std::string>(want.value)));
      break;
    }
    case ValueType::kHash: {
      const PackedHash& hash = static_cast<const HashObject*>(entry->object())->hash();
      EXPECT_EQ(hash.Validate(), "");
      ModelHash got;
      size_t visits = 0;
      hash.ForEach([&](std::string_view field, std::string_view value) {
        got[std::string(field)] = std::string(value);
        ++visits;
      });
      const ModelHash& expected = std::get<ModelHash>(want.value);
      EXPECT_EQ(hash.size(), expected.size());
      EXPECT_EQ(visits, expected.size());
      EXPECT_TRUE(got == expected) << "hash contents differ";
      char scratch[32];
      for (const auto& [field, value] : expected) {
        const auto found = hash.Get(field, scratch);
        ASSERT_TRUE(found.has_value()) << Printable(field);
        EXPECT_EQ(*found, value) << Printable(field);
      }
      break;
    }
    case ValueType::kSet: {
      const PackedSet& set = static_cast<const SetObject*>(entry->object())->set();
      EXPECT_EQ(set.Validate(), "");
      ModelSet got;
      size_t visits = 0;
      set.ForEach([&](std::string_view member) {
        got.emplace(member);
        ++visits;
      });
      const ModelSet& expected = std::get<ModelSet>(want.value);
      EXPECT_EQ(set.size(), expected.size());
      EXPECT_EQ(visits, expected.size());
      EXPECT_TRUE(got == expected) << "set contents differ";
      for (const std::string& member : expected) {
        EXPECT_TRUE(set.Contains(member)) << Printable(member);
      }
      break;
    }
    case ValueType::kZSet: {
      const SortedSet& set = static_cast<const ZsetObject*>(entry->object())->set();
      EXPECT_EQ(set.Validate(), "");
      const auto expected = ZsetOrder(std::get<ModelZset>(want.value));
      ASSERT_EQ(set.size(), expected.size());
      size_t rank = 0;
      set.ForEachInRankRange(0, set.size(), false, [&](double score, std::string_view member) {
        EXPECT_TRUE(SameScore(score, expected[rank].first))
            << "rank " << rank << ": " << score << " vs " << expected[rank].first;
        EXPECT_EQ(Printable(member), Printable(expected[rank].second)) << "rank " << rank;
        ++rank;
      });
      for (size_t i = 0; i < expected.size(); i += 1 + expected.size() / 64) {
        const auto score = set.Score(expected[i].second);
        ASSERT_TRUE(score.has_value()) << Printable(expected[i].second);
        EXPECT_TRUE(SameScore(*score, expected[i].first));
        EXPECT_EQ(set.Rank(expected[i].second), std::optional<size_t>(i));
      }
      break;
    }
  }
}

// ---- Building keyspaces --------------------------------------------------------------------

// Random keys of every type, each added to a Database (through the same calls the commands
// make) and to the model, so the model also says which form the original took.
class KeyspaceGenerator {
 public:
  KeyspaceGenerator(uint64_t seed, size_t scale) : rng_(seed), scale_(scale) {}

  uint64_t Uniform(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }

  std::string IntegerText() {
    static const int64_t kSpecial[] = {kInt64Min,     kInt64Max, 0,         -1,   1,
                                       kInt64Min + 1, 127,       128,       -128, 32767,
                                       -32768,        65536,     4294967296};
    switch (Uniform(4)) {
      case 0:
        return std::to_string(kSpecial[Uniform(std::size(kSpecial))]);
      case 1:
        return std::to_string(static_cast<int64_t>(rng_()));
      default:
        return std::to_string(static_cast<int64_t>(Uniform(2001)) - 1000);
    }
  }

  // Bytes from the whole range, zero bytes included.
  std::string Binary(size_t length) {
    std::string out(length, '\0');
    for (char& c : out) c = OneIn(4) ? '\0' : static_cast<char>(Uniform(256));
    return out;
  }

  std::string Text(size_t length) {
    static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz:_-0123456789";
    std::string out(length, ' ');
    for (char& c : out) c = kAlphabet[Uniform(kAlphabet.size())];
    return out;
  }

  // A collection element: integer text, look-alikes that are not integers, short text,
  // binary, empty, and (when allowed) longer than the 64-byte listpack limit.
  std::string Element(bool allow_long) {
    switch (Uniform(allow_long ? 9 : 8)) {
      case 0:
      case 1:
        return IntegerText();
      case 2: {
        static const char* kNotIntegers[] = {
            "007", "-0",   "+1", " 1", "1 ", "9223372036854775808", "-9223372036854775809",
            "1e3", "0x10", "--1"};
        return kNotIntegers[Uniform(std::size(kNotIntegers))];
      }
      case 3:
        return Binary(Uniform(12));
      case 4:
        return OneIn(8) ? std::string() : Text(1 + Uniform(8));
      case 5:
      case 6:
      case 7:
        return "m:" + std::to_string(Uniform(1'000'000)) + Text(Uniform(10));
      default:
        return Text(65 + Uniform(100));
    }
  }

  double Score() {
    static const double kSpecial[] = {-0.0,
                                      0.0,
                                      kInf,
                                      -kInf,
                                      4.9e-324,
                                      -4.9e-324,
                                      std::numeric_limits<double>::min() / 3,
                                      -std::numeric_limits<double>::min() / 7,
                                      std::numeric_limits<double>::min(),
                                      std::numeric_limits<double>::max(),
                                      -std::numeric_limits<double>::max(),
                                      1e-300,
                                      0.1,
                                      -2.5};
    switch (Uniform(6)) {
      case 0:
        return kSpecial[Uniform(std::size(kSpecial))];
      case 1:
      case 2:
        return static_cast<double>(Uniform(5));  // equal scores, ordered by member
      case 3: {
        double score;
        do {
          const uint64_t bits = rng_();
          std::memcpy(&score, &bits, sizeof(score));
        } while (std::isnan(score));
        return score;
      }
      default:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
    }
  }

  // How many elements a collection gets: mostly small, sometimes past the listpack limits.
  size_t CollectionSize() {
    if (OneIn(60)) return 4000 + Uniform(1000 * scale_);  // a record bigger than kBatchBytes
    switch (Uniform(8)) {
      case 0:
        return 129 + Uniform(100 * scale_);
      case 1:
        return 100 + Uniform(60);  // around the 128 limit
      default:
        return 1 + Uniform(20);
    }
  }

  std::optional<int64_t> Deadline() {
    const uint64_t roll = Uniform(100);
    if (roll < 12) return kNowMs + 1 + static_cast<int64_t>(Uniform(10'000'000'000));
    if (roll < 14) return kNowMs + 1;  // alive by one millisecond
    if (roll == 14) return kInt64Max;
    if (roll < 19) return kNowMs - static_cast<int64_t>(Uniform(10'000'000'000));
    if (roll == 19) return kNowMs;  // a deadline at load time has passed
    return std::nullopt;
  }

  std::string KeyName(size_t n) {
    switch (Uniform(10)) {
      case 0:
        return Binary(1 + Uniform(30));
      case 1:
        return Text(60 + Uniform(200));
      case 2:
        return IntegerText();
      default:
        return "key:" + std::to_string(n) + ":" + Text(Uniform(6));
    }
  }

  ModelKey AddString(Database* db, const std::string& key, std::optional<int64_t> deadline) {
    std::string value;
    switch (Uniform(8)) {
      case 0:
      case 1:
        value = IntegerText();
        break;
      case 2:
        value = Text(45 + Uniform(300));  // raw
        break;
      case 3:
        value = Binary(1 + Uniform(60));
        break;
      case 4:
        value = std::string();
        break;
      case 5:
        value = OneIn(2) ? "99999999999999999999" : "-0";
        break;
      default:
        value = Text(1 + Uniform(44));  // embstr
        break;
    }
    db->Put(key, EntryValue::String(value), deadline);
    return ModelKey{value, deadline, StringEncodingOf(value)};
  }

  ModelKey AddHash(Database* db, const std::string& key, std::optional<int64_t> deadline) {
    const HashLimits limits;
    auto* object = new HashObject();
    PackedHash& hash = object->hash();
    ModelHash model;
    const size_t fields = CollectionSize();
    const bool long_values = OneIn(5);
    for (size_t i = 0; i < fields; ++i) {
      std::string field = OneIn(3) ? IntegerText() : Element(long_values && OneIn(20));
      std::string value;
      switch (Uniform(4)) {
        case 0:
          value = IntegerText();
          break;
        case 1:
          value = long_values && OneIn(3) ? Text(65 + Uniform(200)) : Binary(Uniform(20));
          break;
        default:
          value = Element(long_values && OneIn(4));
          break;
      }
      // Overwriting a long value with a short one would leave a hashtable that no longer
      // needs to be one, which a load rightly turns back into a listpack (as Redis's does).
      const auto old = model.find(field);
      if (old != model.end() && old->second.size() > limits.max_listpack_value) continue;
      hash.PrepareForInsert(1, std::max(field.size(), value.size()), limits);
      hash.Set(field, value, limits);
      model[field] = value;
    }
    const std::string encoding = hash.EncodingName();
    db->Put(key, EntryValue::Object(object), deadline);
    return ModelKey{std::move(model), deadline, encoding};
  }

  ModelKey AddSet(Database* db, const std::string& key, std::optional<int64_t> deadline) {
    const SetLimits limits;
    ModelSet model;
    size_t members = CollectionSize();
    const uint64_t shape = Uniform(5);
    if (shape == 0 && OneIn(2)) members = 400 + Uniform(200 * scale_);  // intset or past 512
    std::string first;
    PackedSet* set = nullptr;
    SetObject* object = nullptr;
    for (size_t i = 0; i < members; ++i) {
      std::string member;
      switch (shape) {
        case 0:  // all integers
          member = IntegerText();
          break;
        case 1:  // integers first, then other members (intset -> listpack or hashtable)
          member = i < members / 2 ? IntegerText() : Element(false);
          break;
        case 2:  // may hold a member longer than 64 bytes
          member = Element(OneIn(10));
          break;
        default:
          member = Element(false);
          break;
      }
      if (object == nullptr) {
        object = new SetObject(PackedSet(member, 1, limits));
        set = &object->set();
      }
      set->PrepareForInsert(1, limits);
      set->Add(member, limits);
      model.insert(member);
    }
    const std::string encoding = set->EncodingName();
    db->Put(key, EntryValue::Object(object), deadline);
    return ModelKey{std::move(model), deadline, encoding};
  }

  ModelKey AddList(Database* db, const std::string& key, std::optional<int64_t> deadline) {
    ListLimits limits;
    limits.compress_depth = OneIn(3) ? 1 : 0;
    ModelList model;
    const size_t elements = OneIn(4) ? 600 + Uniform(1000 * scale_) : CollectionSize();
    auto* object = new ListObject();
    PackedList& list = object->list();
    for (size_t i = 0; i < elements; ++i) {
      std::string element = OneIn(3) ? IntegerText() : Element(OneIn(20));
      list.ConvertForGrowth(1, element.size(), limits);
      if (OneIn(2)) {
        list.PushBack(element, limits);
        model.push_back(std::move(element));
      } else {
        list.PushFront(element, limits);
        model.insert(model.begin(), std::move(element));
      }
    }
    const std::string encoding(list.EncodingName());
    db->Put(key, EntryValue::Object(object), deadline);
    return ModelKey{std::move(model), deadline, encoding};
  }

  ModelKey AddZset(Database* db, const std::string& key, std::optional<int64_t> deadline) {
    const ZsetLimits limits;
    ModelZset model;
    const size_t members = CollectionSize();
    const bool long_members = OneIn(6);
    ZsetObject* object = nullptr;
    for (size_t i = 0; i < members; ++i) {
      // A repeated member updates its score (ZADD over an existing member).
      std::string member = (!model.empty() && OneIn(10))
                               ? std::next(model.begin(), Uniform(model.size()))->first
                               : Element(long_members && OneIn(8));
      const double score = Score();
      if (object == nullptr) object = new ZsetObject(1, member.size(), limits);
      ZsetObject::Insert(object->set(), score, member, limits);
      // The small form stores -0 as 0 (zset_object.h, invariant 2).
      const bool small = object->set().encoding() == SortedSet::Encoding::kListpack;
      model[member] = (small && score == 0) ? 0.0 : score;
    }
    const std::string encoding = object->set().EncodingName();
    db->Put(key, EntryValue::Object(object), deadline);
    return ModelKey{std::move(model), deadline, encoding};
  }

  // Fills db with `keys` random keys and records them in *model.
  void Fill(Database* db, size_t keys, std::map<std::string, ModelKey>* model) {
    for (size_t n = 0; n < keys; ++n) {
      std::string key = OneIn(200) ? std::string() : KeyName(n);
      if (model->count(key)) continue;
      const std::optional<int64_t> deadline = Deadline();
      ModelKey value;
      switch (Uniform(5)) {
        case 0:
          value = AddString(db, key, deadline);
          break;
        case 1:
          value = AddHash(db, key, deadline);
          break;
        case 2:
          value = AddSet(db, key, deadline);
          break;
        case 3:
          value = AddList(db, key, deadline);
          break;
        default:
          value = AddZset(db, key, deadline);
          break;
      }
      (*model)[key] = std::move(value);
    }
  }

 private:
  std::mt19937_64 rng_;
  size_t scale_;
};

// ---- Files ---------------------------------------------------------------------------------

// A file from mkstemp under /tmp, removed at the end of the test.
class TempFile {
 public:
  TempFile() {
    char name[] = "/tmp/goblin-snapshot-test-XXXXXX";
    fd_ = mkstemp(name);
    path_ = name;
  }
  ~TempFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  std::string Contents() const {
    std::string out;
    char buffer[1 << 16];
    off_t at = 0;
    while (true) {
      const ssize_t n = pread(fd_, buffer, sizeof(buffer), at);
      if (n <= 0) break;
      out.append(buffer, static_cast<size_t>(n));
      at += n;
    }
    return out;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

std::vector<const Database*> ConstPointers(const std::vector<Database>& dbs) {
  std::vector<const Database*> out;
  for (const Database& db : dbs) out.push_back(&db);
  return out;
}

std::vector<Database*> Pointers(std::vector<Database>& dbs) {
  std::vector<Database*> out;
  for (Database& db : dbs) out.push_back(&db);
  return out;
}

// Writes dbs through WriteSnapshotToFd into file and returns the bytes written.
std::string Save(const std::vector<Database>& dbs, const TempFile& file,
                 SnapshotSaveStats* stats = nullptr) {
  SnapshotSaveStats local;
  std::string error;
  EXPECT_TRUE(WriteSnapshotToFd(ConstPointers(dbs), {}, file.fd(), kNowMs - 5, &local, &error))
      << error;
  std::string bytes = file.Contents();
  EXPECT_EQ(local.bytes, bytes.size());
  if (stats != nullptr) *stats = local;
  return bytes;
}

struct LoadResult {
  bool ok = false;
  std::string error;
  SnapshotLoadStats stats;
  std::vector<SnapshotSection> sections;
};

LoadResult Load(const std::string& name, std::string_view data, std::vector<Database>* dbs,
                const EncodingLimits& limits = EncodingLimits{}) {
  SnapshotLoader loader(name, data, limits);
  LoadResult result;
  result.ok = loader.Load(Pointers(*dbs), kNowMs, nullptr, nullptr, &result.error);
  result.stats = loader.stats();
  result.sections = loader.sections();
  return result;
}

// The sections must tile the file from byte 0, header first and end section last.
void ExpectSectionsCoverFile(const std::vector<SnapshotSection>& sections, size_t file_size,
                             size_t databases_with_keys) {
  ASSERT_FALSE(sections.empty());
  EXPECT_EQ(sections.front().kind, 'H');
  EXPECT_EQ(sections.front().offset, 0u);
  EXPECT_EQ(sections.back().kind, 'E');
  size_t databases = 0;
  for (size_t i = 1; i < sections.size(); ++i) {
    EXPECT_EQ(sections[i].offset, sections[i - 1].offset + sections[i - 1].length) << i;
    databases += sections[i].kind == 'D' ? 1 : 0;
  }
  EXPECT_EQ(sections.back().offset + sections.back().length, file_size);
  EXPECT_EQ(databases, databases_with_keys);
}

// ---- 1. Randomized round trips -------------------------------------------------------------

// Names the cases a key exercises, so the test can show the seeds reached every one.
void NoteCoverage(const ModelKey& key, std::map<std::string, size_t>* covered) {
  // In the order of ModelValue's alternatives.
  static const char* kTypeNames[] = {"string", "hash", "set", "zset", "list"};
  static_assert(std::size(kTypeNames) == std::variant_size_v<ModelValue>);
  ++(*covered)[std::string(kTypeNames[key.value.index()]) + " " + key.encoding];
  if (!Alive(key)) ++(*covered)["expired at load"];
  if (key.deadline && Alive(key)) ++(*covered)["deadline kept"];
  if (const auto* text = std::get_if<std::string>(&key.value)) {
    if (text->empty()) ++(*covered)["empty string"];
    if (text->find('\0') != std::string::npos) ++(*covered)["string with a zero byte"];
    if (*text == std::to_string(kInt64Min)) ++(*covered)["INT64_MIN"];
    if (*text == std::to_string(kInt64Max)) ++(*covered)["INT64_MAX"];
  }
  if (const auto* zset = std::get_if<ModelZset>(&key.value)) {
    for (const auto& [member, score] : *zset) {
      if (IsNegativeZero(score)) ++(*covered)["zset -0"];
      if (std::isinf(score)) ++(*covered)["zset infinity"];
      if (std::fpclassify(score) == FP_SUBNORMAL) ++(*covered)["zset denormal"];
      if (member.size() > 64) ++(*covered)["zset long member"];
    }
  }
  if (const auto* hash = std::get_if<ModelHash>(&key.value)) {
    if (hash->size() > 128) ++(*covered)["hash over 128 fields"];
    for (const auto& [field, value] : *hash) {
      if (value.size() > 64) ++(*covered)["hash long value"];
    }
  }
}

TEST(SnapshotRoundTrip, SnapshotRandomKeyspacesMatchModel) {
  std::map<std::string, size_t> covered;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const size_t scale = 1 + seed % 6;
    KeyspaceGenerator gen(seed * 0x9E3779B97F4A7C15ULL, scale);
    std::vector<Database> original(kDatabases);
    Model model;
    // Some databases stay empty (and must stay absent from the file).
    const size_t filled = 1 + gen.Uniform(kDatabases - 1);
    std::set<size_t> indexes;
    while (indexes.size() < filled) indexes.insert(gen.Uniform(kDatabases));
    for (size_t index : indexes) {
      gen.Fill(&original[index], 5 + gen.Uniform(40 * scale), &model[index]);
    }

    // The model must describe the original exactly, else the comparison below proves nothing.
    size_t total = 0, alive = 0, expired = 0;
    for (const auto& [index, keys] : model) {
      ASSERT_EQ(original[index].size(), keys.size());
      for (const auto& [key, want] : keys) {
        ExpectEntryMatches(want, original[index].Find(key, kInt64Min), true,
                           "original db " + std::to_string(index) + " key " + Printable(key));
        ++total;
        ++(Alive(want) ? alive : expired);
        NoteCoverage(want, &covered);
      }
    }

    TempFile file;
    ASSERT_GE(file.fd(), 0);
    SnapshotSaveStats saved;
    const std::string bytes = Save(original, file, &saved);
    EXPECT_EQ(saved.keys, total);

    std::vector<Database> loaded(kDatabases);
    LoadResult result;
    if (seed % 2 == 0) {
      result = Load(file.path(), bytes, &loaded);
    } else {
      bool missing = true;
      result.ok =
          LoadSnapshotFile(file.path(), Pointers(loaded), EncodingLimits{}, kNowMs, nullptr,
                           nullptr, &result.stats, &result.sections, &missing, &result.error);
      EXPECT_FALSE(missing);
    }
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.stats.keys_read, alive);
    EXPECT_EQ(result.stats.keys_expired, expired);
    EXPECT_EQ(result.stats.bytes, bytes.size());
    EXPECT_EQ(result.stats.created_ms, kNowMs - 5);
    EXPECT_EQ(result.stats.creator.rfind("goblin-", 0), 0u) << result.stats.creator;
    ExpectSectionsCoverFile(result.sections, bytes.size(), model.size());
    for (size_t i = 1; i < result.sections.size(); ++i) {
      if (result.sections[i].kind != 'K') continue;
      if (result.sections[i].length > snapshot::kBatchBytes + snapshot::kSectionOverhead) {
        ++covered["a record alone in its section"];
      }
      if (result.sections[i - 1].kind == 'K') ++covered["a database in several sections"];
    }

    for (size_t index = 0; index < kDatabases; ++index) {
      SCOPED_TRACE("db " + std::to_string(index));
      Database& db = loaded[index];
      const auto it = model.find(index);
      if (it == model.end()) {
        EXPECT_EQ(db.size(), 0u);
        continue;
      }
      size_t want_size = 0, want_expires = 0;
      for (const auto& [key, want] : it->second) {
        if (!Alive(want)) {
          EXPECT_FALSE(db.Contains(key)) << "expired key loaded: " << Printable(key);
          continue;
        }
        ++want_size;
        want_expires += want.deadline ? 1 : 0;
        const KeyEntry* entry = db.Find(key, kNowMs);
        ExpectEntryMatches(want, entry, true, "loaded key " + Printable(key));
        // A small hash or set comes back in the order it had (Redis keeps listpack order).
        const std::string_view encoding = want.encoding;
        if (entry != nullptr && (encoding == "listpack" || encoding == "intset")) {
          EXPECT_EQ(Sequence(entry), Sequence(original[index].Find(key, kInt64Min)))
              << Printable(key);
        }
      }
      EXPECT_EQ(db.size(), want_size);
      EXPECT_EQ(db.expires(), want_expires);
    }
  }
  static const char* const kCases[] = {"string int",
                                       "string embstr",
                                       "string raw",
                                       "hash listpack",
                                       "hash hashtable",
                                       "set intset",
                                       "set listpack",
                                       "set hashtable",
                                       "zset listpack",
                                       "zset skiplist",
                                       "list listpack",
                                       "list quicklist",
                                       "expired at load",
                                       "deadline kept",
                                       "empty string",
                                       "string with a zero byte",
                                       "INT64_MIN",
                                       "INT64_MAX",
                                       "zset -0",
                                       "zset infinity",
                                       "zset denormal",
                                       "zset long member",
                                       "hash over 128 fields",
                                       "hash long value",
                                       "a record alone in its section",
                                       "a database in several sections"};
  for (const char* label : kCases) {
    EXPECT_GT(covered[label], 0u) << label;
  }
}

// ---- 2. Forms under other limits -----------------------------------------------------------

// One database holding one key of each collection type, plus its model.
struct CollectionKeys {
  std::vector<Database> dbs;
  std::map<std::string, ModelKey> model;
};

CollectionKeys MakeCollections(size_t count, size_t element_bytes) {
  CollectionKeys out;
  out.dbs.resize(1);
  Database& db = out.dbs[0];
  const ZsetLimits zset_limits;
  const HashLimits hash_limits;
  const SetLimits set_limits;
  auto pad = [&](size_t i) {
    std::string text = "e" + std::to_string(i) + ":";
    text.resize(std::max(text.size(), element_bytes), 'x');
    return text;
  };

  auto* zset = new ZsetObject(1, 1, zset_limits);
  ModelZset zset_model;
  for (size_t i = 0; i < count; ++i) {
    const double score = static_cast<double>(i % 7) - 3;
    ZsetObject::Insert(zset->set(), score, pad(i), zset_limits);
    zset_model[pad(i)] = score;
  }
  out.model["zset"] = {zset_model, std::nullopt, std::string(zset->EncodingName())};
  db.Put("zset", EntryValue::Object(zset), std::nullopt);

  auto* hash = new HashObject();
  ModelHash hash_model;
  for (size_t i = 0; i < count; ++i) {
    hash->hash().Set(pad(i), std::to_string(i * 1000), hash_limits);
    hash_model[pad(i)] = std::to_string(i * 1000);
  }
  out.model["hash"] = {hash_model, std::nullopt, std::string(hash->EncodingName())};
  db.Put("hash", EntryValue::Object(hash), std::nullopt);

  auto* ints = new SetObject(PackedSet("1", 1, set_limits));
  ModelSet ints_model;
  for (size_t i = 0; i < count; ++i) {
    const std::string member = std::to_string(static_cast<int64_t>(i * 7919) - 5000);
    ints->set().Add(member, set_limits);
    ints_model.insert(member);
  }
  out.model["ints"] = {ints_model, std::nullopt, std::string(ints->EncodingName())};
  db.Put("ints", EntryValue::Object(ints), std::nullopt);

  auto* texts = new SetObject(PackedSet("t", 1, set_limits));
  ModelSet texts_model;
  for (size_t i = 0; i < count; ++i) {
    texts->set().Add(pad(i), set_limits);
    texts_model.insert(pad(i));
  }
  out.model["texts"] = {texts_model, std::nullopt, std::string(texts->EncodingName())};
  db.Put("texts", EntryValue::Object(texts), std::nullopt);
  return out;
}

// Saves keys, loads them under limits and checks the contents and the encodings.
void ExpectFormsAfterLoad(const CollectionKeys& keys, const EncodingLimits& limits,
                          const std::map<std::string, std::string>& before,
                          const std::map<std::string, std::string>& after) {
  for (const auto& [key, want] : keys.model) EXPECT_EQ(want.encoding, before.at(key)) << key;
  TempFile file;
  ASSERT_GE(file.fd(), 0);
  const std::string bytes = Save(keys.dbs, file);
  std::vector<Database> loaded(1);
  const LoadResult result = Load(file.path(), bytes, &loaded, limits);
  ASSERT_TRUE(result.ok) << result.error;
  for (const auto& [key, want] : keys.model) {
    const KeyEntry* entry = loaded[0].Find(key, kNowMs);
    ExpectEntryMatches(want, entry, false, "key " + key);
    if (entry != nullptr) {
      EXPECT_EQ(entry->EncodingName(), after.at(key)) << key;
    }
  }
}

TEST(SnapshotForms, SnapshotLargeCollectionsLoadSmallUnderBiggerLimits) {
  const CollectionKeys keys = MakeCollections(600, 10);
  EncodingLimits big;
  big.zset = {1000, 64};
  big.hash = {1000, 64};
  big.set = {1000, 1000, 64};
  ExpectFormsAfterLoad(
      keys, big,
      {{"zset", "skiplist"}, {"hash", "hashtable"}, {"ints", "hashtable"}, {"texts", "hashtable"}},
      {{"zset", "listpack"}, {"hash", "listpack"}, {"ints", "intset"}, {"texts", "listpack"}});
}

TEST(SnapshotForms, SnapshotLongElementsLoadSmallUnderBiggerValueLimits) {
  const CollectionKeys keys = MakeCollections(20, 100);
  EncodingLimits big;
  big.zset = {128, 200};
  big.hash = {128, 200};
  big.set = {512, 128, 200};
  ExpectFormsAfterLoad(
      keys, big,
      {{"zset", "skiplist"}, {"hash", "hashtable"}, {"ints", "intset"}, {"texts", "hashtable"}},
      {{"zset", "listpack"}, {"hash", "listpack"}, {"ints", "intset"}, {"texts", "listpack"}});
}

TEST(SnapshotForms, SnapshotSmallCollectionsLoadLargeUnderTinyLimits) {
  const CollectionKeys keys = MakeCollections(10, 10);
  EncodingLimits tiny;
  tiny.zset = {2, 64};
  tiny.hash = {2, 64};
  tiny.set = {2, 2, 64};
  ExpectFormsAfterLoad(
      keys, tiny,
      {{"zset", "listpack"}, {"hash", "listpack"}, {"ints", "intset"}, {"texts", "listpack"}},
      {{"zset", "skiplist"}, {"hash", "hashtable"}, {"ints", "hashtable"}, {"texts", "hashtable"}});
}

TEST(SnapshotForms, SnapshotSmallCollectionsLoadLargeUnderTinyValueLimits) {
  const CollectionKeys keys = MakeCollections(10, 30);
  EncodingLimits tiny;
  tiny.zset = {128, 8};
  tiny.hash = {128, 8};
  tiny.set = {512, 128, 8};
  ExpectFormsAfterLoad(
      keys, tiny,
      {{"zset", "listpack"}, {"hash", "listpack"}, {"ints", "intset"}, {"texts", "listpack"}},
      {{"zset", "skiplist"}, {"hash", "hashtable"}, {"ints", "intset"}, {"texts", "hashtable"}});
}

// A large set keeps -0; loaded into the small form it becomes 0, as Redis's listpack does.
TEST(SnapshotForms, SnapshotNegativeZeroBecomesZeroInSmallForm) {
  std::vector<Database> dbs(1);
  const ZsetLimits limits;
  auto* zset = new ZsetObject(1, 1, limits);
  for (int i = 0; i < 200; ++i) {
    ZsetObject::Insert(zset->set(), i, "m" + std::to_string(i), limits);
  }
  ZsetObject::Insert(zset->set(), -0.0, "negative-zero", limits);
  ASSERT_EQ(zset->EncodingName(), "skiplist");
  dbs[0].Put("z", EntryValue::Object(zset), std::nullopt);
  TempFile file;
  const std::string bytes = Save(dbs, file);
  for (const bool small : {false, true}) {
    EncodingLimits limits_now;
    if (small) limits_now.zset = {1000, 64};
    std::vector<Database> loaded(1);
    const LoadResult result = Load(file.path(), bytes, &loaded, limits_now);
    ASSERT_TRUE(result.ok) << result.error;
    const SortedSet& set =
        static_cast<const ZsetObject*>(loaded[0].Find("z", kNowMs)->object())->set();
    EXPECT_STREQ(set.EncodingName(), small ? "listpack" : "skiplist");
    const auto score = set.Score("negative-zero");
    ASSERT_TRUE(score.has_value());
    EXPECT_EQ(*score, 0.0);
    EXPECT_EQ(std::signbit(*score), !small);
  }
}

// ---- 3. A big sorted set -------------------------------------------------------------------

TEST(SnapshotBigZset, Snapshot200kMemberSortedSetRoundTrips) {
  constexpr size_t kMembers = 200'000;
  std::mt19937_64 rng(200'000);
  std::vector<Database> dbs(1);
  const ZsetLimits limits;
  auto* zset = new ZsetObject(kMembers, 16, limits);
  std::vector<std::pair<double, std::string>> expected;
  expected.reserve(kMembers);
  for (size_t i = 0; i < kMembers; ++i) {
    // Many ties (ordered by member) and some fractional scores.
    const double score = (i % 3 == 0) ? static_cast<double>(rng() % 5000)
                                      : static_cast<double>(rng() % 1'000'000) / 7.0 - 50'000;
    std::string member = "member:" + std::to_string(rng() % 100'000'000) + ":" + std::to_string(i);
    ZsetObject::Insert(zset->set(), score, member, limits);
    expected.emplace_back(score, std::move(member));
  }
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(zset->set().Validate(), "");
  dbs[0].Put("big", EntryValue::Object(zset), std::nullopt);

  TempFile file;
  ASSERT_GE(file.fd(), 0);
  const std::string bytes = Save(dbs, file);
  std::vector<Database> loaded(1);
  const LoadResult result = Load(file.path(), bytes, &loaded);
  ASSERT_TRUE(result.ok) << result.error;
  const KeyEntry* entry = loaded[0].Find("big", kNowMs);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->EncodingName(), "skiplist");
  const SortedSet& set = static_cast<const ZsetObject*>(entry->object())->set();
  EXPECT_EQ(set.Validate(), "");
  ASSERT_EQ(set.size(), kMembers);
  size_t rank = 0, mismatches = 0;
  set.ForEachInRankRange(0, kMembers, false, [&](double score, std::string_view member) {
    if (score != expected[rank].first || member != expected[rank].second) ++mismatches;
    ++rank;
  });
  EXPECT_EQ(rank, kMembers);
  EXPECT_EQ(mismatches, 0u);
  for (size_t i = 0; i < kMembers; ++i) {
    const std::string& member = expected[i].second;
    const std::optional<size_t> got_rank = set.Rank(member);
    const std::optional<double> got_score = set.Score(member);
    if (got_rank != std::optional<size_t>(i) ||
        got_score != std::optional<double>(expected[i].first)) {
      ADD_FAILURE() << "member " << member << " rank/score differ at rank " << i;
      break;
    }
  }
  for (size_t i = 0; i < kMembers; i += 997) {
    const ZsetElement element = set.ElementAt(i);
    EXPECT_EQ(element.score, expected[i].first);
    EXPECT_EQ(element.member, expected[i].second);
  }
}

// ---- 4. Damaged files ----------------------------------------------------------------------

// Two databases (0 and 2 of 3) with a few keys of every type, some with deadlines.
std::vector<Database> SmallKeyspace() {
  std::vector<Database> dbs(3);
  const ZsetLimits zset_limits;
  const HashLimits hash_limits;
  const SetLimits set_limits;
  dbs[0].Put("int", EntryValue::String("-9223372036854775808"), std::nullopt);
  dbs[0].Put("text", EntryValue::String(std::string("hello\0world", 11)), kNowMs + 60'000);
  dbs[0].Put(std::string("bin\0", 4), EntryValue::String(std::string(50, 'r')), std::nullopt);
  dbs[0].Put("gone", EntryValue::String("old"), kNowMs - 60'000);
  auto* hash = new HashObject();
  hash->hash().Set("f", "v", hash_limits);
  hash->hash().Set("12", "34", hash_limits);
  dbs[0].Put("hash", EntryValue::Object(hash), std::nullopt);
  auto* ints = new SetObject(PackedSet("5", 1, set_limits));
  for (const char* m : {"5", "-7", "1000000"}) ints->set().Add(m, set_limits);
  dbs[0].Put("ints", EntryValue::Object(ints), kNowMs + 1);
  auto* zset = new ZsetObject(1, 1, zset_limits);
  ZsetObject::Insert(zset->set(), 1.5, "a", zset_limits);
  ZsetObject::Insert(zset->set(), -kInf, "b", zset_limits);
  ZsetObject::Insert(zset->set(), 1.5, "c", zset_limits);
  dbs[2].Put("zset", EntryValue::Object(zset), std::nullopt);
  auto* texts = new SetObject(PackedSet("x", 1, set_limits));
  for (const char* m : {"x", "y", "7"}) texts->set().Add(m, set_limits);
  dbs[2].Put("texts", EntryValue::Object(texts), kNowMs + 5);
  // One large form of each collection, kept small in bytes.
  auto* big_zset = new ZsetObject(1, 1, zset_limits);
  auto* big_hash = new HashObject();
  auto* big_set = new SetObject(PackedSet("s", 1, set_limits));
  for (int i = 0; i < 130; ++i) {
    const std::string name = std::to_string(i) + "a";
    ZsetObject::Insert(big_zset->set(), i / 3, name, zset_limits);
    big_hash->hash().Set(name, "", hash_limits);
    big_set->set().Add(name, set_limits);
  }
  dbs[2].Put("big_zset", EntryValue::Object(big_zset), std::nullopt);
  dbs[2].Put("big_hash", EntryValue::Object(big_hash), kNowMs + 9);
  dbs[2].Put("big_set", EntryValue::Object(big_set), std::nullopt);
  return dbs;
}

class SnapshotDamage : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GE(file_.fd(), 0);
    bytes_ = Save(SmallKeyspace(), file_);
    // The undamaged file loads.
    std::vector<Database> dbs(3);
    const LoadResult result = Load(file_.path(), bytes_, &dbs);
    ASSERT_TRUE(result.ok) << result.error;
    ASSERT_EQ(result.stats.keys_read, 10u);
    ASSERT_EQ(result.stats.keys_expired, 1u);
    // header, two databases with one keys section each, end
    ASSERT_EQ(result.sections.size(), 6u);
  }

  // Loads data under the file's name; returns the error ("" when the load succeeded).
  std::string LoadError(std::string_view data) {
    std::vector<Database> dbs(3);
    const LoadResult result = Load(file_.path(), data, &dbs);
    return result.ok ? std::string() : result.error;
  }

  TempFile file_;
  std::string bytes_;
};

TEST_F(SnapshotDamage, SnapshotEveryTruncationFails) {
  for (size_t size = 0; size < bytes_.size(); ++size) {
    const std::string error = LoadError(std::string_view(bytes_).substr(0, size));
    ASSERT_FALSE(error.empty()) << "truncated to " << size << " bytes loads";
    ASSERT_NE(error.find(file_.path()), std::string::npos) << size << ": " << error;
    ASSERT_NE(error.find("offset"), std::string::npos) << size << ": " << error;
  }
}

TEST_F(SnapshotDamage, SnapshotEverySingleBitFlipFails) {
  std::string damaged = bytes_;
  for (size_t at = 0; at < damaged.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      const std::string error = LoadError(damaged);
      damaged[at] = bytes_[at];
      ASSERT_FALSE(error.empty()) << "bit " << bit << " of byte " << at << " flipped loads";
      ASSERT_NE(error.find("offset"), std::string::npos) << error;
    }
  }
}

TEST_F(SnapshotDamage, SnapshotBytesAfterEndSectionFail) {
  // The end section is the file's last 13 + 9 + up to 10 bytes; a copy of it is a well-formed
  // section too.
  const std::string end_copy = bytes_.substr(bytes_.size() - 22);
  for (const std::string& garbage :
       {std::string(1, '\0'), std::string("x"), std::string(100, '\xff'), end_copy, bytes_}) {
    const std::string error = LoadError(bytes_ + garbage);
    EXPECT_NE(error.find("bytes after the end section"), std::string::npos)
        << garbage.size() << ": " << error;
    EXPECT_NE(error.find(file_.path() + ": offset " + std::to_string(bytes_.size())),
              std::string::npos)
        << error;
  }
}

TEST_F(SnapshotDamage, SnapshotRedisRdbFileIsNamed) {
  for (const std::string& data : {std::string("REDIS0011\xfa\x09redis-ver\x05"
                                              "7.2.4"),
                                  std::string("REDIS0011"), std::string("REDIS")}) {
    const std::string error = LoadError(data);
    EXPECT_NE(error.find("Redis RDB file"), std::string::npos) << error;
    EXPECT_EQ(error.rfind(file_.path() + ": offset 0: ", 0), 0u) << error;
  }
  EXPECT_NE(LoadError("GOBLNSNQ" + bytes_.substr(8)).find("bad magic"), std::string::npos);
  EXPECT_NE(LoadError("").find("empty file"), std::string::npos);
}

// ---- 5. Hand-made files --------------------------------------------------------------------

void PutFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void PutVar(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutBytes(std::string* out, std::string_view bytes) {
  PutVar(out, bytes.size());
  out->append(bytes);
}

// Builds a snapshot from hand-made section bodies, with the section checks and the end
// section's chain computed as snapshot_format.h says, so the file reaches the loader's
// semantic checks.
class SnapshotBuilder {
 public:
  SnapshotBuilder() : file_(snapshot::kMagic) {}

  // Appends a section; returns the file offset of its body.
  uint64_t Section(char kind, std::string_view body) {
    const size_t start = file_.size();
    file_.push_back(kind);
    PutFixed(&file_, body.size(), 8);
    file_.append(body);
    const uint32_t check =
        static_cast<uint32_t>(XXH3_64bits(file_.data() + start, file_.size() - start));
    PutFixed(&file_, check, 4);
    PutFixed(&checks_, check, 4);
    ++sections_;
    return start + snapshot::kSectionHead;
  }

  uint64_t Header(uint64_t databases, uint64_t keys, uint32_t version = snapshot::kVersion) {
    std::string body;
    PutFixed(&body, version, 4);
    PutFixed(&body, static_cast<uint64_t>(kNowMs - 1000), 8);
    PutVar(&body, databases);
    PutVar(&body, keys);
    PutBytes(&body, "hand-made");
    return Section('H', body);
  }

  uint64_t DatabaseSection(uint64_t index, uint64_t keys, uint64_t expires) {
    std::string body;
    PutVar(&body, index);
    PutVar(&body, keys);
    PutVar(&body, expires);
    return Section('D', body);
  }

  std::string Finish() {
    std::string body;
    PutVar(&body, sections_);
    PutFixed(&body, XXH3_64bits(checks_.data(), checks_.size()), 8);
    Section('E', body);
    return file_;
  }

 private:
  std::string file_;
  std::string checks_;
  uint64_t sections_ = 0;
};

std::string RecordHead(uint8_t type, std::string_view key, std::optional<int64_t> deadline,
                       bool integer = false) {
  std::string out;
  uint8_t tag = type;
  if (integer) tag |= snapshot::kTagIntegerString;
  if (deadline) tag |= snapshot::kTagHasExpire;
  out.push_back(static_cast<char>(tag));
  if (deadline) PutFixed(&out, static_cast<uint64_t>(*deadline), 8);
  PutBytes(&out, key);
  return out;
}

std::string StringRecord(std::string_view key, std::string_view value,
                         std::optional<int64_t> deadline = std::nullopt) {
  std::string out = RecordHead(0, key, deadline);
  PutBytes(&out, value);
  return out;
}

std::string IntegerRecord(std::string_view key, int64_t value) {
  std::string out = RecordHead(0, key, std::nullopt, true);
  PutVar(&out, snapshot::ZigZag(value));
  return out;
}

// The documented order-preserving map of a score to a u64 (-0 maps like +0).
uint64_t ScoreKey(double score) {
  uint64_t bits;
  std::memcpy(&bits, &score, sizeof(bits));
  if (score == 0) bits = 0;
  return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}

using ZsetRun = std::vector<std::pair<double, std::string>>;

// A sorted-set record with the given runs, entries encoded exactly as listed (no sorting).
std::string ZsetRecord(std::string_view key, const std::vector<ZsetRun>& runs, uint8_t form) {
  std::string value;
  value.push_back(static_cast<char>(form));
  size_t count = 0, longest = 0;
  for (const ZsetRun& run : runs) {
    count += run.size();
    for (const auto& entry : run) longest = std::max(longest, entry.second.size());
  }
  PutVar(&value, count);
  PutVar(&value, longest);
  PutVar(&value, runs.size());
  for (const ZsetRun& run : runs) {
    std::string packed;
    uint64_t previous = 0;
    for (const auto& [score, member] : run) {
      PutVar(&packed, ScoreKey(score) - previous);  // wraps when a score goes down
      PutVar(&packed, (uint64_t{member.size()} << 1) | (std::signbit(score) && score == 0));
      packed.append(member);
      previous = ScoreKey(score);
    }
    PutVar(&value, run.size());
    PutBytes(&value, packed);
  }
  std::string out = RecordHead(3, key, std::nullopt);
  PutBytes(&out, value);
  return out;
}

// Where a record's value starts: after its tag, deadline and key.
size_t ValueOffset(std::string_view key, bool has_deadline) {
  std::string head;
  PutBytes(&head, key);
  return 1 + (has_deadline ? 8 : 0) + head.size();
}

constexpr std::string_view kFileName = "/tmp/hand-made.snapshot";

LoadResult LoadHandMade(const std::string& data, size_t databases = 4) {
  std::vector<Database> dbs(databases);
  return Load(std::string(kFileName), data, &dbs);
}

std::string At(uint64_t offset, std::string_view what) {
  return std::string(kFileName) + ": offset " + std::to_string(offset) + ": " + std::string(what);
}

// The builder makes files the loader accepts, so the failures below are the semantic ones.
TEST(SnapshotHandMade, SnapshotBuilderMakesLoadableFile) {
  SnapshotBuilder builder;
  builder.Header(2, 4);
  builder.DatabaseSection(1, 3, 1);
  builder.Section(
      'K', StringRecord("s", std::string("a\0b", 3), kNowMs + 10) + IntegerRecord("i", kInt64Min));
  builder.Section('K', ZsetRecord("z", {{{-kInf, "a"}, {-0.0, "b"}}, {{0.0, "c"}, {2, "d"}}},
                                  ZsetObject::kSnapshotSmall));
  builder.DatabaseSection(3, 1, 0);
  builder.Section('K', IntegerRecord("j", kInt64Max));
  std::vector<Database> dbs(4);
  const LoadResult result = Load(std::string(kFileName), builder.Finish(), &dbs);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.stats.keys_read, 4u);
  EXPECT_EQ(result.stats.creator, "hand-made");
  ExpectEntryMatches({std::string("a\0b", 3), kNowMs + 10, "embstr"}, dbs[1].Find("s", kNowMs),
                     true, "s");
  ExpectEntryMatches({std::to_string(kInt64Min), std::nullopt, "int"}, dbs[1].Find("i", kNowMs),
                     true, "i");
  // Invariant 2 of zset_object.h: the small form reads the -0 as 0.
  ExpectEntryMatches(
      {ModelZset{{"a", -kInf}, {"b", 0.0}, {"c", 0.0}, {"d", 2}}, std::nullopt, "listpack"},
      dbs[1].Find("z", kNowMs), true, "z");
  ExpectEntryMatches({std::to_string(kInt64Max), std::nullopt, "int"}, dbs[3].Find("j", kNowMs),
                     true, "j");
}

TEST(SnapshotHandMade, SnapshotWrongVersionIsNamed) {
  SnapshotBuilder builder;
  const uint64_t header = builder.Header(0, 0, 3);
  const LoadResult result = LoadHandMade(builder.Finish());
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.error,
            At(header, "format version 3 is not supported (this build reads versions 1 and 2)"));
}

std::string ReplicationBody(std::string_view replid, uint64_t offset, uint64_t db) {
  std::string body;
  PutBytes(&body, replid);
  PutFixed(&body, offset, 8);
  PutVar(&body, db);
  return body;
}

// A replica's history travels in a version 2 file; a file without one stays version 1.
TEST(SnapshotReplication, HistoryRoundTripsAndOnlyItMakesVersion2) {
  std::vector<Database> dbs(4);
  dbs[2].Put("k", EntryValue::String("v"), std::nullopt);
  TempFile file;
  const std::string plain = Save(dbs, file);
  EXPECT_EQ(plain.substr(snapshot::kMagic.size() + snapshot::kSectionHead, 4),
            std::string("\x01\0\0\0", 4));
  std::vector<Database> loaded(4);
  LoadResult result = Load("plain", plain, &loaded);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_FALSE(result.stats.replication.present());

  const SavedReplication history{std::string(40, 'a'), 1234567890123, 2};
  TempFile other;
  SnapshotSaveStats stats;
  std::string error;
  ASSERT_TRUE(
      WriteSnapshotToFd(ConstPointers(dbs), {}, other.fd(), kNowMs, &stats, &error, history))
      << error;
  const std::string with = other.Contents();
  EXPECT_EQ(with.substr(snapshot::kMagic.size() + snapshot::kSectionHead, 4),
            std::string("\x02\0\0\0", 4));
  std::vector<Database> again(4);
  result = Load("with", with, &again);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.stats.replication.replid, history.replid);
  EXPECT_EQ(result.stats.replication.offset, history.offset);
  EXPECT_EQ(result.stats.replication.stream_db, 2);
  ASSERT_EQ(result.sections.size(), 5u);  // H R D K E
  EXPECT_EQ(result.sections[1].kind, 'R');
  EXPECT_NE(again[2].Find("k", kNowMs), nullptr);
}

TEST(SnapshotReplication, SectionOutOfPlaceOrMalformedFails) {
  {
    SCOPED_TRACE("in a version 1 file");
    SnapshotBuilder builder;
    builder.Header(0, 0, 1);
    const uint64_t at = builder.Section('R', ReplicationBody(std::string(40, 'b'), 5, 0));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_EQ(result.error, At(at - snapshot::kSectionHead, "a replication section out of place"));
  }
  {
    SCOPED_TRACE("after a database");
    SnapshotBuilder builder;
    builder.Header(1, 1, 2);
    builder.DatabaseSection(0, 1, 0);
    builder.Section('K', StringRecord("s", "v"));
    const uint64_t at = builder.Section('R', ReplicationBody(std::string(40, 'b'), 5, 0));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_EQ(result.error, At(at - snapshot::kSectionHead, "a replication section out of place"));
  }
  {
    SCOPED_TRACE("a database the server does not have");
    SnapshotBuilder builder;
    builder.Header(0, 0, 2);
    builder.Section('R', ReplicationBody(std::string(40, 'b'), 5, 9));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.error.find("replication stream database 9 is out of range"), std::string::npos)
        << result.error;
  }
  {
    SCOPED_TRACE("no id");
    SnapshotBuilder builder;
    builder.Header(0, 0, 2);
    builder.Section('R', ReplicationBody("", 5, 0));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_NE(result.error.find("malformed replication section"), std::string::npos)
        << result.error;
  }
  {
    SCOPED_TRACE("version 2 without one loads");
    SnapshotBuilder builder;
    builder.Header(0, 0, 2);
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_TRUE(result.ok) << result.error;
  }
}

TEST(SnapshotHandMade, SnapshotDuplicateKeyFails) {
  {
    SCOPED_TRACE("one section");
    SnapshotBuilder builder;
    builder.Header(1, 2);
    builder.DatabaseSection(0, 2, 0);
    const std::string first = StringRecord("dup", "a");
    const uint64_t body = builder.Section('K', first + StringRecord("dup", "b"));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error, At(body + first.size(), "key 'dup' appears twice"));
  }
  {
    SCOPED_TRACE("two sections, other types");
    SnapshotBuilder builder;
    builder.Header(1, 2);
    builder.DatabaseSection(2, 2, 0);
    builder.Section('K', IntegerRecord("dup", 5));
    const uint64_t body =
        builder.Section('K', ZsetRecord("dup", {{{1, "m"}}}, ZsetObject::kSnapshotSmall));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error, At(body, "key 'dup' appears twice"));
  }
  {
    SCOPED_TRACE("the same key in two databases is fine");
    SnapshotBuilder builder;
    builder.Header(2, 2);
    builder.DatabaseSection(0, 1, 0);
    builder.Section('K', StringRecord("same", "a"));
    builder.DatabaseSection(1, 1, 0);
    builder.Section('K', StringRecord("same", "b"));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_TRUE(result.ok) << result.error;
  }
}

// snapshot_format.h invariant 3, "No key appears twice in a database", holds whatever the
// deadlines: a repeated key is a damaged file even when one of its records has expired.
TEST(SnapshotHandMade, SnapshotDuplicateKeyWithExpiredRecordFails) {
  const struct {
    const char* name;
    std::optional<int64_t> first, second;
  } cases[] = {
      {"first record expired", kNowMs - 1, std::nullopt},
      {"second record expired", std::nullopt, kNowMs},
      {"both expired", kNowMs - 2, kNowMs - 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SnapshotBuilder builder;
    builder.Header(1, 2);
    builder.DatabaseSection(0, 2, (c.first ? 1 : 0) + (c.second ? 1 : 0));
    const std::string first = StringRecord("dup", "old", c.first);
    const uint64_t body = builder.Section('K', first + StringRecord("dup", "new", c.second));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error, At(body + first.size(), "key 'dup' appears twice"));
  }
}

TEST(SnapshotHandMade, SnapshotDatabaseOutOfRangeFails) {
  for (const uint64_t index : {uint64_t{4}, uint64_t{7}, uint64_t{1} << 40}) {
    SCOPED_TRACE(index);
    SnapshotBuilder builder;
    builder.Header(1, 1);
    const uint64_t body = builder.DatabaseSection(index, 1, 0);
    builder.Section('K', StringRecord("k", "v"));
    const LoadResult result = LoadHandMade(builder.Finish(), 4);
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error,
              At(body, "database " + std::to_string(index) +
                           " is out of range (the server has 4 databases; raise `databases`)"));
  }
  SnapshotBuilder builder;
  builder.Header(2, 2);
  builder.DatabaseSection(3, 1, 0);
  builder.Section('K', StringRecord("k", "v"));
  const uint64_t again = builder.DatabaseSection(3, 1, 0);
  builder.Section('K', StringRecord("k", "v"));
  const LoadResult result = LoadHandMade(builder.Finish(), 4);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.error, At(again, "database 3 appears twice"));
}

TEST(SnapshotHandMade, SnapshotZsetOutOfOrderFails) {
  struct Case {
    const char* name;
    std::vector<ZsetRun> runs;
    uint8_t form;
    const char* what;
  };
  const std::vector<Case> cases = {
      {"equal scores, members descending",
       {{{1, "b"}, {1, "a"}}},
       ZsetObject::kSnapshotSmall,
       "sorted set entries out of order or repeated"},
      {"member repeated",
       {{{1, "a"}, {1, "a"}}},
       ZsetObject::kSnapshotSmall,
       "sorted set entries out of order or repeated"},
      {"-0 and 0 tie, member repeated",
       {{{-0.0, "a"}, {0.0, "a"}}},
       ZsetObject::kSnapshotSmall,
       "sorted set entries out of order or repeated"},
      {"score goes down within a run",
       {{{2, "a"}, {1, "b"}}},
       ZsetObject::kSnapshotSmall,
       "sorted set score out of order"},
      {"second run starts below the first",
       {{{1, "a"}, {3, "b"}}, {{2, "c"}}},
       ZsetObject::kSnapshotLarge,
       "sorted set entries out of order or repeated"},
      {"second run repeats the last member",
       {{{1, "a"}, {3, "b"}}, {{3, "b"}, {4, "c"}}},
       ZsetObject::kSnapshotLarge,
       "sorted set entries out of order or repeated"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SnapshotBuilder builder;
    builder.Header(1, 2);
    builder.DatabaseSection(0, 2, 0);
    const std::string before = StringRecord("s", "v");
    const uint64_t body = builder.Section('K', before + ZsetRecord("zkey", c.runs, c.form));
    const LoadResult result = LoadHandMade(builder.Finish());
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.error, At(body + before.size() + ValueOffset("zkey", false),
                               std::string("key 'zkey': ") + c.what));
  }
}

// Invariant 3 again, inside a collection: a large hash or set dump that holds one element
// twice (the checks are right, so only the loader can notice) is a damaged file. Loaded as it
// stands it would make a hash whose size() counts the field twice.
TEST(SnapshotHandMade, SnapshotLargeCollectionWithRepeatedElementFails) {
  // [form][count][entry]: a one-element large dump, turned into [form][2][entry][entry].
  auto repeated = [](const std::string& dump) {
    EXPECT_EQ(dump[1], 1);
    const std::string entry = dump.substr(2);
    std::string value;
    PutBytes(&value, dump.substr(0, 1) + std::string(1, '\2') + entry + entry);
    return value;
  };
  PackedHash hash;
  hash.Set("field", "value", HashLimits{});
  hash.ConvertToLarge();
  std::string hash_dump;
  hash.Dump(&hash_dump);
  PackedSet set("member", 1, SetLimits{});
  set.Add("member", SetLimits{});
  set.ConvertToLarge();
  std::string set_dump;
  set.Dump(&set_dump);

  const struct {
    const char* key;
    uint8_t type;
    std::string value;
  } records[] = {{"h", 4, repeated(hash_dump)}, {"s", 2, repeated(set_dump)}};
  EncodingLimits tiny;
  tiny.hash = {1, 64};
  tiny.set = {1, 1, 64};
  for (const auto& record : records) {
    for (const EncodingLimits& limits : {EncodingLimits{}, tiny}) {
      SCOPED_TRACE(std::string(record.key) +
                   (limits.hash.max_listpack_entries == 1 ? " tiny" : ""));
      SnapshotBuilder builder;
      builder.Header(1, 1);
      builder.DatabaseSection(0, 1, 0);
      builder.Section('K', RecordHead(record.type, record.key, std::nullopt) + record.value);
      std::vector<Database> dbs(1);
      const LoadResult result = Load(std::string(kFileName), builder.Finish(), &dbs, limits);
      EXPECT_FALSE(result.ok);
      EXPECT_NE(result.error.find(std::string("key '") + record.key + "'"), std::string::npos)
          << result.error;
    }
  }
}

}  // namespace
}  // namespace goblin
