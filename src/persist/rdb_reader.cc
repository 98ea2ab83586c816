#include "persist/rdb_reader.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <forward_list>
#include <limits>
#include <vector>

#include "core/bytes.h"
#include "core/hash_object.h"
#include "core/hashing.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "core/zset_object.h"
#include "persist/rdb_containers.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"

namespace goblin {

namespace {

// Redis's LISTPACK_MAX_SAFETY_SIZE: a sorted set whose members pass it in all loads large.
constexpr uint64_t kListpackMaxBytes = uint64_t{1} << 30;
constexpr size_t kStreamIdBytes = 16;
// STREAM_ITEM_FLAG_DELETED and STREAM_ITEM_FLAG_SAMEFIELDS.
constexpr int64_t kStreamDeleted = 1;
constexpr int64_t kStreamSameFields = 2;

// Limits under which adding never changes a value's form: the decoder picks the form itself.
constexpr SetLimits kSetAnyForm{SIZE_MAX, SIZE_MAX, SIZE_MAX};
constexpr HashLimits kHashAnyForm{SIZE_MAX, SIZE_MAX};
constexpr ZsetLimits kZsetAnyForm{SIZE_MAX, SIZE_MAX};

uint64_t LoadBig64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

StreamId StreamIdFromRaw(std::string_view raw) {
  return {LoadBig64(raw.data()), LoadBig64(raw.data() + 8)};
}

struct ZsetPair {
  double score;
  std::string_view member;
};

bool PairLess(const ZsetPair& a, const ZsetPair& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.member < b.member;
}

// Whether two of the n strings at(0) ... at(n - 1) are equal, by a table of their hashes: O(n),
// one probe each.
template <typename At>
bool HasDuplicate(size_t n, At at) {
  if (n < 2) return false;
  if (n <= 8) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        if (at(i) == at(j)) return true;
      }
    }
    return false;
  }
  const size_t capacity = std::bit_ceil(2 * n);
  const size_t mask = capacity - 1;
  struct Slot {
    uint64_t hash;
    uint32_t index_plus_one;  // 0: empty
  };
  std::vector<Slot> slots(capacity, Slot{0, 0});
  for (size_t i = 0; i < n; ++i) {
    const std::string_view s = at(i);
    const uint64_t hash = HashBytes(s);
    for (size_t probe = hash & mask;; probe = (probe + 1) & mask) {
      Slot& slot = slots[probe];
      if (slot.index_plus_one == 0) {
        slot = {hash, static_cast<uint32_t>(i + 1)};
        break;
      }
      if (slot.hash == hash && at(slot.index_plus_one - 1) == s) return true;
    }
  }
  return false;
}

const char* HashFieldExpiryTypeName(uint8_t type) {
  switch (type) {
    case rdb::kTypeHashMetadataPreGa:
      return "hash with field expiry, 7.4 release candidate";
    case rdb::kTypeHashListpackExPreGa:
      return "listpack hash with field expiry, 7.4 release candidate";
    case rdb::kTypeHashMetadata:
      return "hash with field expiry";
    default:
      return "listpack hash with field expiry";
  }
}

}  // namespace

class RdbValueDecoder {
 public:
  RdbValueDecoder(std::string_view data, size_t pos, const EncodingLimits& limits,
                  RdbReadError* error)
      : data_(data), pos_(pos), limits_(limits), error_(error) {}

  size_t pos() const { return pos_; }
  // Empties value, keeping its string's capacity (a loader reuses one for every key).
  static void Clear(RdbValue* value) {
    value->type_ = ValueType::kString;
    value->string_.clear();
    value->object_.reset();
  }

  bool Decode(uint8_t type, RdbValue* value) {
    switch (type) {
      case rdb::kTypeString: {
        std::string_view bytes;
        if (!String(&bytes, "string value")) return false;
        value->type_ = ValueType::kString;
        value->string_.assign(bytes);
        return true;
      }
      case rdb::kTypeList:
      case rdb::kTypeListZiplist:
      case rdb::kTypeListQuicklist:
      case rdb::kTypeListQuicklist2:
        return List(type, value);
      case rdb::kTypeSet:
      case rdb::kTypeSetIntset:
      case rdb::kTypeSetListpack:
        return Set(type, value);
      case rdb::kTypeZset:
      case rdb::kTypeZset2:
      case rdb::kTypeZsetZiplist:
      case rdb::kTypeZsetListpack:
        return Zset(type, value);
      case rdb::kTypeHash:
      case rdb::kTypeHashZipmap:
      case rdb::kTypeHashZiplist:
      case rdb::kTypeHashListpack:
        return Hash(type, value);
      case rdb::kTypeStreamListpacks:
      case rdb::kTypeStreamListpacks2:
      case rdb::kTypeStreamListpacks3:
        return Stream(type, value);
      case rdb::kTypeModulePreGa:
      case rdb::kTypeModule2: {
        const size_t at = pos_;
        uint64_t id;
        if (!Length(&id, "module id")) return false;
        return Fail(at, "a value of module type '" + RdbModuleTypeName(id) +
                            "' (encoding version " + std::to_string(id & 1023) +
                            "): Goblin loads no modules");
      }
      case rdb::kTypeHashMetadataPreGa:
      case rdb::kTypeHashListpackExPreGa:
      case rdb::kTypeHashMetadata:
      case rdb::kTypeHashListpackEx:
        return HashWithFieldExpiry(type, value);
      default:
        return Fail(pos_, "unknown RDB value type " + std::to_string(type));
    }
  }

