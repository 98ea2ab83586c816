// SORT and SORT_RO over lists, sets and sorted sets, as Redis's sortCommand does them: BY
// (a pattern, a hash field with "->", or a pattern without '*' for no sorting), LIMIT, GET
// (several, "#" for the element itself, hash fields), ASC|DESC, ALPHA, and STORE (a list; an
// empty result deletes the destination).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/hash_object.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/string_number.h"
#include "core/zset_object.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {
namespace {

constexpr std::string_view kNotDouble = "ERR One or more scores can't be converted into double";

struct SortOptions {
  std::optional<std::string_view> by;
  bool dont_sort = false;  // BY a pattern without '*'
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::vector<std::string_view> gets;
  bool desc = false;
  bool alpha = false;
  std::optional<std::string_view> store;
};

// BY and GET patterns may name any key: the user must be allowed to read every key.
bool MayReadEveryKey(const CommandContext& ctx) {
  const acl::User* user = ctx.client.user;
  return user == nullptr || user->unrestricted() ||
         user->AllowsWithEveryKey(ctx.command, ctx.argv, kKeyAccess);
}

// The options after the key; false after replying the error.
bool ParseSortOptions(CommandContext& ctx, bool read_only, SortOptions* options) {
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const std::string_view word = ctx.arg(i);
    const size_t left = ctx.argc() - i - 1;
    if (EqualsIgnoreCase(word, "asc")) {
      options->desc = false;
    } else if (EqualsIgnoreCase(word, "desc")) {
      options->desc = true;
    } else if (EqualsIgnoreCase(word, "alpha")) {
      options->alpha = true;
    } else if (EqualsIgnoreCase(word, "limit") && left >= 2) {
      if (!ParseIntegerArg(ctx, ctx.arg(i + 1), &options->limit_start) ||
          !ParseIntegerArg(ctx, ctx.arg(i + 2), &options->limit_count)) {
        return false;
      }
      i += 2;
    } else if (!read_only && EqualsIgnoreCase(word, "store") && left >= 1) {
      options->store = ctx.arg(++i);
    } else if (EqualsIgnoreCase(word, "by") && left >= 1) {
      options->by = ctx.arg(++i);
      // A pattern that names no element ("nosort" by convention) keeps the stored order.
      if (options->by->find('*') == std::string_view::npos) {
        options->dont_sort = true;
      } else if (!MayReadEveryKey(ctx)) {
        ctx.reply.Error("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (EqualsIgnoreCase(word, "get") && left >= 1) {
      if (!MayReadEveryKey(ctx)) {
        ctx.reply.Error("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      options->gets.push_back(ctx.arg(++i));
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// Redis's lookupKeyByPattern: the value the pattern names for element ("#" is the element
// itself; "prefix*suffix" a string key; "prefix*suffix->field" a hash field), or nullopt.
std::optional<std::string> LookupByPattern(CommandContext& ctx, std::string_view pattern,
                                           std::string_view element) {
  if (pattern == "#") return std::string(element);
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  // "->" after the '*' with at least one character after it names a hash field.
  std::string_view field;
  size_t key_end = pattern.size();
  const size_t arrow = pattern.find("->", star + 1);
  if (arrow != std::string_view::npos && arrow + 2 < pattern.size()) {
    field = pattern.substr(arrow + 2);
    key_end = arrow;
  }
  std::string key(pattern.substr(0, star));
  key.append(element);
  key.append(pattern.substr(star + 1, key_end - star - 1));
  const KeyEntry* entry = ctx.db().Find(key, ctx.now_ms);
  if (entry == nullptr) return std::nullopt;
  char scratch[kInt64TextMax];
  if (field.data() != nullptr) {
    if (entry->type() != ValueType::kHash) return std::nullopt;
    const auto* hash = static_cast<const HashObject*>(entry->object());
    std::optional<std::string_view> value = hash->hash().Get(field, scratch);
    if (!value) return std::nullopt;
    return std::string(*value);
  }
  if (entry->type() != ValueType::kString) return std::nullopt;
  return std::string(entry->string_value(scratch));
}

struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> by_value;  // ALPHA with BY: the looked-up text
};

// The elements of value in stored order (a set's in its own order).
void CollectElements(const KeyEntry* entry, std::vector<Item>* items) {
  auto add = [&](std::string_view element) {
    items->push_back(Item{std::string(element), 0, std::nullopt});
  };
  switch (entry->type()) {
    case ValueType::kList: {
      const PackedList& list = static_cast<const ListObject*>(entry->object())->list();
      list.ForEach(0, list.size(), add);
      break;
    }
    case ValueType::kSet:
      static_cast<const SetObject*>(entry->object())->set().ForEach(add);
      break;
    case ValueType::kZSet: {
      const SortedSet& set = static_cast<const ZsetObject*>(entry->object())->set();
      set.ForEachInRankRange(0, set.size(), false,
                             [&](double, std::string_view member) { add(member); });
      break;
    }
    default:
      break;
  }
}

// A weight as Redis's SORT reads one: strtod over the text as a C string (up to a NUL byte;
// empty reads as 0), refusing what it leaves unread, NaN and overflow.
bool ParseSortScore(std::string_view text, double* score) {
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  *score = std::strtod(copy.c_str(), &end);
  return *end == '\0' && !std::isnan(*score) && errno != ERANGE;
}

// Redis compares ALPHA texts with strcoll when it replies (the C locale: bytes up to the
// first NUL) and byte-wise over the whole text when it stores.
int CompareText(std::string_view a, std::string_view b, bool whole) {
  if (!whole) {
    a = a.substr(0, a.find('\0'));
    b = b.substr(0, b.find('\0'));
  }
  return a.compare(b);
}

void SortGeneric(CommandContext& ctx, bool read_only) {
  SortOptions options;
  if (!ParseSortOptions(ctx, read_only, &options)) return;
  const KeyEntry* entry = ctx.db().FindForRead(ctx.arg(1), ctx.now_ms);
  if (entry != nullptr && entry->type() != ValueType::kList && entry->type() != ValueType::kSet &&
      entry->type() != ValueType::kZSet) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  std::vector<Item> items;
  if (entry != nullptr) CollectElements(entry, &items);
  // A set in no particular order cannot be stored or replicated as is: Redis sorts it
  // lexicographically then, and so does this.
  if (options.dont_sort && entry != nullptr && entry->type() == ValueType::kSet && options.store) {
    options.dont_sort = false;
    options.alpha = true;
    options.by.reset();
  }
  // Elements that are not sorted keep their stored order, reversed by DESC.
  if (options.dont_sort && options.desc) std::reverse(items.begin(), items.end());
  if (!options.dont_sort) {
    for (Item& item : items) {
      std::optional<std::string> by;
      if (options.by) {
        by = LookupByPattern(ctx, *options.by, item.element);
        if (options.alpha) {
          item.by_value = std::move(by);
          continue;
        }
        if (!by) continue;  // a missing weight sorts as 0
      }
      if (options.alpha) continue;
      if (!ParseSortScore(by ? *by : item.element, &item.score)) {
        ctx.reply.Error(kNotDouble);
        return;
      }
    }
    const bool by_pattern = options.by.has_value();
    const bool storing = options.store.has_value();
    auto compare = [&](const Item& a, const Item& b) {
      int cmp;
      if (!options.alpha) {
        cmp = a.score < b.score ? -1 : (a.score > b.score ? 1 : 0);
      } else if (by_pattern) {
        // Missing weights sort first.
        if (!a.by_value || !b.by_value) {
          cmp = a.by_value ? 1 : (b.by_value ? -1 : 0);
        } else {
          cmp = CompareText(*a.by_value, *b.by_value, storing);
        }
      } else {
        cmp = CompareText(a.element, b.element, storing);
      }
      // Equal weights fall back to the elements, so the order is the same on every server.
      if (cmp == 0 && !options.alpha) cmp = a.element.compare(b.element);
      return options.desc ? cmp > 0 : cmp < 0;
    };
    std::stable_sort(items.begin(), items.end(), compare);
  }
  // LIMIT, as Redis clamps it.
  const auto n = static_cast<int64_t>(items.size());
  int64_t start = std::max<int64_t>(options.limit_start, 0);
  int64_t end = options.limit_count < 0 ? n - 1 : start + options.limit_count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  end = std::min(end, n - 1);
  const size_t first = static_cast<size_t>(std::max<int64_t>(start, 0));
  const size_t last = end < start ? first : static_cast<size_t>(end) + 1;
  const size_t per_item = options.gets.empty() ? 1 : options.gets.size();
  if (!options.store) {
    ctx.reply.Array((last - first) * per_item);
    for (size_t i = first; i < last; ++i) {
      if (options.gets.empty()) {
        ctx.reply.Bulk(items[i].element);
        continue;
      }
      for (std::string_view get : options.gets) {
        std::optional<std::string> value = LookupByPattern(ctx, get, items[i].element);
        if (value) {
          ctx.reply.Bulk(*value);
        } else {
          ctx.reply.Null();
        }
      }
    }
    return;
  }
  // STORE: the output as a list (a missing GET stores an empty string).
  PackedList result;
  const ListLimits limits = ListLimitsOf(ctx.server.config);
  size_t result_bytes = 0;
  std::vector<std::string> output;
  output.reserve((last - first) * per_item);
  for (size_t i = first; i < last; ++i) {
    if (options.gets.empty()) {
      output.push_back(items[i].element);
      continue;
    }
    for (std::string_view get : options.gets) {
      output.push_back(LookupByPattern(ctx, get, items[i].element).value_or(std::string()));
    }
  }
  for (const std::string& element : output) result_bytes += element.size();
  result.ConvertForGrowth(output.size(), result_bytes, limits);
  for (const std::string& element : output) result.PushBack(element, limits);
  const size_t stored = result.size();
  if (stored == 0) {
    if (ctx.db().Delete(*options.store)) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyGeneric, "del", *options.store);
    }
  } else {
    ctx.db().Put(*options.store, EntryValue::Object(new ListObject(std::move(result))),
                 std::nullopt);
    MarkDirty(ctx, stored);
    Notify(ctx, kNotifyList, "sortstore", *options.store);
  }
  ctx.reply.Integer(static_cast<int64_t>(stored));
}

void SortCommand(CommandContext& ctx) { SortGeneric(ctx, /*read_only=*/false); }
void SortRoCommand(CommandContext& ctx) { SortGeneric(ctx, /*read_only=*/true); }

// SORT's keys as Redis finds them: the sorted key and the destination of the last STORE,
// stepping over LIMIT's two arguments and the patterns of BY and GET (those name keys only
// through the values sorted).
std::optional<std::vector<size_t>> SortKeys(const std::vector<std::string_view>& argv) {
  std::vector<size_t> keys{1};
  std::optional<size_t> store;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(argv[i], "get") || EqualsIgnoreCase(argv[i], "by")) {
      i += 1;
    } else if (EqualsIgnoreCase(argv[i], "store") && i + 1 < argv.size()) {
      store = i + 1;
    }
  }
  if (store) keys.push_back(*store);
  return keys;
}

}  // namespace

void RegisterSortCommands(CommandTable* table) {
  // SORT is no @keyspace command in Redis: it is listed with the types it sorts.
  CommandAdder add{table, "generic", kAclSet | kAclSortedSet | kAclList | kAclDangerous};
  Command* sort =
      add("sort", -2, kCmdWrite | kCmdDenyOom,
          {KeyAt(1, kKeyRO | kKeyAccess),
           KeySpec{kKeyRO | kKeyAccess, KeyBegin::Unknown(), KeyFind::Unknown(),
                   "For the optional BY/GET keyword. It is marked 'unknown' because the key names "
                   "derive from the content of the key we sort"},
           KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Unknown(), KeyFind::Unknown(),
                   "For the optional STORE keyword. It is marked 'unknown' because the keyword can "
                   "appear anywhere in the argument array"}},
          SortCommand,
          "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
          "1.0.0",
          "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
          "number of returned elements. When the elements are not sorted, complexity is O(N).",
          "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] "
          "[ALPHA] [STORE destination]");
  sort->find_keys = SortKeys;
  add("sort_ro", -2, kCmdReadonly,
      {KeyAt(1, kKeyRO | kKeyAccess),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Unknown(), KeyFind::Unknown(),
               "For the optional BY/GET keyword. It is marked 'unknown' because the key names "
               "derive from the content of the key we sort"}},
      SortRoCommand, "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0",
      "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
      "number of returned elements. When the elements are not sorted, complexity is O(N).",
      "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] "
      "[ALPHA]");
}

}  // namespace goblin
