// Sorted-set commands on one key: ZADD ZINCRBY ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANK
// ZREVRANK ZRANGE ZRANGESTORE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZREVRANGE
// ZREM ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZSCAN.
// The multi-key set operations live in zset_setops.cc.
//
// Every range command is rank arithmetic on the SortedSet (sorted_set.h): a score or lex range
// becomes ranks [first, last), LIMIT offset/count narrows them, and the reply is written
// straight from the set's iterator into the reply buffer, so its length is known up front.
// Arguments are checked in Redis's order (options, option conflicts, range syntax, then the
// key), so a command that fails changes nothing and answers Redis's error.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "commands/families.h"
#include "commands/zset_family.h"
#include "core/glob.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {

ZsetLimits ZsetLimitsOf(const CommandContext& ctx) { return ZsetLimitsOf(ctx.server.config); }

bool LookupZset(CommandContext& ctx, std::string_view key, SortedSet** set, bool for_read) {
  KeyEntry* entry;
  *set = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kZSet, &entry, for_read)) return false;
  if (entry != nullptr) *set = &static_cast<ZsetObject*>(entry->object())->set();
  return true;
}

void ZsetElementWriter::PutBulkHeader(size_t length) {
  buffer_[used_++] = '$';
  used_ += FormatInt64(static_cast<int64_t>(length), buffer_ + used_);
  Put("\r\n");
}

void ZsetElementWriter::Add(std::string_view member, double score) {
  // Room for "*2\r\n", the member's length line, the member, CRLF, and a score (at most 25
  // bytes of text plus its own length line).
  constexpr size_t kOverhead = 4 + 24 + 2 + 32 + 8;
  if (used_ + member.size() + kOverhead > sizeof(buffer_)) {
    Flush();
    if (member.size() + kOverhead > sizeof(buffer_)) {
      ReplyZsetElement(reply_, member, score, with_scores_);
      return;
    }
  }
  if (with_scores_ && resp3_) Put("*2\r\n");
  PutBulkHeader(member.size());
  Put(member);
  Put("\r\n");
  if (!with_scores_) return;
  const std::string text = FormatDouble(score);
  if (resp3_) {
    buffer_[used_++] = ',';
  } else {
    PutBulkHeader(text.size());
  }
  Put(text);
  Put("\r\n");
}

void StoreZsetResult(CommandContext& ctx, std::string_view key, SortedSet&& set,
                     std::string_view event) {
  Database& db = ctx.db();
  if (set.empty()) {
    ctx.reply.Integer(0);
    if (db.Delete(key)) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyGeneric, "del", key);
    }
    return;
  }
  const int64_t size = static_cast<int64_t>(set.size());
  db.Put(key, EntryValue::Object(new ZsetObject(std::move(set))), std::nullopt);
  MarkDirty(ctx);
  Notify(ctx, kNotifyZset, event, key);
  ctx.reply.Integer(size);
}

namespace {

constexpr std::string_view kNanScore = "ERR resulting score is not a number (NaN)";

// --- Argument parsing ------------------------------------------------------------------------

// A score range bound as Redis's zslParseRange reads it: strtod over the argument as a C
// string (so it ends at a NUL byte), "(" prefix for exclusive. Laxer than a score: empty text
// and "(" alone read as 0, leading spaces and hex are accepted, "1e400" is inf; only trailing
// bytes and NaN are rejected.
bool ParseScoreBound(std::string_view text, double* value, bool* exclusive) {
  *exclusive = !text.empty() && text[0] == '(';
  if (*exclusive) text.remove_prefix(1);
  text = text.substr(0, text.find('\0'));
  char small[64];
  std::string large;
  const char* c_text;
  if (text.size() < sizeof(small)) {
    std::memcpy(small, text.data(), text.size());
    small[text.size()] = '\0';
    c_text = small;
  } else {
    large.assign(text);
    c_text = large.c_str();
  }
  char* end;
  *value = std::strtod(c_text, &end);
  return *end == '\0' && !std::isnan(*value);
}

struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;
};

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* range) {
  return ParseScoreBound(min, &range->min, &range->min_exclusive) &&
         ParseScoreBound(max, &range->max, &range->max_exclusive);
}

// A lex bound as Redis's zslParseLexRangeItem reads it: "-", "+" (a C string, so a NUL may
// follow), "[member" or "(member" (binary-safe).
bool ParseLexBound(std::string_view text, ZsetLexBound* bound) {
  if (text.empty()) return false;
  const bool alone = text.size() == 1 || text[1] == '\0';
  switch (text[0]) {
    case '+':
      bound->kind = ZsetLexBound::Kind::kPositiveInfinity;
      return alone;
    case '-':
      bound->kind = ZsetLexBound::Kind::kNegativeInfinity;
      return alone;
    case '(':
      bound->kind = ZsetLexBound::Kind::kExclusive;
      bound->member = text.substr(1);
      return true;
    case '[':
      bound->kind = ZsetLexBound::Kind::kInclusive;
      bound->member = text.substr(1);
      return true;
    default:
      return false;
  }
}

struct LexRange {
  ZsetLexBound min;
  ZsetLexBound max;
};

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* range) {
  return ParseLexBound(min, &range->min) && ParseLexBound(max, &range->max);
}