 private:
  bool Fail(size_t at, std::string what) {
    error_->offset = at;
    error_->what = std::move(what);
    error_->empty = false;
    return false;
  }
  bool Empty(size_t at, std::string what) {
    Fail(at, std::move(what));
    error_->empty = true;
    return false;
  }

  bool Length(uint64_t* n, const char* what) {
    const size_t at = pos_;
    if (!RdbReadLength(data_, &pos_, n)) return Fail(at, std::string("truncated or bad ") + what);
    return true;
  }
  // A count of things that take at least min_bytes each: one the remaining bytes cannot hold
  // is a lie (and would make a reservation of any size).
  bool Count(uint64_t* n, size_t min_bytes, const char* what) {
    const size_t at = pos_;
    if (!Length(n, what)) return false;
    if (*n > (data_.size() - pos_) / min_bytes) {
      return Fail(at, std::string(what) + " " + std::to_string(*n) +
                          " is more than the remaining bytes can hold");
    }
    return true;
  }
  // A string, valid until the next call with the same scratch.
  bool String(std::string_view* out, const char* what, std::string* scratch = nullptr) {
    const size_t at = pos_;
    if (!RdbReadStringView(data_, &pos_, scratch == nullptr ? &scratch_ : scratch, out)) {
      return Fail(at, std::string("truncated or corrupt ") + what);
    }
    return true;
  }
  // A string valid as long as this decoder.
  bool StableString(std::string_view* out, const char* what) {
    if (!String(out, what)) return false;
    if (out->data() == scratch_.data()) *out = Keep(*out);
    return true;
  }
  std::string_view Keep(std::string_view text) { return owned_.emplace_front(text); }
  bool Fixed(uint64_t* v, int bytes, const char* what) {
    if (data_.size() - pos_ < static_cast<size_t>(bytes)) {
      return Fail(pos_, std::string("truncated ") + what);
    }
    *v = 0;
    for (int i = 0; i < bytes; ++i) {
      *v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    }
    pos_ += bytes;
    return true;
  }
  bool Raw(size_t n, std::string_view* out, const char* what) {
    if (data_.size() - pos_ < n) return Fail(pos_, std::string("truncated ") + what);
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  // A container blob read by reader into elements_; *at is where its string starts.
  template <typename Reader>
  bool Container(Reader reader, const char* name, size_t* at) {
    *at = pos_;
    std::string_view blob;
    if (!StableString(&blob, name)) return false;
    std::string what;
    if (!reader(blob, &elements_, &what)) return Fail(*at, std::string(name) + ": " + what);
    return true;
  }

  bool List(uint8_t type, RdbValue* value);
  bool Set(uint8_t type, RdbValue* value);
  bool Zset(uint8_t type, RdbValue* value);
  bool BuildZset(std::vector<ZsetPair>& pairs, bool small, size_t at, RdbValue* value);
  bool Hash(uint8_t type, RdbValue* value);
  bool HashWithFieldExpiry(uint8_t type, RdbValue* value);
  bool Stream(uint8_t type, RdbValue* value);
  bool StreamNode(size_t index, goblin::Stream* stream, StreamId* last_seen);
  bool StreamGroupsOf(uint8_t type, const goblin::Stream& stream,
                      std::unique_ptr<StreamGroups>* groups);

  std::string_view data_;
  size_t pos_;
  const EncodingLimits& limits_;
  RdbReadError* error_;
  std::string scratch_;
  std::string scratch2_;
  std::forward_list<std::string> owned_;  // no allocation until a string is kept
  std::vector<RdbElement> elements_;
};

bool RdbValueDecoder::List(uint8_t type, RdbValue* value) {
  const ListLimits& limits = limits_.list;
  const size_t at = pos_;
  PackedList list;
  size_t nodes = 0;
  bool plain = false;
  char digits[kInt64TextMax];
  auto push_elements = [&] {
    for (const RdbElement& element : elements_) list.PushBack(element.Text(digits), limits);
  };
  if (type == rdb::kTypeList) {
    uint64_t n;
    if (!Count(&n, 1, "list length")) return false;
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view element;
      if (!String(&element, "list element")) return false;
      list.PushBack(element, limits);
    }
    nodes = 1;
  } else if (type == rdb::kTypeListZiplist) {
    size_t blob_at;
    if (!Container(ReadZiplist, "list ziplist", &blob_at)) return false;
    push_elements();
    nodes = 1;
  } else {
    uint64_t n;
    if (!Count(&n, 1, "quicklist node count")) return false;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t node_at = pos_;
      uint64_t container = rdb::kQuicklistNodePacked;
      if (type == rdb::kTypeListQuicklist2) {
        if (!Length(&container, "quicklist node container")) return false;
        if (container != rdb::kQuicklistNodePlain && container != rdb::kQuicklistNodePacked) {
          return Fail(node_at, "quicklist node " + std::to_string(i) + ": container " +
                                   std::to_string(container) +
                                   " is neither plain (1) nor packed (2)");
        }
      }
      std::string_view blob;
      const size_t blob_at = pos_;
      if (!String(&blob, "quicklist node")) return false;
      if (blob.empty()) {
        return Fail(blob_at, "quicklist node " + std::to_string(i) + " is an empty string");
      }
      if (container == rdb::kQuicklistNodePlain) {
        list.PushBack(blob, limits);
        ++nodes;
        plain = true;
        continue;
      }
      std::string what;
      const bool ok = type == rdb::kTypeListQuicklist ? ReadZiplist(blob, &elements_, &what)
                                                      : ReadListpack(blob, &elements_, &what);
      if (!ok) return Fail(blob_at, "quicklist node " + std::to_string(i) + ": " + what);
      // An empty node is skipped, as Redis skips it.
      if (elements_.empty()) continue;
      ++nodes;
      push_elements();
    }
  }
  if (list.empty()) return Empty(at, "empty list");
  // Redis 7.2 keeps a quicklist unless it has one packed node within the limits.
  if (nodes > 1 || plain) {
    list.ConvertToQuicklist();
  } else {
    list.ConvertForGrowth(0, 0, limits);
  }
  value->type_ = ValueType::kList;
  value->object_ = std::make_unique<ListObject>(std::move(list));
  return true;
}

