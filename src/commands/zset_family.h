// Pieces shared by the sorted-set command files: zset.cc (single-key commands) and
// zset_setops.cc (ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD).
#pragma once

#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "commands/command_util.h"
#include "core/sorted_set.h"
#include "core/zset_object.h"

namespace goblin {

// zset-max-listpack-entries / zset-max-listpack-value as they are now (read at every write, so
// CONFIG SET applies to the next command).
ZsetLimits ZsetLimitsOf(const CommandContext& ctx);

// The sorted set at key. Returns false after replying WRONGTYPE; *set is nullptr when the key
// is missing. Reads count keyspace hits and misses.
bool LookupZset(CommandContext& ctx, std::string_view key, SortedSet** set, bool for_read);

// ZADD's flags (GEOADD takes NX, XX and CH).
struct ZaddOptions {
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
  bool ch = false;
  bool incr = false;
  bool plain() const { return !nx && !xx && !gt && !lt && !incr; }
};

// Scores of one ZADD, parsed before anything changes; inline for the usual few pairs.
class ScoreList {
 public:
  explicit ScoreList(size_t n) : size_(n) {
    if (n > kInline) heap_.resize(n);
  }
  double& operator[](size_t i) { return data()[i]; }
  double* data() { return size_ > kInline ? heap_.data() : inline_; }

 private:
  static constexpr size_t kInline = 8;
  size_t size_;
  double inline_[kInline];
  std::vector<double> heap_;
};

// The flags from ctx.arg(first) on, up to the first argument that is none (returned): NX, XX and
// CH, and unless geoadd (GEOADD takes only those) INCR, GT and LT. Words end at a NUL byte, as
// Redis compares them.
size_t ParseZaddFlags(const CommandContext& ctx, size_t first, bool geoadd, ZaddOptions* options);

// ZADD's work once every argument is checked: gives member j, ctx.arg(first_member +
// member_stride * j), the score scores[j] in the sorted set at ctx.arg(1) (created unless XX;
// WRONGTYPE for another type), and replies as ZADD does. GEOADD shares it, its members three
// arguments apart.
void ZaddElements(CommandContext& ctx, const ZaddOptions& options, const double* scores,
                  size_t elements, size_t first_member, size_t member_stride);

// Stores a finished set under key, replacing any value and deadline, or deletes the key when
// the set is empty (the STORE commands). Replies the set's size, marks the change and
// announces event (del for a deletion).
void StoreZsetResult(CommandContext& ctx, std::string_view key, SortedSet&& set,
                     std::string_view event);

// ZMSCORE, GEOHASH and GEOPOS: an array of one entry per member named after the key, a null (a
// null array when null_array) for a member or key that is not there, reply(score) for the
// others. Replies WRONGTYPE instead for a key of another type.
template <typename Reply>
void ReplyPerMember(CommandContext& ctx, bool null_array, Reply reply) {
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::optional<double> score;
    if (set != nullptr) score = set->Score(ctx.arg(i));
    if (score) {
      reply(*score);
    } else if (null_array) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
  }
}

// One element of a reply that may carry scores: the member, then (with scores) its score, as a
// [member, score] pair in RESP3.
inline void ReplyZsetElement(ReplyBuilder& reply, std::string_view member, double score,
                             bool with_scores) {
  if (with_scores && reply.resp3()) reply.Array(2);
  reply.Bulk(member);
  if (with_scores) reply.Double(score);
}

// Writes many such elements (ZRANGE and friends): each is assembled in a stack buffer and the
// buffer goes to the reply in one append per few kilobytes, because three appends per member
// (length line, bytes, CRLF) cost more than the rest of a ZRANGE 0 9. The bytes are exactly
// ReplyZsetElement's. Flushes when destroyed.
class ZsetElementWriter {
 public:
  ZsetElementWriter(ReplyBuilder& reply, bool with_scores)
      : reply_(reply), with_scores_(with_scores), resp3_(reply.resp3()) {}
  ~ZsetElementWriter() { Flush(); }
  ZsetElementWriter(const ZsetElementWriter&) = delete;
  ZsetElementWriter& operator=(const ZsetElementWriter&) = delete;

  void Add(std::string_view member, double score);

 private:
  void Flush() {
    if (used_ > 0) reply_.Raw(std::string_view(buffer_, used_));
    used_ = 0;
  }
  void Put(std::string_view bytes) {
    std::memcpy(buffer_ + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
  }
  void PutBulkHeader(size_t length);

  ReplyBuilder& reply_;
  const bool with_scores_;
  const bool resp3_;
  size_t used_ = 0;
  char buffer_[4096];
};

// The array header for `count` such elements: flat (2 per element) in RESP2, pairs in RESP3.
inline void ReplyZsetElementsHeader(ReplyBuilder& reply, size_t count, bool with_scores) {
  reply.Array(with_scores && !reply.resp3() ? count * 2 : count);
}

// Registers the set-operation rows (zset_setops.cc) with the family's adder.
void AddZsetSetOperationCommands(const CommandAdder& add);

}  // namespace goblin