// Ranks [first, last) of a set's elements inside a range (first >= last when none).
struct RankSpan {
  size_t first = 0;
  size_t last = 0;
  size_t size() const { return last > first ? last - first : 0; }
};

RankSpan SpanOf(const SortedSet& set, const ScoreRange& range) {
  return {set.ScoreLowerBound(range.min, range.min_exclusive),
          set.ScoreUpperBound(range.max, range.max_exclusive)};
}

RankSpan SpanOf(const SortedSet& set, const LexRange& range) {
  return {set.LexLowerBound(range.min), set.LexUpperBound(range.max)};
}

// Redis's start/end normalisation for rank ranges (ZRANGE, ZREMRANGEBYRANK): negative counts
// from the end; an empty span when start > end or start is past the end.
RankSpan RankSpanOf(int64_t start, int64_t end, size_t size) {
  const int64_t length = static_cast<int64_t>(size);
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (start > end || start >= length) return {};
  if (end >= length) end = length - 1;
  return {static_cast<size_t>(start), static_cast<size_t>(end) + 1};
}

// The ranks of a rank range walked from the top (ZREVRANGE): position i from the top is rank
// size - 1 - i.
RankSpan FromTop(RankSpan span, size_t size) {
  if (span.size() == 0) return {};
  return {size - span.last, size - span.first};
}

// LIMIT offset count applied to the elements of `span`, walked forward or from its end.
// Redis: a negative offset, or an offset at or past the set's size, selects nothing; a
// negative count means no limit.
RankSpan ApplyLimit(RankSpan span, size_t set_size, int64_t offset, int64_t count, bool reverse) {
  if (offset < 0 || (offset > 0 && static_cast<uint64_t>(offset) >= set_size)) return {};
  const size_t available = span.size();
  if (static_cast<uint64_t>(offset) >= available) return {};
  const size_t skip = static_cast<size_t>(offset);
  size_t n = available - skip;
  if (count >= 0 && static_cast<uint64_t>(count) < n) n = static_cast<size_t>(count);
  if (reverse) return {span.last - skip - n, span.last - skip};
  return {span.first + skip, span.first + skip + n};
}

// Writes the elements of span (descending when reverse) as a range reply.
void ReplySpan(CommandContext& ctx, const SortedSet& set, RankSpan span, bool reverse,
               bool with_scores) {
  ReplyZsetElementsHeader(ctx.reply, span.size(), with_scores);
  if (span.size() == 0) return;
  ZsetElementWriter writer(ctx.reply, with_scores);
  set.ForEachInRankRange(span.first, span.last, reverse,
                         [&](double score, std::string_view member) { writer.Add(member, score); });
}

// --- ZADD / ZINCRBY ---------------------------------------------------------------------------