bool RdbValueDecoder::Set(uint8_t type, RdbValue* value) {
  const SetLimits& limits = limits_.set;
  const size_t at = pos_;
  PackedSet set;
  char digits[kInt64TextMax];
  auto duplicate = [&](size_t where) { return Fail(where, "a set member appears twice"); };
  if (type == rdb::kTypeSet) {
    uint64_t n;
    if (!Count(&n, 1, "set size")) return false;
    if (n == 0) return Empty(at, "empty set");
    if (n > limits.max_intset_entries) {
      // Too many for the small forms whatever the members: built in one pass.
      set.BeginBulkLoad();
      for (uint64_t i = 0; i < n; ++i) {
        std::string_view member;
        if (!String(&member, "set member")) return false;
        set.BulkAppend(CellInput::Of(member));
      }
      if (!set.EndBulkLoad()) return duplicate(at);
    } else {
      // Redis 7.2's order of conversions: an intset, a listpack from the first member that is
      // not an integer while the limits allow, else a hashtable.
      for (uint64_t i = 0; i < n; ++i) {
        const size_t member_at = pos_;
        std::string_view member;
        if (!String(&member, "set member")) return false;
        if (!set.Add(member, limits)) return duplicate(member_at);
      }
    }
  } else if (type == rdb::kTypeSetIntset) {
    const size_t blob_at = pos_;
    std::string_view blob;
    if (!String(&blob, "set intset")) return false;
    std::vector<int64_t> values;
    std::string what;
    if (!ReadIntset(blob, &values, &what)) return Fail(blob_at, "set intset: " + what);
    if (values.empty()) return Empty(at, "empty set");
    if (values.size() > limits.max_intset_entries) {
      set.BeginBulkLoad();
      for (int64_t v : values) set.BulkAppend(CellInput::Integer(v));
      if (!set.EndBulkLoad()) return duplicate(blob_at);
    } else {
      for (int64_t v : values) {
        set.Add(std::string_view(digits, FormatInt64(v, digits)), kSetAnyForm);
      }
    }
  } else {
    size_t blob_at;
    if (!Container(ReadListpack, "set listpack", &blob_at)) return false;
    if (elements_.empty()) return Empty(at, "empty set");
    if (elements_.size() > limits.max_listpack_entries) {
      set.BeginBulkLoad();
      for (const RdbElement& element : elements_) {
        set.BulkAppend(element.is_integer ? CellInput::Integer(element.integer)
                                          : CellInput::Of(element.text));
      }
      if (!set.EndBulkLoad()) return duplicate(blob_at);
    } else {
      // A listpack whatever its members (integers too), as Redis keeps it.
      constexpr SetLimits kListpackForm{0, SIZE_MAX, SIZE_MAX};
      set = PackedSet(elements_.front().Text(digits), elements_.size(), kListpackForm);
      for (const RdbElement& element : elements_) {
        if (!set.Add(element.Text(digits), kListpackForm)) return duplicate(blob_at);
      }
    }
  }
  value->type_ = ValueType::kSet;
  value->object_ = std::make_unique<SetObject>(std::move(set));
  return true;
}

