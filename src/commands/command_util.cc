#include "commands/command_util.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/glob.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {

bool ParseIntegerArg(CommandContext& ctx, std::string_view text, int64_t* value) {
  if (ParseInt64(text, value)) return true;
  ctx.reply.Error(errors::kNotInteger);
  return false;
}

bool ParseRandomCount(CommandContext& ctx, int64_t* count) {
  if (!ParseIntegerArg(ctx, ctx.arg(2), count)) return false;
  if (*count < -INT64_MAX) {
    ctx.reply.Error(errors::kOutOfCountRange);
    return false;
  }
  return true;
}

bool ParseRandomCountArgs(CommandContext& ctx, std::string_view with_word, int64_t* count,
                          bool* with_pairs) {
  if (!ParseRandomCount(ctx, count)) return false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsIgnoreCase(ctx.arg(3), with_word))) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  *with_pairs = ctx.argc() == 4;
  if (*with_pairs && (*count < -INT64_MAX / 2 || *count > INT64_MAX / 2)) {
    ctx.reply.Error(errors::kOutOfRange);
    return false;
  }
  return true;
}

bool ParseInt32Arg(CommandContext& ctx, std::string_view text, int* value) {
  int64_t wide;
  if (!ParseIntegerArg(ctx, text, &wide)) return false;
  if (wide < INT32_MIN || wide > INT32_MAX) {
    ctx.reply.Error(errors::kOutOfInt32Range);
    return false;
  }
  *value = static_cast<int>(wide);
  return true;
}

bool ParseScanCursor(CommandContext& ctx, std::string_view text, uint64_t* cursor) {
  std::string copy(text);
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(copy.c_str(), &end, 10);
  if (copy.empty() || std::isspace(static_cast<unsigned char>(copy[0])) || *end != '\0' ||
      errno == ERANGE) {
    ctx.reply.Error(errors::kInvalidCursor);
    return false;
  }
  *cursor = value;
  return true;
}

bool ScanOptions::Matches(std::string_view text) const {
  return !use_pattern || GlobMatch(pattern, text);
}

bool ParseScanOptions(CommandContext& ctx, size_t first, uint32_t allowed, ScanOptions* out) {
  for (size_t i = first; i < ctx.argc(); ++i) {
    const bool has_value = i + 1 < ctx.argc();
    std::string_view option = ctx.arg(i);
    if (EqualsIgnoreCase(option, "count") && has_value) {
      if (!ParseIntegerArg(ctx, ctx.arg(++i), &out->count)) return false;
      if (out->count < 1) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
    } else if (EqualsIgnoreCase(option, "match") && has_value) {
      out->pattern = ctx.arg(++i);
      out->use_pattern = out->pattern != "*";
    } else if ((allowed & kScanType) && EqualsIgnoreCase(option, "type") && has_value) {
      out->type_name = ctx.arg(++i);
      out->has_type = true;
    } else if ((allowed & kScanNoValues) && EqualsIgnoreCase(option, "novalues")) {
      out->no_values = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

bool LookupTyped(CommandContext& ctx, std::string_view key, ValueType type, KeyEntry** entry,
                 bool for_read) {
  Database& db = ctx.db();
  *entry = for_read ? db.FindForRead(key, ctx.now_ms) : db.Find(key, ctx.now_ms);
  if (*entry != nullptr && (*entry)->type() != type) {
    ctx.reply.Error(errors::kWrongType);
    return false;
  }
  return true;
}

char* ResizeStringUnrecorded(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                             size_t length) {
  char* bytes = KeyEntry::ResizeRawString(entry, length);
  if (bytes == nullptr) {
    entry = ctx.db().ReserveString(key, length);
    bytes = KeyEntry::ResizeRawString(entry, length);
  }
  return bytes;
}

char* ResizeStringInPlace(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                          size_t length) {
  char* bytes = ResizeStringUnrecorded(ctx, key, entry, length);
  ctx.db().Touch(key);
  return bytes;
}

void ReplyHelp(CommandContext& ctx, std::initializer_list<const char*> lines) {
  const Command& container = ctx.command.parent ? *ctx.command.parent : ctx.command;
  std::string title = AsciiUpper(container.name);
  ctx.reply.Array(lines.size() + 3);
  ctx.reply.Simple(title + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (const char* line : lines) ctx.reply.Simple(line);
  ctx.reply.Simple("HELP");
  ctx.reply.Simple("    Prints this help.");
}

std::optional<int64_t> ParseBlockTimeout(CommandContext& ctx, std::string_view text) {
  long double seconds;
  if (!ParseLongDouble(text, &seconds)) {
    ctx.reply.Error(errors::kTimeoutNotFloat);
    return std::nullopt;
  }
  long double millis = std::ceil(seconds * 1000.0L);
  if (millis > static_cast<long double>(INT64_MAX)) {
    ctx.reply.Error(errors::kTimeoutOutOfRange);
    return std::nullopt;
  }
  if (millis < 0) {
    ctx.reply.Error(errors::kTimeoutNegative);
    return std::nullopt;
  }
  int64_t timeout = static_cast<int64_t>(millis);
  if (timeout == 0) return 0;
  if (timeout > INT64_MAX - ctx.now_ms) {
    ctx.reply.Error(errors::kTimeoutOutOfRange);
    return std::nullopt;
  }
  return ctx.now_ms + timeout;
}

bool ParseMultiPopArgs(CommandContext& ctx, size_t first, std::string_view first_word,
                       std::string_view second_word, MultiPopArgs* out) {
  int64_t numkeys;
  if (!ParseInt64(ctx.arg(first), &numkeys) || numkeys < 1) {
    ctx.reply.Error(errors::kNumkeysNotPositive);
    return false;
  }
  // The end argument comes after the keys: it must exist.
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - first - 1) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  const size_t where_index = first + 1 + static_cast<size_t>(numkeys);
  if (EqualsIgnoreCase(ctx.arg(where_index), first_word)) {
    out->first_end = true;
  } else if (EqualsIgnoreCase(ctx.arg(where_index), second_word)) {
    out->first_end = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  int64_t count = -1;
  for (size_t j = where_index + 1; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (count == -1 && EqualsIgnoreCase(ctx.arg(j), "count") && more) {
      ++j;
      if (!ParseInt64(ctx.arg(j), &count) || count < 1) {
        ctx.reply.Error(errors::kCountNotPositive);
        return false;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  out->first_key = first + 1;
  out->key_count = static_cast<size_t>(numkeys);
  out->count = count == -1 ? 1 : count;
  return true;
}

void ReplyInvalidExpire(CommandContext& ctx) {
  ctx.reply.Error(errors::InvalidExpire(CommandName(ctx)));
}

std::optional<int64_t> ParseDeadlineArg(CommandContext& ctx, std::string_view text, bool seconds,
                                        bool relative) {
  int64_t value;
  if (!ParseIntegerArg(ctx, text, &value)) return std::nullopt;
  if (value <= 0 || (seconds && value > INT64_MAX / 1000)) {
    ReplyInvalidExpire(ctx);
    return std::nullopt;
  }
  if (seconds) value *= 1000;
  if (relative && __builtin_add_overflow(value, ctx.now_ms, &value)) {
    ReplyInvalidExpire(ctx);
    return std::nullopt;
  }
  return value;
}

}  // namespace goblin
