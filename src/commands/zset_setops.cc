// Sorted-set operations over several keys: ZUNION ZINTER ZDIFF ZUNIONSTORE ZINTERSTORE
// ZDIFFSTORE ZINTERCARD, as Redis's zunionInterDiffGenericCommand. Inputs may be sorted sets or
// plain sets (whose members score 1).
//
// The result is computed as (score, member view) pairs pointing into the inputs, sorted once by
// (score, member), then either written to the reply or bulk-loaded into the destination set.
// Floating-point sums depend on the order of the terms, so inputs are combined in Redis's
// order: by ascending size, ties in argument order (Redis's qsort is glibc's merge sort, which
// is stable).
#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commands/zset_family.h"
#include "core/set_object.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

enum class SetOperation { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input key: a sorted set (its members and scores), a plain set (every member scores 1, as
// in Redis) or a missing key (empty). The input's type is known here and nowhere else in this
// file: a further type means a case in Open and a branch in each method.
class SetOpInput {
 public:
  // Opens key; returns false after replying WRONGTYPE.
  static bool Open(CommandContext& ctx, std::string_view key, SetOpInput* input) {
    KeyEntry* entry = ctx.db().FindForRead(key, ctx.now_ms);
    if (entry == nullptr) return true;
    switch (entry->type()) {
      case ValueType::kZSet:
        input->zset_ = &static_cast<const ZsetObject*>(entry->object())->set();
        return true;
      case ValueType::kSet:
        input->set_ = &static_cast<const SetObject*>(entry->object())->set();
        return true;
      default:
        ctx.reply.Error(errors::kWrongType);
        return false;
    }
  }

  size_t size() const {
    if (zset_ != nullptr) return zset_->size();
    return set_ == nullptr ? 0 : set_->size();
  }

  // Calls fn(double score, std::string_view member) for every element. The member view lasts
  // as long as the input's value unless views_stable() is false, when it lasts only for the
  // call (a plain set formats integer members in a scratch buffer).
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (zset_ != nullptr) {
      zset_->ForEachInRankRange(0, zset_->size(), false, fn);
    } else if (set_ != nullptr) {
      set_->ForEach([&](std::string_view member) { fn(1.0, member); });
    }
  }
  bool views_stable() const { return set_ == nullptr; }

  bool Find(std::string_view member, double* score) const {
    if (zset_ != nullptr) {
      const std::optional<double> found = zset_->Score(member);
      if (!found) return false;
      *score = *found;
      return true;
    }
    if (set_ == nullptr || !set_->Contains(member)) return false;
    *score = 1.0;
    return true;
  }

  // Whether both inputs read the same value (a key named twice).
  bool SameValue(const SetOpInput& other) const {
    const void* value = zset_ != nullptr ? static_cast<const void*>(zset_) : set_;
    return value != nullptr &&
           value == (other.zset_ != nullptr ? static_cast<const void*>(other.zset_) : other.set_);
  }

  double weight = 1;

 private:
  const SortedSet* zset_ = nullptr;
  const PackedSet* set_ = nullptr;
};

// Members the result keeps: views into the inputs when those last, else copies.
class MemberStore {
 public:
  std::string_view Keep(std::string_view member, const SetOpInput& from) {
    if (from.views_stable()) return member;
    return copies_.emplace_back(member);
  }