bool RdbValueDecoder::Zset(uint8_t type, RdbValue* value) {
  const ZsetLimits& limits = limits_.zset;
  const size_t at = pos_;
  std::vector<ZsetPair> pairs;
  bool small;
  if (type == rdb::kTypeZset || type == rdb::kTypeZset2) {
    uint64_t n;
    if (!Count(&n, 2, "sorted set size")) return false;
    if (n == 0) return Empty(at, "empty sorted set");
    pairs.reserve(static_cast<size_t>(n));
    uint64_t longest = 0;
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t member_at = pos_;
      ZsetPair pair;
      if (!StableString(&pair.member, "sorted set member")) return false;
      if (type == rdb::kTypeZset2) {
        uint64_t bits;
        if (!Fixed(&bits, 8, "sorted set score")) return false;
        pair.score = std::bit_cast<double>(bits);
      } else {
        // A length byte, then that many bytes of text; 253, 254 and 255 are NaN, inf, -inf.
        uint64_t length;
        if (!Fixed(&length, 1, "sorted set score")) return false;
        if (length == 253) {
          pair.score = std::numeric_limits<double>::quiet_NaN();
        } else if (length == 254 || length == 255) {
          pair.score = length == 254 ? HUGE_VAL : -HUGE_VAL;
        } else {
          std::string_view text;
          if (!Raw(static_cast<size_t>(length), &text, "sorted set score")) return false;
          if (!ParseDouble(text, &pair.score)) {
            return Fail(member_at, "sorted set score '" + std::string(text) + "' is not a number");
          }
        }
      }
      if (std::isnan(pair.score)) return Fail(member_at, "sorted set score is NaN");
      longest = std::max<uint64_t>(longest, pair.member.size());
      total += pair.member.size();
      pairs.push_back(pair);
    }
    small = n <= limits.max_listpack_entries && longest <= limits.max_listpack_value &&
            total <= kListpackMaxBytes;
  } else {
    size_t blob_at;
    if (!Container(type == rdb::kTypeZsetZiplist ? ReadZiplist : ReadListpack,
                   type == rdb::kTypeZsetZiplist ? "sorted set ziplist" : "sorted set listpack",
                   &blob_at)) {
      return false;
    }
    if (elements_.size() % 2 != 0) {
      return Fail(blob_at, "sorted set container holds an odd number of elements");
    }
    if (elements_.empty()) return Empty(at, "empty sorted set");
    pairs.reserve(elements_.size() / 2);
    char digits[kInt64TextMax];
    for (size_t i = 0; i < elements_.size(); i += 2) {
      const RdbElement& member = elements_[i];
      const RdbElement& score = elements_[i + 1];
      ZsetPair pair;
      pair.member = member.is_integer ? Keep(member.Text(digits)) : member.text;
      if (score.is_integer) {
        pair.score = static_cast<double>(score.integer);
      } else if (!ParseDouble(score.text, &pair.score)) {
        return Fail(blob_at, "sorted set element " + std::to_string(i / 2) + ": score '" +
                                 std::string(score.text) + "' is not a number");
      }
      pairs.push_back(pair);
    }
    small = pairs.size() <= limits.max_listpack_entries;
  }
  return BuildZset(pairs, small, at, value);
}

bool RdbValueDecoder::BuildZset(std::vector<ZsetPair>& pairs, bool small, size_t at,
                                RdbValue* value) {
  // Redis writes a listpack in rank order and a skiplist from the highest rank down; any
  // other order is sorted.
  const auto descending = [](const ZsetPair& a, const ZsetPair& b) { return PairLess(b, a); };
  if (!std::is_sorted(pairs.begin(), pairs.end(), PairLess)) {
    if (std::is_sorted(pairs.begin(), pairs.end(), descending)) {
      std::reverse(pairs.begin(), pairs.end());
    } else {
      std::sort(pairs.begin(), pairs.end(), PairLess);
    }
  }
  if (HasDuplicate(pairs.size(), [&](size_t i) { return pairs[i].member; })) {
    return Fail(at, "a sorted set member appears twice");
  }
  // A size hint above the limit starts the set in the large form.
  auto object =
      std::make_unique<ZsetObject>(small ? 0 : 1, 0, small ? kZsetAnyForm : ZsetLimits{0, 0});
  SortedSet& set = object->set();
  for (const ZsetPair& pair : pairs) {
    // The small form never stores -0 (zset_object.h, invariant 2).
    set.AppendSorted(small && pair.score == 0 ? 0.0 : pair.score, pair.member, kZsetAnyForm);
  }
  set.FinishAppends();
  value->type_ = ValueType::kZSet;
  value->object_ = std::move(object);
  return true;
}

bool RdbValueDecoder::Hash(uint8_t type, RdbValue* value) {
  const HashLimits& limits = limits_.hash;
  const size_t at = pos_;
  PackedHash hash;
  auto duplicate = [&](size_t where) { return Fail(where, "a hash field appears twice"); };
  if (type == rdb::kTypeHash) {
    uint64_t n;
    if (!Count(&n, 2, "hash size")) return false;
    if (n == 0) return Empty(at, "empty hash");
    const bool bulk = n > limits.max_listpack_entries;
    if (bulk) hash.BeginBulkLoad();
    for (uint64_t i = 0; i < n; ++i) {
      const size_t field_at = pos_;
      std::string_view field, field_value;
      if (!String(&field, "hash field", &scratch_) ||
          !String(&field_value, "hash value", &scratch2_)) {
        return false;
      }
      if (bulk) {
        hash.BulkAppend(CellInput::Of(field), CellInput::Of(field_value));
      } else if (!hash.Set(field, field_value, limits)) {
        // Set moves the hash to the large form at a field or value over the limit, as Redis.
        return duplicate(field_at);
      }
    }
    if (bulk && !hash.EndBulkLoad()) return duplicate(at);
  } else {
    size_t blob_at;
    const char* name = type == rdb::kTypeHashZipmap    ? "hash zipmap"
                       : type == rdb::kTypeHashZiplist ? "hash ziplist"
                                                       : "hash listpack";
    const bool ok = type == rdb::kTypeHashZipmap    ? Container(ReadZipmap, name, &blob_at)
                    : type == rdb::kTypeHashZiplist ? Container(ReadZiplist, name, &blob_at)
                                                    : Container(ReadListpack, name, &blob_at);
    if (!ok) return false;
    if (elements_.size() % 2 != 0) {
      return Fail(blob_at, std::string(name) + " holds an odd number of elements");
    }
    if (elements_.empty()) return Empty(at, "empty hash");
    const size_t fields = elements_.size() / 2;
    bool small = fields <= limits.max_listpack_entries;
    if (small && type == rdb::kTypeHashZipmap) {
      // Only a zipmap is also converted by its longest string, as Redis does.
      for (const RdbElement& element : elements_) {
        small = small && element.text.size() <= limits.max_listpack_value;
      }
    }
    auto cell = [](const RdbElement& e) {
      return e.is_integer ? CellInput::Integer(e.integer) : CellInput::Of(e.text);
    };
    if (!small) {
      hash.BeginBulkLoad();
      for (size_t i = 0; i < elements_.size(); i += 2) {
        hash.BulkAppend(cell(elements_[i]), cell(elements_[i + 1]));
      }
      if (!hash.EndBulkLoad()) return duplicate(blob_at);
    } else {
      char field_digits[kInt64TextMax], value_digits[kInt64TextMax];
      for (size_t i = 0; i < elements_.size(); i += 2) {
        if (!hash.Set(elements_[i].Text(field_digits), elements_[i + 1].Text(value_digits),
                      kHashAnyForm)) {
          return duplicate(blob_at);
        }
      }
    }
  }
  value->type_ = ValueType::kHash;
  value->object_ = std::make_unique<HashObject>(std::move(hash));
  return true;
}