void ZaddGeneric(CommandContext& ctx, bool incr_command) {
  ZaddOptions options;
  options.incr = incr_command;
  const size_t score_index = ParseZaddFlags(ctx, 2, /*geoadd=*/false, &options);
  const size_t rest = ctx.argc() - score_index;
  if (rest == 0 || rest % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  const size_t elements = rest / 2;
  if (options.nx && options.xx) {
    ctx.reply.Error("ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((options.gt && options.nx) || (options.lt && options.nx) || (options.gt && options.lt)) {
    ctx.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (options.incr && elements > 1) {
    ctx.reply.Error("ERR INCR option supports a single increment-element pair");
    return;
  }
  ScoreList scores(elements);
  for (size_t j = 0; j < elements; ++j) {
    if (!ParseDouble(ctx.arg(score_index + 2 * j), &scores[j])) {
      ctx.reply.Error(errors::kNotFloat);
      return;
    }
  }
  ZaddElements(ctx, options, scores.data(), elements, score_index + 1, 2);
}

void ZaddCommand(CommandContext& ctx) { ZaddGeneric(ctx, false); }
void ZincrbyCommand(CommandContext& ctx) { ZaddGeneric(ctx, true); }

}  // namespace

size_t ParseZaddFlags(const CommandContext& ctx, size_t first, bool geoadd, ZaddOptions* options) {
  for (; first < ctx.argc(); ++first) {
    const std::string_view option = ctx.arg(first);
    if (WordIs(option, "nx")) {
      options->nx = true;
    } else if (WordIs(option, "xx")) {
      options->xx = true;
    } else if (WordIs(option, "ch")) {
      options->ch = true;
    } else if (!geoadd && WordIs(option, "incr")) {
      options->incr = true;
    } else if (!geoadd && WordIs(option, "gt")) {
      options->gt = true;
    } else if (!geoadd && WordIs(option, "lt")) {
      options->lt = true;
    } else {
      break;
    }
  }
  return first;
}

void ZaddElements(CommandContext& ctx, const ZaddOptions& options, const double* scores,
                  size_t elements, size_t first_member, size_t member_stride) {
  const std::string_view key = ctx.arg(1);
  KeyEntry* entry;
  if (!LookupTyped(ctx, key, ValueType::kZSet, &entry, /*for_read=*/false)) return;
  const ZsetLimits limits = ZsetLimitsOf(ctx);
  ZsetObject* created = nullptr;
  SortedSet* set;
  if (entry == nullptr) {
    if (options.xx) {
      if (options.incr) {
        ctx.reply.Null();
      } else {
        ctx.reply.Integer(0);
      }
      return;
    }
    // Redis sizes a new set from the pair count and the first member's length.
    created = new ZsetObject(elements, ctx.arg(first_member).size(), limits);
    set = &created->set();
  } else {
    set = &static_cast<ZsetObject*>(entry->object())->set();
    // Redis 7.2 converts before adding more pairs than a small set may hold, even when some of
    // them repeat a member.
    if (elements > limits.max_listpack_entries) ZsetObject::ConvertToLarge(*set);
  }

  int64_t added = 0;
  int64_t updated = 0;
  int64_t processed = 0;
  double reply_score = 0;
  bool failed = false;
  for (size_t j = 0; j < elements; ++j) {
    double score = scores[j];
    const std::string_view member = ctx.arg(first_member + member_stride * j);
    if (options.plain()) {
      // One lookup: insert, then look at what was there. Redis keeps the old score when the
      // new one compares equal (0 and -0), so a sign-of-zero change is put back.
      double old;
      if (ZsetObject::Insert(*set, score, member, limits, &old)) {
        ++added;
      } else if (old != score) {
        ++updated;
      } else if (std::signbit(old) != std::signbit(score)) {
        ZsetObject::Insert(*set, old, member, limits);
      }
      ++processed;
      continue;
    }
    const std::optional<double> current = set->Score(member);
    if (current) {
      if (options.nx) continue;
      if (options.incr) {
        score += *current;
        if (std::isnan(score)) {
          ctx.reply.Error(kNanScore);
          failed = true;
          break;
        }
      }
      if ((options.lt && score >= *current) || (options.gt && score <= *current)) continue;
      if (score != *current) {
        ZsetObject::Insert(*set, score, member, limits);
        ++updated;
      }
    } else if (!options.xx) {
      ZsetObject::Insert(*set, score, member, limits);
      ++added;
    } else {
      continue;
    }
    ++processed;
    reply_score = score;
  }

  if (created != nullptr) {
    if (set->empty()) {
      delete created;
    } else {
      ctx.db().Put(key, EntryValue::Object(created), std::nullopt);
    }
  } else if (added + updated > 0) {
    ctx.db().Touch(key);
  }
  MarkDirty(ctx, static_cast<uint64_t>(added + updated));
  if (added + updated > 0) Notify(ctx, kNotifyZset, options.incr ? "zincr" : "zadd", key);
  if (failed) return;
  if (options.incr) {
    if (processed > 0) {
      ctx.reply.Double(reply_score);
    } else {
      ctx.reply.Null();
    }
  } else {
    ctx.reply.Integer(options.ch ? added + updated : added);
  }
}

namespace {

// --- Reads of one member or count -----------------------------------------------------------

void ZscoreCommand(CommandContext& ctx) {
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  std::optional<double> score;
  if (set != nullptr) score = set->Score(ctx.arg(2));
  if (score) {
    ctx.reply.Double(*score);
  } else {
    ctx.reply.Null();
  }
}

void ZmscoreCommand(CommandContext& ctx) {
  ReplyPerMember(ctx, /*null_array=*/false, [&](double score) { ctx.reply.Double(score); });
}

void ZcardCommand(CommandContext& ctx) {
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Integer(set == nullptr ? 0 : static_cast<int64_t>(set->size()));
}

void ZcountCommand(CommandContext& ctx) {
  ScoreRange range;
  if (!ParseScoreRange(ctx.arg(2), ctx.arg(3), &range)) {
    ctx.reply.Error(errors::kMinMaxNotFloat);
    return;
  }
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Integer(set == nullptr ? 0 : static_cast<int64_t>(SpanOf(*set, range).size()));
}

void ZlexcountCommand(CommandContext& ctx) {
  LexRange range;
  if (!ParseLexRange(ctx.arg(2), ctx.arg(3), &range)) {
    ctx.reply.Error(errors::kMinMaxNotLexRange);
    return;
  }
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Integer(set == nullptr ? 0 : static_cast<int64_t>(SpanOf(*set, range).size()));
}

void ZrankGeneric(CommandContext& ctx, bool reverse) {
  if (ctx.argc() > 4) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return;
  }
  bool with_score = false;
  if (ctx.argc() == 4) {
    if (!EqualsIgnoreCase(ctx.arg(3), "withscore")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    with_score = true;
  }
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  std::optional<size_t> rank;
  if (set != nullptr) rank = reverse ? set->ReverseRank(ctx.arg(2)) : set->Rank(ctx.arg(2));
  if (!rank) {
    if (with_score) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  if (!with_score) {
    ctx.reply.Integer(static_cast<int64_t>(*rank));
    return;
  }
  ctx.reply.Array(2);
  ctx.reply.Integer(static_cast<int64_t>(*rank));
  ctx.reply.Double(*set->Score(ctx.arg(2)));
}

void ZrankCommand(CommandContext& ctx) { ZrankGeneric(ctx, false); }
void ZrevrankCommand(CommandContext& ctx) { ZrankGeneric(ctx, true); }

// --- ZRANGE and its older forms ----------------------------------------------------------------

enum class RangeKind { kAuto, kRank, kScore, kLex };
enum class RangeDirection { kAuto, kForward, kReverse };

// ZRANGE, ZRANGESTORE and the Z[REV]RANGE[BYSCORE|BYLEX] forms, as Redis's
// zrangeGenericCommand: argv[src] is the source key, then min, max and options.
// `store` is the destination key of ZRANGESTORE, nullptr for the commands that reply.
void ZrangeGeneric(CommandContext& ctx, size_t src, const std::string_view* store, RangeKind kind,
                   RangeDirection direction) {
  size_t min_index = src + 1;
  size_t max_index = src + 2;
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = src + 3; j < ctx.argc(); ++j) {
    const size_t left = ctx.argc() - j - 1;
    std::string_view option = ctx.arg(j);
    if (store == nullptr && EqualsIgnoreCase(option, "withscores")) {
      with_scores = true;
    } else if (EqualsIgnoreCase(option, "limit") && left >= 2) {
      if (!ParseIntegerArg(ctx, ctx.arg(j + 1), &offset) ||
          !ParseIntegerArg(ctx, ctx.arg(j + 2), &limit)) {
        return;
      }
      j += 2;
    } else if (direction == RangeDirection::kAuto && EqualsIgnoreCase(option, "rev")) {
      direction = RangeDirection::kReverse;
    } else if (kind == RangeKind::kAuto && EqualsIgnoreCase(option, "bylex")) {
      kind = RangeKind::kLex;
    } else if (kind == RangeKind::kAuto && EqualsIgnoreCase(option, "byscore")) {
      kind = RangeKind::kScore;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (direction == RangeDirection::kAuto) direction = RangeDirection::kForward;
  if (kind == RangeKind::kAuto) kind = RangeKind::kRank;
  // As in Redis, "LIMIT x -1" passes this check (a count of -1 is "no limit").
  if (limit != -1 && kind == RangeKind::kRank) {
    ctx.reply.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return;
  }
  if (with_scores && kind == RangeKind::kLex) {
    ctx.reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return;
  }
  const bool reverse = direction == RangeDirection::kReverse;
  if (reverse && kind != RangeKind::kRank) std::swap(min_index, max_index);

  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  switch (kind) {
    case RangeKind::kAuto:
    case RangeKind::kRank:
      if (!ParseIntegerArg(ctx, ctx.arg(min_index), &start) ||
          !ParseIntegerArg(ctx, ctx.arg(max_index), &end)) {
        return;
      }
      break;
    case RangeKind::kScore:
      if (!ParseScoreRange(ctx.arg(min_index), ctx.arg(max_index), &score_range)) {
        ctx.reply.Error(errors::kMinMaxNotFloat);
        return;
      }
      break;
    case RangeKind::kLex:
      if (!ParseLexRange(ctx.arg(min_index), ctx.arg(max_index), &lex_range)) {
        ctx.reply.Error(errors::kMinMaxNotLexRange);
        return;
      }
      break;
  }

  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(src), &set, true)) return;
  if (set == nullptr) {
    if (store != nullptr) {
      StoreZsetResult(ctx, *store, SortedSet(), "zrangestore");
    } else {
      ctx.reply.Array(0);
    }
    return;
  }
  RankSpan span;
  if (kind == RangeKind::kRank) {
    span = RankSpanOf(start, end, set->size());
    if (reverse) span = FromTop(span, set->size());
  } else {
    const RankSpan range =
        kind == RangeKind::kScore ? SpanOf(*set, score_range) : SpanOf(*set, lex_range);
    span = ApplyLimit(range, set->size(), offset, limit, reverse);
  }
  if (store == nullptr) {
    ReplySpan(ctx, *set, span, reverse, with_scores);
    return;
  }
  // Redis sizes the destination from a rank range's length; other ranges start small. Members
  // go in one by one, so the form and the -0 rule come out as Redis's do.
  const ZsetLimits limits = ZsetLimitsOf(ctx);
  SortedSet result(kind == RangeKind::kRank ? span.size() : 0, 0, limits);
  if (span.size() > 0) {
    set->ForEachInRankRange(span.first, span.last, reverse,
                            [&](double score, std::string_view member) {
                              ZsetObject::Insert(result, score, member, limits);
                            });
  }
  StoreZsetResult(ctx, *store, std::move(result), "zrangestore");
}

void ZrangeCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kAuto, RangeDirection::kAuto);
}

void ZrangestoreCommand(CommandContext& ctx) {
  const std::string_view destination = ctx.arg(1);
  ZrangeGeneric(ctx, 2, &destination, RangeKind::kAuto, RangeDirection::kAuto);
}

void ZrevrangeCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kRank, RangeDirection::kReverse);
}

void ZrangebyscoreCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kScore, RangeDirection::kForward);
}

void ZrevrangebyscoreCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kScore, RangeDirection::kReverse);
}

void ZrangebylexCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kLex, RangeDirection::kForward);
}

void ZrevrangebylexCommand(CommandContext& ctx) {
  ZrangeGeneric(ctx, 1, nullptr, RangeKind::kLex, RangeDirection::kReverse);
}

// --- Removal ----------------------------------------------------------------------------------

// After `removed` members left the set at key: announces event, deletes an emptied key
// (announcing del), else records the change.
void AfterRemoval(CommandContext& ctx, std::string_view key, const SortedSet& set, size_t removed,
                  std::string_view event) {
  if (removed == 0) return;
  Notify(ctx, kNotifyZset, event, key);
  if (set.empty()) {
    ctx.db().Delete(key);  // frees the set
    Notify(ctx, kNotifyGeneric, "del", key);
  } else {
    ctx.db().Touch(key);
  }
  MarkDirty(ctx, removed);
}

void ZremCommand(CommandContext& ctx) {
  const std::string_view key = ctx.arg(1);
  SortedSet* set;
  if (!LookupZset(ctx, key, &set, false)) return;
  if (set == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  size_t removed = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (set->Erase(ctx.arg(i))) ++removed;
    if (set->empty()) break;
  }
  AfterRemoval(ctx, key, *set, removed, "zrem");
  ctx.reply.Integer(static_cast<int64_t>(removed));
}