 private:
  std::deque<std::string> copies_;  // a deque never moves its elements
};

void AggregateInto(double* target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      *target += value;
      // inf + -inf: Redis's convention is 0.
      if (std::isnan(*target)) *target = 0;
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

using ResultElement = std::pair<double, std::string_view>;

void Intersect(const std::vector<SetOpInput>& inputs, Aggregate aggregate, bool count_only,
               int64_t limit, MemberStore* store, std::vector<ResultElement>* result,
               int64_t* cardinality) {
  if (inputs[0].size() == 0) return;
  bool done = false;
  inputs[0].ForEach([&](double first_score, std::string_view member) {
    if (done) return;
    double score = inputs[0].weight * first_score;
    if (std::isnan(score)) score = 0;
    for (size_t j = 1; j < inputs.size(); ++j) {
      double value;
      if (inputs[j].SameValue(inputs[0])) {
        value = first_score;
      } else if (!inputs[j].Find(member, &value)) {
        return;
      }
      AggregateInto(&score, value * inputs[j].weight, aggregate);
    }
    if (count_only) {
      ++*cardinality;
      done = limit > 0 && *cardinality >= limit;
    } else {
      result->emplace_back(score, store->Keep(member, inputs[0]));
    }
  });
}

void Unite(const std::vector<SetOpInput>& inputs, Aggregate aggregate, MemberStore* store,
           std::vector<ResultElement>* result) {
  std::unordered_map<std::string_view, double> scores;
  scores.reserve(inputs.back().size());
  for (const SetOpInput& input : inputs) {
    input.ForEach([&](double element_score, std::string_view member) {
      double score = input.weight * element_score;
      if (std::isnan(score)) score = 0;
      auto it = scores.find(member);
      if (it == scores.end()) {
        scores.emplace(store->Keep(member, input), score);
      } else {
        AggregateInto(&it->second, score, aggregate);
      }
    });
  }
  result->reserve(scores.size());
  for (const auto& [member, score] : scores) result->emplace_back(score, member);
}

void Subtract(const std::vector<SetOpInput>& inputs, MemberStore* store,
              std::vector<ResultElement>* result) {
  if (inputs[0].size() == 0) return;
  for (size_t j = 1; j < inputs.size(); ++j) {
    if (inputs[j].SameValue(inputs[0])) return;
  }
  inputs[0].ForEach([&](double score, std::string_view member) {
    double ignored;
    for (size_t j = 1; j < inputs.size(); ++j) {
      if (inputs[j].Find(member, &ignored)) return;
    }
    result->emplace_back(score, store->Keep(member, inputs[0]));
  });
}

// destination: the STORE forms' key, nullptr for the forms that reply with the elements.
void SetOperationGeneric(CommandContext& ctx, const std::string_view* destination,
                         size_t numkeys_index, SetOperation operation, bool count_only) {
  int64_t numkeys;
  if (!ParseIntegerArg(ctx, ctx.arg(numkeys_index), &numkeys)) return;
  if (numkeys < 1) {
    ctx.reply.Error(errors::NoInputKeys(CommandName(ctx)));
    return;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - (numkeys_index + 1)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<SetOpInput> inputs(static_cast<size_t>(numkeys));
  size_t j = numkeys_index + 1;
  for (SetOpInput& input : inputs) {
    if (!SetOpInput::Open(ctx, ctx.arg(j++), &input)) return;
  }

  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
  int64_t limit = 0;
  const bool weighted = operation != SetOperation::kDiff && !count_only;
  while (j < ctx.argc()) {
    const size_t remaining = ctx.argc() - j;
    std::string_view option = ctx.arg(j);
    if (weighted && remaining >= inputs.size() + 1 && EqualsIgnoreCase(option, "weights")) {
      ++j;
      for (SetOpInput& input : inputs) {
        if (!ParseDouble(ctx.arg(j++), &input.weight)) {
          ctx.reply.Error(errors::kWeightNotFloat);
          return;
        }
      }
    } else if (weighted && remaining >= 2 && EqualsIgnoreCase(option, "aggregate")) {
      std::string_view name = ctx.arg(j + 1);
      if (EqualsIgnoreCase(name, "sum")) {
        aggregate = Aggregate::kSum;
      } else if (EqualsIgnoreCase(name, "min")) {
        aggregate = Aggregate::kMin;
      } else if (EqualsIgnoreCase(name, "max")) {
        aggregate = Aggregate::kMax;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
      j += 2;
    } else if (destination == nullptr && !count_only && EqualsIgnoreCase(option, "withscores")) {
      ++j;
      with_scores = true;
    } else if (count_only && remaining >= 2 && EqualsIgnoreCase(option, "limit")) {
      if (!ParseInt64(ctx.arg(j + 1), &limit) || limit < 0) {
        ctx.reply.Error(errors::kNegativeLimit);
        return;
      }
      j += 2;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }

  if (operation != SetOperation::kDiff) {
    std::stable_sort(inputs.begin(), inputs.end(),
                     [](const SetOpInput& a, const SetOpInput& b) { return a.size() < b.size(); });
  }
  MemberStore store;
  std::vector<ResultElement> result;
  int64_t cardinality = 0;
  switch (operation) {
    case SetOperation::kInter:
      Intersect(inputs, aggregate, count_only, limit, &store, &result, &cardinality);
      break;
    case SetOperation::kUnion:
      Unite(inputs, aggregate, &store, &result);
      break;
    case SetOperation::kDiff:
      Subtract(inputs, &store, &result);
      break;
  }
  if (count_only) {
    ctx.reply.Integer(cardinality);
    return;
  }
  std::sort(result.begin(), result.end());  // by score, then member bytes; -0 ties with 0

  if (destination == nullptr) {
    ReplyZsetElementsHeader(ctx.reply, result.size(), with_scores);
    for (const auto& [score, member] : result) {
      ReplyZsetElement(ctx.reply, member, score, with_scores);
    }
    return;
  }
  // Redis builds the result in its large form and repacks it small when it fits the limits;
  // the small form stores -0 as 0 (zset_object.h, invariant 2).
  size_t longest = 0;
  for (const auto& element : result) longest = std::max(longest, element.second.size());
  const ZsetLimits limits = ZsetLimitsOf(ctx);
  SortedSet set(result.size(), longest, limits);
  const bool small = set.encoding() == SortedSet::Encoding::kListpack;
  for (const auto& [score, member] : result) {
    set.AppendSorted(small && score == 0 ? 0.0 : score, member, limits);
  }
  set.FinishAppends();
  StoreZsetResult(ctx, *destination, std::move(set),
                  operation == SetOperation::kUnion   ? "zunionstore"
                  : operation == SetOperation::kInter ? "zinterstore"
                                                      : "zdiffstore");
}

void ZunionCommand(CommandContext& ctx) {
  SetOperationGeneric(ctx, nullptr, 1, SetOperation::kUnion, false);
}
void ZinterCommand(CommandContext& ctx) {
  SetOperationGeneric(ctx, nullptr, 1, SetOperation::kInter, false);
}
void ZdiffCommand(CommandContext& ctx) {
  SetOperationGeneric(ctx, nullptr, 1, SetOperation::kDiff, false);
}
void ZintercardCommand(CommandContext& ctx) {
  SetOperationGeneric(ctx, nullptr, 1, SetOperation::kInter, true);
}

void StoreGeneric(CommandContext& ctx, SetOperation operation) {
  const std::string_view destination = ctx.arg(1);
  SetOperationGeneric(ctx, &destination, 2, operation, false);
}

void ZunionstoreCommand(CommandContext& ctx) { StoreGeneric(ctx, SetOperation::kUnion); }
void ZinterstoreCommand(CommandContext& ctx) { StoreGeneric(ctx, SetOperation::kInter); }
void ZdiffstoreCommand(CommandContext& ctx) { StoreGeneric(ctx, SetOperation::kDiff); }

}  // namespace

void AddZsetSetOperationCommands(const CommandAdder& add) {
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kStore = kCmdWrite | kCmdDenyOom;
  constexpr const char* kUnionComplexity =
      "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
      "the number of elements in the resulting sorted set.";
  constexpr const char* kInterComplexity =
      "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
      "number of input sorted sets and M being the number of elements in the resulting sorted "
      "set.";
  constexpr const char* kDiffComplexity =
      "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
      "is the size of the first set, and K is the size of the result set.";
  add("zunion", -3, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}}, ZunionCommand,
      "Returns the union of multiple sorted sets.", "6.2.0", kUnionComplexity,
      "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>] "
      "[WITHSCORES]");
  add("zinter", -3, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}}, ZinterCommand,
      "Returns the intersect of multiple sorted sets.", "6.2.0", kInterComplexity,
      "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE <SUM | MIN | MAX>] "
      "[WITHSCORES]");
  add("zdiff", -3, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}}, ZdiffCommand,
      "Returns the difference between multiple sorted sets.", "6.2.0", kDiffComplexity,
      "numkeys key [key ...] [WITHSCORES]");
  add("zunionstore", -4, kStore,
      {KeyAt(1, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      ZunionstoreCommand, "Stores the union of multiple sorted sets in a key.", "2.0.0",
      kUnionComplexity,
      "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
      "[AGGREGATE <SUM | MIN | MAX>]");
  add("zinterstore", -4, kStore,
      {KeyAt(1, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      ZinterstoreCommand, "Stores the intersect of multiple sorted sets in a key.", "2.0.0",
      kInterComplexity,
      "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
      "[AGGREGATE <SUM | MIN | MAX>]");
  add("zdiffstore", -4, kStore,
      {KeyAt(1, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      ZdiffstoreCommand, "Stores the difference of multiple sorted sets in a key.", "6.2.0",
      kDiffComplexity, "destination numkeys key [key ...]");
  add("zintercard", -3, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}},
      ZintercardCommand, "Returns the number of members of the intersect of multiple sorted sets.",
      "7.0.0",
      "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
      "sorted sets.",
      "numkeys key [key ...] [LIMIT limit]");
}

}  // namespace goblin