// Redis 7.4's hashes with field deadlines, as its rdb.c writes them:
//   25  [min expire: 8 bytes LE] [listpack of field, value, deadline (unix ms, 0: none)]
//   24  [min expire: 8 bytes LE] [count] count x ([ttl: length] [field] [value]), where a ttl
//       of 0 is none and any other stands for min expire + ttl - 1
//   23, 22  the 7.4 release candidates' forms of 25 and 24: no min expire, deadlines absolute
// The min expire of type 25 is not trusted (Redis 7.4.1 writes a stale one and ignores it).
// Fields whose deadline has passed are kept; active or lazy expiry deletes them.
bool RdbValueDecoder::HashWithFieldExpiry(uint8_t type, RdbValue* value) {
  const HashLimits& limits = limits_.hash;
  const size_t at = pos_;
  const std::string name = HashFieldExpiryTypeName(type);
  uint64_t min_expire = 0;
  if ((type == rdb::kTypeHashMetadata || type == rdb::kTypeHashListpackEx) &&
      !Fixed(&min_expire, 8, "minimum field deadline")) {
    return false;
  }
  struct Field {
    std::string_view field, value;
    int64_t deadline;
  };
  std::vector<Field> fields;
  std::vector<std::string> texts;  // integers of the listpack, as text
  if (type == rdb::kTypeHashListpackEx || type == rdb::kTypeHashListpackExPreGa) {
    size_t blob_at;
    if (!Container(ReadListpack, "hash listpack with field expiry", &blob_at)) return false;
    if (elements_.size() % 3 != 0) {
      return Fail(blob_at, name + ": the listpack's elements are not triplets");
    }
    texts.reserve(elements_.size());
    char digits[kInt64TextMax];
    for (size_t i = 0; i < elements_.size(); i += 3) {
      const RdbElement& deadline = elements_[i + 2];
      if (!deadline.is_integer || deadline.integer < 0 || deadline.integer > kMaxCellDeadline) {
        return Fail(blob_at, name + ": field " + std::to_string(i / 3) + " has a bad deadline");
      }
      std::string_view field = elements_[i].Text(digits);
      if (elements_[i].is_integer) field = texts.emplace_back(field);
      std::string_view field_value = elements_[i + 1].Text(digits);
      if (elements_[i + 1].is_integer) field_value = texts.emplace_back(field_value);
      fields.push_back({field, field_value, deadline.integer});
    }
  } else {
    uint64_t n;
    if (!Count(&n, 3, "hash size")) return false;
    fields.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      const size_t field_at = pos_;
      uint64_t ttl;
      std::string_view field, field_value;
      if (!Length(&ttl, "field deadline") || !StableString(&field, "hash field") ||
          !StableString(&field_value, "hash value")) {
        return false;
      }
      uint64_t deadline = ttl;
      if (ttl != 0 && type == rdb::kTypeHashMetadata) deadline = min_expire + ttl - 1;
      if (deadline > static_cast<uint64_t>(kMaxCellDeadline) ||
          (ttl != 0 && deadline < min_expire)) {
        return Fail(field_at, name + ": field " + std::to_string(i) + " has a bad deadline");
      }
      fields.push_back({field, field_value, static_cast<int64_t>(deadline)});
    }
  }
  if (fields.empty()) return Empty(at, "empty hash");
  PackedHash hash;
  bool small = fields.size() <= limits.max_listpack_entries;
  for (const Field& f : fields) {
    small = small && f.field.size() <= limits.max_listpack_value &&
            f.value.size() <= limits.max_listpack_value;
  }
  if (!small) hash.ConvertToLarge();
  hash.EnableFieldExpiry();
  for (const Field& f : fields) {
    if (!hash.Set(f.field, f.value, kHashAnyForm)) return Fail(at, "a hash field appears twice");
    if (f.deadline != 0) hash.SetDeadline(f.field, f.deadline);
  }
  value->type_ = ValueType::kHash;
  value->object_ = std::make_unique<HashObject>(std::move(hash));
  return true;
}