void ZremrangeGeneric(CommandContext& ctx, RangeKind kind) {
  int64_t start = 0;
  int64_t end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  if (kind == RangeKind::kRank) {
    if (!ParseIntegerArg(ctx, ctx.arg(2), &start) || !ParseIntegerArg(ctx, ctx.arg(3), &end)) {
      return;
    }
  } else if (kind == RangeKind::kScore) {
    if (!ParseScoreRange(ctx.arg(2), ctx.arg(3), &score_range)) {
      ctx.reply.Error(errors::kMinMaxNotFloat);
      return;
    }
  } else if (!ParseLexRange(ctx.arg(2), ctx.arg(3), &lex_range)) {
    ctx.reply.Error(errors::kMinMaxNotLexRange);
    return;
  }
  const std::string_view key = ctx.arg(1);
  SortedSet* set;
  if (!LookupZset(ctx, key, &set, false)) return;
  if (set == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  RankSpan span;
  switch (kind) {
    case RangeKind::kScore:
      span = SpanOf(*set, score_range);
      break;
    case RangeKind::kLex:
      span = SpanOf(*set, lex_range);
      break;
    default:
      span = RankSpanOf(start, end, set->size());
      break;
  }
  const size_t removed = span.size() > 0 ? set->EraseRankRange(span.first, span.last) : 0;
  AfterRemoval(ctx, key, *set, removed,
               kind == RangeKind::kRank    ? "zremrangebyrank"
               : kind == RangeKind::kScore ? "zremrangebyscore"
                                           : "zremrangebylex");
  ctx.reply.Integer(static_cast<int64_t>(removed));
}

void ZremrangebyrankCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeKind::kRank); }
void ZremrangebyscoreCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeKind::kScore); }
void ZremrangebylexCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeKind::kLex); }

// --- Pops -------------------------------------------------------------------------------------

enum class PopEnd { kMin, kMax };

// Redis's genericZpopCommand for ZPOPMIN/ZPOPMAX/ZMPOP: pops up to `count` elements (-1: one,
// flat reply) from the first existing key of keys[0, key_count). emit_key: the reply names the
// key ([key, [[member, score]...]]); nested: [member, score] pairs; nil_when_empty: a null
// array when no key exists, else an empty array.
void PopGeneric(CommandContext& ctx, size_t first_key, size_t key_count, PopEnd end, int64_t count,
                bool emit_key, bool nested, bool nil_when_empty) {
  SortedSet* set = nullptr;
  std::string_view key;
  for (size_t i = 0; i < key_count; ++i) {
    key = ctx.arg(first_key + i);
    if (!LookupZset(ctx, key, &set, false)) return;
    if (set != nullptr) break;
  }
  if (set == nullptr) {
    if (nil_when_empty) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Array(0);
    }
    return;
  }
  if (count == 0) {
    ctx.reply.Array(0);
    return;
  }
  if (count < 0) count = 1;
  const size_t size = set->size();
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), size);
  ReplyBuilder& reply = ctx.reply;
  if (emit_key) {
    reply.Array(2);
    reply.Bulk(key);
    reply.Array(n);
  } else {
    reply.Array(nested ? n : n * 2);
  }
  const RankSpan span = end == PopEnd::kMin ? RankSpan{0, n} : RankSpan{size - n, size};
  set->ForEachInRankRange(span.first, span.last, end == PopEnd::kMax,
                          [&](double score, std::string_view member) {
                            if (nested) reply.Array(2);
                            reply.Bulk(member);
                            reply.Double(score);
                          });
  set->EraseRankRange(span.first, span.last);
  AfterRemoval(ctx, key, *set, n, end == PopEnd::kMin ? "zpopmin" : "zpopmax");
  // ZMPOP and BZMPOP are logged as the pop they made, as Redis logs them: one key, the count
  // taken.
  if (emit_key && ctx.propagating()) {
    ctx.Propagate({end == PopEnd::kMin ? "ZPOPMIN" : "ZPOPMAX", key, std::to_string(n)});
  }
}

void ZpopGeneric(CommandContext& ctx, PopEnd end) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  int64_t count = -1;
  if (ctx.argc() == 3 && (!ParseInt64(ctx.arg(2), &count) || count < 0)) {
    ctx.reply.Error(errors::kPositive);
    return;
  }
  PopGeneric(ctx, 1, 1, end, count, /*emit_key=*/false, ctx.reply.resp3() && count != -1,
             /*nil_when_empty=*/false);
}