bool RdbValueDecoder::StreamNode(size_t index, goblin::Stream* stream, StreamId* last_seen) {
  const size_t node_at = pos_;
  const std::string node = "stream node " + std::to_string(index);
  std::string_view key;
  if (!String(&key, "stream node key")) return false;
  if (key.size() != kStreamIdBytes) {
    return Fail(node_at, node + ": key of " + std::to_string(key.size()) +
                             " bytes is not a 16-byte stream id");
  }
  const StreamId master = StreamIdFromRaw(key);
  if (index > 0 && master <= *last_seen) {
    return Fail(node_at,
                node + ": master id " + master.ToString() + " is not above the entries before it");
  }
  size_t blob_at;
  if (!Container(ReadListpack, "stream node listpack", &blob_at)) return false;
  if (elements_.empty()) return Fail(blob_at, node + " is an empty listpack");
  size_t next = 0;
  const auto bad = [&](const std::string& what) { return Fail(blob_at, node + ": " + what); };
  // An integer element (Redis also takes integer text in a string element).
  auto integer = [&](int64_t* v) {
    if (next >= elements_.size()) return false;
    const RdbElement& e = elements_[next++];
    if (e.is_integer) {
      *v = e.integer;
      return true;
    }
    return ParseInt64(e.text, v);
  };
  // Text that stays valid through the node (integers formatted into kept storage).
  auto text = [&](std::string_view* out) {
    if (next >= elements_.size()) return false;
    const RdbElement& e = elements_[next++];
    if (!e.is_integer) {
      *out = e.text;
    } else {
      char digits[kInt64TextMax];
      *out = Keep(e.Text(digits));
    }
    return true;
  };
  int64_t live, deleted, master_count;
  if (!integer(&live) || !integer(&deleted) || !integer(&master_count) || live < 0 || deleted < 0 ||
      master_count < 0 || static_cast<uint64_t>(master_count) > elements_.size() - next) {
    return bad("malformed master entry");
  }
  std::vector<std::string_view> master_fields(static_cast<size_t>(master_count));
  for (std::string_view& field : master_fields) text(&field);
  int64_t terminator;
  if (!integer(&terminator) || terminator != 0) return bad("master entry without its 0 end");
  int64_t live_seen = 0, deleted_seen = 0;
  std::vector<StreamField> fields;
  while (next < elements_.size()) {
    const std::string entry = "entry " + std::to_string(live_seen + deleted_seen);
    int64_t flags, ms_delta, seq_delta;
    if (!integer(&flags) || !integer(&ms_delta) || !integer(&seq_delta)) {
      return bad(entry + ": malformed head");
    }
    if (flags & ~(kStreamDeleted | kStreamSameFields)) {
      return bad(entry + ": unknown flags " + std::to_string(flags));
    }
    // Deltas are unsigned differences from the master id, as Redis stores them.
    const StreamId id{master.ms + static_cast<uint64_t>(ms_delta),
                      master.seq + static_cast<uint64_t>(seq_delta)};
    const bool same = flags & kStreamSameFields;
    int64_t count = master_count;
    if (!same && (!integer(&count) || count < 0)) return bad(entry + ": malformed field count");
    if (count == 0) return bad(entry + " has no fields");
    if (static_cast<uint64_t>(count) > (elements_.size() - next) / (same ? 1 : 2)) {
      return bad(entry + ": its fields run past the end of the node");
    }
    fields.resize(static_cast<size_t>(count));
    for (size_t f = 0; f < fields.size(); ++f) {
      if (same) {
        fields[f].first = master_fields[f];
      } else {
        text(&fields[f].first);
      }
      text(&fields[f].second);
    }
    int64_t elements;
    if (!integer(&elements) || elements != (same ? count + 3 : 2 * count + 4)) {
      return bad(entry + ": wrong element count");
    }
    // *last_seen starts at 0-0, which no entry may have.
    if (id < master || id <= *last_seen) {
      return bad(entry + ": id " + id.ToString() + " is out of order");
    }
    *last_seen = id;
    if (flags & kStreamDeleted) {
      ++deleted_seen;
    } else {
      ++live_seen;
      stream->Append(id, fields);
    }
  }
  if (live_seen != live || deleted_seen != deleted) {
    return bad("the master entry counts " + std::to_string(live) + " live and " +
               std::to_string(deleted) + " deleted entries, the node holds " +
               std::to_string(live_seen) + " and " + std::to_string(deleted_seen));
  }
  return true;
}