void ZpopminCommand(CommandContext& ctx) { ZpopGeneric(ctx, PopEnd::kMin); }
void ZpopmaxCommand(CommandContext& ctx) { ZpopGeneric(ctx, PopEnd::kMax); }

// ZMPOP and BZMPOP: numkeys key [key ...] MIN|MAX [COUNT count], starting at argv[first].
bool ParseZsetMultiPop(CommandContext& ctx, size_t first, MultiPopArgs* args, PopEnd* end) {
  if (!ParseMultiPopArgs(ctx, first, "min", "max", args)) return false;
  *end = args->first_end ? PopEnd::kMin : PopEnd::kMax;
  return true;
}

void ZmpopCommand(CommandContext& ctx) {
  MultiPopArgs args;
  PopEnd end;
  if (!ParseZsetMultiPop(ctx, 1, &args, &end)) return;
  PopGeneric(ctx, args.first_key, args.key_count, end, args.count, /*emit_key=*/true,
             /*nested=*/true, /*nil_when_empty=*/true);
}

// --- Blocking pops ----------------------------------------------------------------------------
//
// Each serves at once when one of its keys holds a non-empty sorted set; otherwise it blocks the
// client (Server::BlockClient) and is run again when one of the keys changes. Inside EXEC it
// cannot block and answers a null array, as on timeout.

// The first of keys[first, first + count) that holds a non-empty sorted set, or a view with a
// null data() when there is none (an empty key name is a real key); false after replying
// WRONGTYPE.
bool FirstNonEmptyZset(CommandContext& ctx, size_t first, size_t count, std::string_view* key) {
  for (size_t i = 0; i < count; ++i) {
    SortedSet* set;
    if (!LookupZset(ctx, ctx.arg(first + i), &set, false)) return false;
    if (set != nullptr && !set->empty()) {
      *key = ctx.arg(first + i);
      return true;
    }
  }
  *key = {};
  return true;
}

void BlockOnKeys(CommandContext& ctx, size_t first, size_t count, int64_t deadline) {
  if (!ctx.client.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  std::vector<std::string_view> keys(ctx.argv.begin() + static_cast<std::ptrdiff_t>(first),
                                     ctx.argv.begin() + static_cast<std::ptrdiff_t>(first + count));
  ctx.server.BlockClient(ctx.client, ctx.argv, keys, deadline, ValueType::kZSet);
}

void BlockingPopGeneric(CommandContext& ctx, PopEnd end) {
  std::optional<int64_t> deadline = ParseBlockTimeout(ctx, ctx.arg(ctx.argc() - 1));
  if (!deadline) return;
  const size_t key_count = ctx.argc() - 2;
  std::string_view key;
  if (!FirstNonEmptyZset(ctx, 1, key_count, &key)) return;
  if (key.data() == nullptr) {
    BlockOnKeys(ctx, 1, key_count, *deadline);
    return;
  }
  SortedSet* set;
  LookupZset(ctx, key, &set, false);
  const size_t rank = end == PopEnd::kMin ? 0 : set->size() - 1;
  ZsetElement element = set->ElementAt(rank);
  ctx.reply.Array(3);
  ctx.reply.Bulk(key);
  ctx.reply.Bulk(element.member);
  ctx.reply.Double(element.score);
  set->EraseRankRange(rank, rank + 1);
  AfterRemoval(ctx, key, *set, 1, end == PopEnd::kMin ? "zpopmin" : "zpopmax");
  // Logged as the non-blocking pop of the key served, so a replay never blocks.
  ctx.Propagate({end == PopEnd::kMin ? "ZPOPMIN" : "ZPOPMAX", key});
}

void BzpopminCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, PopEnd::kMin); }
void BzpopmaxCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, PopEnd::kMax); }

void BzmpopCommand(CommandContext& ctx) {
  // Redis reads the timeout after the other arguments.
  MultiPopArgs args;
  PopEnd end;
  if (!ParseZsetMultiPop(ctx, 2, &args, &end)) return;
  std::optional<int64_t> deadline = ParseBlockTimeout(ctx, ctx.arg(1));
  if (!deadline) return;
  std::string_view key;
  if (!FirstNonEmptyZset(ctx, args.first_key, args.key_count, &key)) return;
  if (key.data() == nullptr) {
    BlockOnKeys(ctx, args.first_key, args.key_count, *deadline);
    return;
  }
  PopGeneric(ctx, args.first_key, args.key_count, end, args.count, /*emit_key=*/true,
             /*nested=*/true, /*nil_when_empty=*/true);
}

// --- ZRANDMEMBER ------------------------------------------------------------------------------

size_t RandomBelow(CommandContext& ctx, size_t bound) {
  return static_cast<size_t>(ctx.server.Random64() % bound);
}