bool RdbValueDecoder::Stream(uint8_t type, RdbValue* value) {
  goblin::Stream stream(
      goblin::Stream::Limits{limits_.stream.max_node_bytes, limits_.stream.max_node_entries});
  uint64_t nodes;
  if (!Count(&nodes, 2, "stream node count")) return false;
  StreamId last_seen;
  for (uint64_t i = 0; i < nodes; ++i) {
    if (!StreamNode(static_cast<size_t>(i), &stream, &last_seen)) return false;
  }
  const size_t meta_at = pos_;
  uint64_t length;
  StreamId last_id, first_id, max_deleted;
  uint64_t entries_added;
  if (!Length(&length, "stream length") || !Length(&last_id.ms, "stream last id") ||
      !Length(&last_id.seq, "stream last id")) {
    return false;
  }
  if (type == rdb::kTypeStreamListpacks) {
    max_deleted = StreamId::Min();
    entries_added = length;
  } else if (!Length(&first_id.ms, "stream first id") ||
             !Length(&first_id.seq, "stream first id") ||
             !Length(&max_deleted.ms, "stream max deleted id") ||
             !Length(&max_deleted.seq, "stream max deleted id") ||
             !Length(&entries_added, "stream entries added")) {
    return false;
  }
  if (length != stream.size()) {
    return Fail(meta_at, "stream length " + std::to_string(length) + ", its nodes hold " +
                             std::to_string(stream.size()) + " entries");
  }
  if (nodes > 0 && last_id < last_seen) {
    return Fail(meta_at, "stream last id " + last_id.ToString() + " is below its entry " +
                             last_seen.ToString());
  }
  if (max_deleted > last_id) {
    return Fail(meta_at, "stream max deleted id " + max_deleted.ToString() +
                             " is above its last id " + last_id.ToString());
  }
  if (entries_added < length) {
    return Fail(meta_at, "stream entries added " + std::to_string(entries_added) +
                             " is below its length " + std::to_string(length));
  }
  stream.SetLastId(last_id, entries_added, max_deleted);
  std::unique_ptr<StreamGroups> groups;
  if (!StreamGroupsOf(type, stream, &groups)) return false;
  value->type_ = ValueType::kStream;
  value->object_ = std::make_unique<StreamObject>(std::move(stream), std::move(groups));
  return true;
}

bool RdbValueDecoder::StreamGroupsOf(uint8_t type, const goblin::Stream& stream,
                                     std::unique_ptr<StreamGroups>* groups) {
  struct Pending {
    StreamId id;
    int64_t delivery_time_ms;
    uint64_t delivery_count;
    uint32_t owner;  // index into the group's consumers; UINT32_MAX: none yet
  };
  struct Consumer {
    std::string name;
    int64_t seen_ms;
    int64_t active_ms;
  };
  struct Group {
    std::string name;
    StreamId last_id;
    int64_t entries_read;
    std::vector<Pending> pending;
    std::vector<Consumer> consumers;
    size_t at;
  };
  uint64_t count;
  if (!Count(&count, 4, "stream consumer group count")) return false;
  std::vector<Group> drafts;
  for (uint64_t g = 0; g < count; ++g) {
    Group group;
    group.at = pos_;
    std::string_view name;
    if (!String(&name, "consumer group name")) return false;
    group.name.assign(name);
    const std::string where = "consumer group '" + group.name + "'";
    if (!Length(&group.last_id.ms, "consumer group last id") ||
        !Length(&group.last_id.seq, "consumer group last id")) {
      return false;
    }
    if (type == rdb::kTypeStreamListpacks) {
      group.entries_read = EstimateEntriesRead(stream, group.last_id);
    } else {
      const size_t read_at = pos_;
      uint64_t read;
      if (!Length(&read, "consumer group entries read")) return false;
      if (read == UINT64_MAX) {
        group.entries_read = kEntriesReadUnknown;
      } else if (read > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Fail(read_at, where + ": entries read " + std::to_string(read) + " is out of range");
      } else {
        group.entries_read = static_cast<int64_t>(read);
      }
    }
    uint64_t pending;
    if (!Count(&pending, kStreamIdBytes + 9, "pending entry count")) return false;
    group.pending.reserve(static_cast<size_t>(pending));
    for (uint64_t p = 0; p < pending; ++p) {
      const size_t entry_at = pos_;
      std::string_view raw;
      uint64_t time, deliveries;
      if (!Raw(kStreamIdBytes, &raw, "pending entry id") ||
          !Fixed(&time, 8, "pending entry delivery time") ||
          !Length(&deliveries, "pending entry delivery count")) {
        return false;
      }
      const StreamId id = StreamIdFromRaw(raw);
      if (p > 0 && id <= group.pending.back().id) {
        return Fail(entry_at,
                    where + ": pending entry " + id.ToString() + " is out of order or repeated");
      }
      group.pending.push_back({id, static_cast<int64_t>(time), deliveries, UINT32_MAX});
    }
    uint64_t consumers;
    if (!Count(&consumers, 10, "consumer count")) return false;
    for (uint64_t c = 0; c < consumers; ++c) {
      Consumer consumer;
      std::string_view consumer_name;
      uint64_t seen, active = 0, owned;
      if (!String(&consumer_name, "consumer name") || !Fixed(&seen, 8, "consumer seen time") ||
          (type == rdb::kTypeStreamListpacks3 && !Fixed(&active, 8, "consumer active time")) ||
          !Count(&owned, kStreamIdBytes, "consumer pending count")) {
        return false;
      }
      consumer.name.assign(consumer_name);
      consumer.seen_ms = static_cast<int64_t>(seen);
      // Before 7.2 a consumer had no active time: Redis takes the seen time for it.
      consumer.active_ms =
          type == rdb::kTypeStreamListpacks3 ? static_cast<int64_t>(active) : consumer.seen_ms;
      for (uint64_t o = 0; o < owned; ++o) {
        const size_t id_at = pos_;
        std::string_view raw;
        if (!Raw(kStreamIdBytes, &raw, "consumer pending id")) return false;
        const StreamId id = StreamIdFromRaw(raw);
        auto it = std::lower_bound(group.pending.begin(), group.pending.end(), id,
                                   [](const Pending& e, StreamId v) { return e.id < v; });
        if (it == group.pending.end() || it->id != id) {
          return Fail(id_at, where + ": consumer '" + consumer.name + "' owns " + id.ToString() +
                                 ", which the group does not hold pending");
        }
        if (it->owner != UINT32_MAX) {
          return Fail(id_at, where + ": pending entry " + id.ToString() + " has two owners");
        }
        it->owner = static_cast<uint32_t>(c);
      }
      group.consumers.push_back(std::move(consumer));
    }
    for (const Pending& entry : group.pending) {
      if (entry.owner == UINT32_MAX) {
        return Fail(group.at,
                    where + ": pending entry " + entry.id.ToString() + " has no consumer");
      }
    }
    drafts.push_back(std::move(group));
  }
  if (drafts.empty()) return true;
  // StreamGroups::Restore takes its dump: groups and consumers in name order, distinct.
  std::sort(drafts.begin(), drafts.end(),
            [](const Group& a, const Group& b) { return a.name < b.name; });
  std::string dump;
  dump.push_back(1);
  AppendVar(&dump, drafts.size());
  for (size_t g = 0; g < drafts.size(); ++g) {
    Group& group = drafts[g];
    if (g > 0 && group.name == drafts[g - 1].name) {
      return Fail(group.at, "consumer group '" + group.name + "' appears twice");
    }
    std::vector<uint32_t> order(group.consumers.size());
    for (uint32_t c = 0; c < order.size(); ++c) order[c] = c;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return group.consumers[a].name < group.consumers[b].name;
    });
    std::vector<uint32_t> ordinal(order.size());
    AppendLengthPrefixed(&dump, group.name);
    AppendVar(&dump, group.last_id.ms);
    AppendVar(&dump, group.last_id.seq);
    AppendVar(&dump, static_cast<uint64_t>(group.entries_read) + 1);
    AppendVar(&dump, order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const Consumer& consumer = group.consumers[order[i]];
      if (i > 0 && consumer.name == group.consumers[order[i - 1]].name) {
        return Fail(group.at, "consumer group '" + group.name + "': consumer '" + consumer.name +
                                  "' appears twice");
      }
      ordinal[order[i]] = static_cast<uint32_t>(i);
      AppendLengthPrefixed(&dump, consumer.name);
      AppendVar(&dump, ZigZag(consumer.seen_ms));
      AppendVar(&dump, ZigZag(consumer.active_ms));
    }
    AppendVar(&dump, group.pending.size());
    StreamId previous;
    int64_t previous_time = 0;
    for (size_t p = 0; p < group.pending.size(); ++p) {
      const Pending& entry = group.pending[p];
      if (p == 0) {
        AppendVar(&dump, entry.id.ms);
        AppendVar(&dump, entry.id.seq);
      } else {
        AppendVar(&dump, entry.id.ms - previous.ms);
        AppendVar(&dump,
                  entry.id.ms == previous.ms ? entry.id.seq - previous.seq - 1 : entry.id.seq);
      }
      AppendVar(&dump, ZigZag(static_cast<int64_t>(static_cast<uint64_t>(entry.delivery_time_ms) -
                                                   static_cast<uint64_t>(previous_time))));
      AppendVar(&dump, entry.delivery_count);
      AppendVar(&dump, ordinal[entry.owner]);
      previous = entry.id;
      previous_time = entry.delivery_time_ms;
    }
  }
  *groups = std::make_unique<StreamGroups>();
  if (!StreamGroups::Restore(dump, groups->get())) {
    return Fail(drafts.front().at, "stream consumer groups do not rebuild");
  }
  return true;
}

bool RdbValue::DropExpiredFields(int64_t now_ms) {
  if (type_ != ValueType::kHash || !object_->has_element_deadlines()) return true;
  PackedHash& hash = static_cast<HashObject*>(object_.get())->hash();
  std::vector<std::string> expired;
  hash.ForEachWithDeadline([&](std::string_view field, std::string_view, int64_t deadline) {
    if (deadline != 0 && deadline < now_ms) expired.emplace_back(field);
  });
  for (const std::string& field : expired) hash.Delete(field);
  return !hash.empty();
}

EntryValue RdbValue::Take() {
  if (type_ == ValueType::kString) return EntryValue::String(string_);
  return EntryValue::Object(object_.release());
}

bool RdbReadValue(uint8_t type, std::string_view data, size_t* pos, const EncodingLimits& limits,
                  RdbValue* value, RdbReadError* error) {
  RdbValueDecoder::Clear(value);
  if (*pos > data.size()) {
    error->offset = *pos;
    error->what = "value starts past the end of the data";
    error->empty = false;
    return false;
  }
  RdbValueDecoder decoder(data, *pos, limits, error);
  if (!decoder.Decode(type, value)) {
    RdbValueDecoder::Clear(value);
    if (error->empty) *pos = decoder.pos();
    return false;
  }
  *pos = decoder.pos();
  return true;
}

bool RdbIsValueType(uint8_t type) {
  return type <= rdb::kTypeModule2 ||
         (type >= rdb::kTypeHashZipmap && type <= rdb::kTypeHashListpackEx);
}

std::string RdbModuleTypeName(uint64_t module_id) {
  static constexpr char kCharset[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, ' ');
  uint64_t bits = module_id >> 10;
  for (size_t i = 9; i-- > 0;) {
    name[i] = kCharset[bits & 63];
    bits >>= 6;
  }
  return name;
}

}  // namespace goblin