void ZrandmemberWithCount(CommandContext& ctx, int64_t requested, bool with_scores) {
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr || requested == 0) {
    ctx.reply.Array(0);
    return;
  }
  ReplyBuilder& reply = ctx.reply;
  const size_t size = set->size();
  const bool unique = requested > 0;
  const uint64_t count =
      unique ? static_cast<uint64_t>(requested) : static_cast<uint64_t>(-requested);
  // Repeats allowed (a negative count), or a single element: independent draws.
  if (!unique || count == 1) {
    ReplyZsetElementsHeader(reply, count, with_scores);
    // A reply past the client's limit stops being drawn (reply_builder.h).
    for (uint64_t i = 0; i < count && !reply.over_limit(); ++i) {
      const ZsetElement e = set->ElementAt(RandomBelow(ctx, size));
      ReplyZsetElement(reply, e.member, e.score, with_scores);
    }
    return;
  }
  if (count >= size) {
    ReplySpan(ctx, *set, RankSpan{0, size}, false, with_scores);
    return;
  }
  ReplyZsetElementsHeader(reply, count, with_scores);
  if (count * 3 > size) {
    // Many of the members: one pass choosing each rank with the probability that leaves a
    // uniform sample (selection sampling), in rank order.
    size_t needed = count;
    size_t seen = 0;
    set->ForEachInRankRange(0, size, false, [&](double score, std::string_view member) {
      if (needed > 0 && RandomBelow(ctx, size - seen) < needed) {
        ReplyZsetElement(reply, member, score, with_scores);
        --needed;
      }
      ++seen;
    });
    return;
  }
  // Few of many: distinct random ranks (Floyd's algorithm), each looked up.
  std::unordered_set<size_t> chosen;
  chosen.reserve(count);
  for (size_t j = size - count; j < size; ++j) {
    const size_t pick = RandomBelow(ctx, j + 1);
    chosen.insert(chosen.count(pick) ? j : pick);
  }
  for (size_t rank : chosen) {
    const ZsetElement e = set->ElementAt(rank);
    ReplyZsetElement(reply, e.member, e.score, with_scores);
  }
}

void ZrandmemberCommand(CommandContext& ctx) {
  if (ctx.argc() >= 3) {
    int64_t count;
    bool with_scores;
    if (!ParseRandomCountArgs(ctx, "withscores", &count, &with_scores)) return;
    ZrandmemberWithCount(ctx, count, with_scores);
    return;
  }
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(set->ElementAt(RandomBelow(ctx, set->size())).member);
}

// --- ZSCAN ------------------------------------------------------------------------------------

// ZSCAN's cursor is the order key (ScoreToKey) of the next score to visit, 0 to start and when
// done. A call returns about COUNT elements and always every element of the last score it
// reaches, so elements present for a whole iteration are all returned (an element whose score
// moves behind the cursor meanwhile may be missed). A small set returns everything at once,
// as Redis does for its listpack form.
void ZscanCommand(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.arg(2), &cursor)) return;
  SortedSet* set;
  if (!LookupZset(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr) {
    ctx.reply.Raw("*2\r\n$1\r\n0\r\n*0\r\n");
    return;
  }
  ScanOptions options;
  if (!ParseScanOptions(ctx, 3, kScanMatchCount, &options)) return;
  const size_t size = set->size();
  RankSpan span{0, size};
  uint64_t next = 0;
  if (set->encoding() == SortedSet::Encoding::kSkiplist) {
    // Cursors outside the keys of real scores: below -inf's restarts, above +inf's is done.
    static const uint64_t kLowestKey = ScoreToKey(-HUGE_VAL);
    static const uint64_t kHighestKey = ScoreToKey(HUGE_VAL);
    if (cursor > kHighestKey) {
      span = {};
    } else if (cursor > kLowestKey) {
      span.first = set->ScoreLowerBound(KeyToScore(cursor, false), false);
    }
    if (span.first + static_cast<uint64_t>(options.count) < size) {
      // Extend to the end of the last score's run of ties.
      const double last = set->ElementAt(span.first + static_cast<size_t>(options.count) - 1).score;
      span.last = set->ScoreUpperBound(last, false);
      if (span.last < size) next = ScoreToKey(set->ElementAt(span.last).score);
    }
  }
  std::vector<ZsetElement> found;
  if (span.size() > 0) {
    set->ForEachInRankRange(span.first, span.last, false,
                            [&](double score, std::string_view member) {
                              if (!options.Matches(member)) return;
                              found.push_back({score, member});
                            });
  }
  ReplyBuilder& reply = ctx.reply;
  reply.Array(2);
  reply.Bulk(std::to_string(next));  // unsigned: keys of positive scores are >= 2^63
  reply.Array(found.size() * 2);
  for (const ZsetElement& e : found) {
    reply.Bulk(e.member);
    reply.Bulk(FormatDouble(e.score));
  }
}

}  // namespace

void RegisterZsetCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kWriteFast = kWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "sorted-set", kAclSortedSet};
  add("zadd", -4, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, ZaddCommand,
      "Adds one or more members to a sorted set, or updates their scores. Creates the key if it "
      "doesn't exist.",
      "1.2.0",
      "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
      "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]");
  add("zincrby", 4, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, ZincrbyCommand,
      "Increments the score of a member in a sorted set.", "1.2.0",
      "O(log(N)) where N is the number of elements in the sorted set.", "key increment member");
  add("zscore", 3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZscoreCommand,
      "Returns the score of a member in a sorted set.", "1.2.0", "O(1)", "key member");
  add("zmscore", -3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZmscoreCommand,
      "Returns the score of one or more members in a sorted set.", "6.2.0",
      "O(N) where N is the number of members being requested.", "key member [member ...]");
  add("zcard", 2, kReadFast, {KeyAt(1, kKeyRO)}, ZcardCommand,
      "Returns the number of members in a sorted set.", "1.2.0", "O(1)", "key");
  add("zcount", 4, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZcountCommand,
      "Returns the count of members in a sorted set that have scores within a range.", "2.0.0",
      "O(log(N)) with N being the number of elements in the sorted set.", "key min max");
  add("zlexcount", 4, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZlexcountCommand,
      "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9",
      "O(log(N)) with N being the number of elements in the sorted set.", "key min max");
  add("zrank", -3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrankCommand,
      "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0",
      "O(log(N))", "key member [WITHSCORE]");
  add("zrevrank", -3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrevrankCommand,
      "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0",
      "O(log(N))", "key member [WITHSCORE]");
  add("zrange", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrangeCommand,
      "Returns members in a sorted set within a range of indexes.", "1.2.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements returned.",
      "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]");
  add("zrangestore", -5, kWrite, {KeyAt(1, kKeyOW | kKeyUpdate), KeyAt(2, kKeyRO | kKeyAccess)},
      ZrangestoreCommand, "Stores a range of members from sorted set in a key.", "6.2.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements stored into the destination key.",
      "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]");
  add("zrangebyscore", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrangebyscoreCommand,
      "Returns members in a sorted set within a range of scores.", "1.0.5",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
      "with LIMIT), you can consider it O(log(N)).",
      "key min max [WITHSCORES] [LIMIT offset count]");
  add("zrevrangebyscore", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrevrangebyscoreCommand,
      "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
      "with LIMIT), you can consider it O(log(N)).",
      "key max min [WITHSCORES] [LIMIT offset count]");
  add("zrangebylex", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrangebylexCommand,
      "Returns members in a sorted set within a lexicographical range.", "2.8.9",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
      "with LIMIT), you can consider it O(log(N)).",
      "key min max [LIMIT offset count]");
  add("zrevrangebylex", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrevrangebylexCommand,
      "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
      "with LIMIT), you can consider it O(log(N)).",
      "key max min [LIMIT offset count]");
  add("zrevrange", -4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrevrangeCommand,
      "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements returned.",
      "key start stop [WITHSCORES]");
  add("zrem", -3, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, ZremCommand,
      "Removes one or more members from a sorted set. Deletes the sorted set if all members were "
      "removed.",
      "1.2.0",
      "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
      "elements to be removed.",
      "key member [member ...]");
  add("zremrangebyrank", 4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, ZremrangebyrankCommand,
      "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all "
      "members were removed.",
      "2.0.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements removed by the operation.",
      "key start stop");
  add("zremrangebyscore", 4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, ZremrangebyscoreCommand,
      "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
      "members were removed.",
      "1.2.0",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements removed by the operation.",
      "key min max");
  add("zremrangebylex", 4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, ZremrangebylexCommand,
      "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if "
      "all members were removed.",
      "2.8.9",
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements removed by the operation.",
      "key min max");
  add("zpopmin", -2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)},
      ZpopminCommand,
      "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.",
      "5.0.0",
      "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
      "number of elements popped.",
      "key [count]");
  add("zpopmax", -2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)},
      ZpopmaxCommand,
      "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.",
      "5.0.0",
      "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
      "number of elements popped.",
      "key [count]");
  add("bzpopmin", -3, kCmdWrite | kCmdFast | kCmdBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-2, 1, 0)}},
      BzpopminCommand,
      "Removes and returns the member with the lowest score from one or more sorted sets. Blocks "
      "until a member is available otherwise. Deletes the sorted set if the last element was "
      "popped.",
      "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.",
      "key [key ...] timeout");
  add("bzpopmax", -3, kCmdWrite | kCmdFast | kCmdBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-2, 1, 0)}},
      BzpopmaxCommand,
      "Removes and returns the member with the highest score from one or more sorted sets. "
      "Blocks until a member available otherwise.  Deletes the sorted set if the last element "
      "was popped.",
      "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.",
      "key [key ...] timeout");
  add("bzmpop", -5, kCmdWrite | kCmdBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      BzmpopCommand,
      "Removes and returns a member by score from one or more sorted sets. Blocks until a member "
      "is available otherwise. Deletes the sorted set if the last element was popped.",
      "7.0.0",
      "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
      "in the sorted set, and M being the number of elements popped.",
      "timeout numkeys key [key ...] <MIN | MAX> [COUNT count]");
  add("zmpop", -4, kCmdWrite,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}},
      ZmpopCommand,
      "Returns the highest- or lowest-scoring members from one or more sorted sets after "
      "removing them. Deletes the sorted set if the last member was popped.",
      "7.0.0",
      "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
      "elements in the sorted set, and M being the number of elements popped.",
      "numkeys key [key ...] <MIN | MAX> [COUNT count]");
  add("zrandmember", -2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZrandmemberCommand,
      "Returns one or more random members from a sorted set.", "6.2.0",
      "O(N) where N is the number of members returned", "key [count [WITHSCORES]]",
      {"nondeterministic_output"});
  add("zscan", -3, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, ZscanCommand,
      "Iterates over members and scores of a sorted set.", "2.8.0",
      "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
      "the cursor to return back to 0. N is the number of elements inside the collection.",
      "key cursor [MATCH pattern] [COUNT count]", {"nondeterministic_output"});
  AddZsetSetOperationCommands(add);
}

}  // namespace goblin
