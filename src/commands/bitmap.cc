// Bitmap commands over string values: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
// Bit 0 is the most significant bit of byte 0, as in Redis. SETBIT and BITFIELD change a raw
// string in place (KeyEntry invariant 4) and count as a change only when they created the key,
// lengthened it, or changed a bit, as Redis 7 does; the field arithmetic is core/bitfield.h,
// BITOP's core/bitop.h.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "core/bitfield.h"
#include "core/bitop.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

// A bit offset argument, as Redis's getBitOffsetFromArgument reads it: a non-negative integer
// whose byte lies within proto-max-bulk-len (not checked while the append-only file replays: it
// holds what was accepted once). With field_bits > 0 (BITFIELD) "#n" means n fields of that
// width; the product wraps in 64 bits as Redis's C multiplication does, so "#288230376151711745"
// of an i64 is offset 64.
bool ParseBitOffset(CommandContext& ctx, std::string_view text, int field_bits, uint64_t* offset) {
  const bool in_fields = field_bits > 0 && !text.empty() && text[0] == '#';
  int64_t value;
  if (ParseInt64(in_fields ? text.substr(1) : text, &value)) {
    if (in_fields) {
      value =
          static_cast<int64_t>(static_cast<uint64_t>(value) * static_cast<uint64_t>(field_bits));
    }
    if (value >= 0 && (ctx.client.kind == ClientKind::kAofReplay ||
                       (value >> 3) < ctx.server.config.proto_max_bulk_len)) {
      *offset = static_cast<uint64_t>(value);
      return true;
    }
  }
  ctx.reply.Error(errors::kBitOffsetNotInteger);
  return false;
}

// The bytes of a string entry (an integer as its text); empty for a missing key.
std::string_view StringBytes(const KeyEntry* entry, char* scratch) {
  return entry == nullptr ? std::string_view() : entry->string_value(scratch);
}

// A string a bit command writes into, as Redis's lookupStringForBitCommand leaves it.
struct WritableBits {
  uint8_t* bytes;
  size_t size;
  bool grew;  // the key was created or lengthened: a change even if no bit changes
};

// Makes key's value (entry, already type-checked; nullptr when missing) a raw string of at least
// `length` bytes, zeros added, and returns it. Nothing is recorded for WATCH: the caller Touches
// the key once it knows it changed something.
WritableBits BitsForWrite(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                          size_t length) {
  Database& db = ctx.db();
  if (entry == nullptr) {
    // Sized exactly, as Redis creates it: a bitmap set once stays as long as its highest bit.
    db.Put(key, EntryValue::RawString(std::string(length, '\0')), std::nullopt);
    entry = db.Peek(key);  // just created: not an access of it
    auto* bytes = reinterpret_cast<uint8_t*>(KeyEntry::ResizeRawString(entry, length));
    return WritableBits{bytes, length, true};
  }
  // An integer or embstr value becomes raw, as in Redis, whether or not a bit changes.
  if (entry->string_encoding() != StringEncoding::kRaw) entry = db.UnshareString(key);
  char scratch[kInt64TextMax];
  const size_t current = entry->string_value(scratch).size();
  const size_t size = std::max(current, length);
  auto* bytes = reinterpret_cast<uint8_t*>(ResizeStringUnrecorded(ctx, key, entry, size));
  return WritableBits{bytes, size, length > current};
}

void SetbitCommand(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.arg(2), 0, &offset)) return;
  int64_t bit;
  if (!ParseInt64(ctx.arg(3), &bit) || (bit & ~int64_t{1}) != 0) {
    ctx.reply.Error(errors::kBitNotInteger);
    return;
  }
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry, false)) return;
  const WritableBits target = BitsForWrite(ctx, ctx.arg(1), entry, (offset >> 3) + 1);
  uint8_t& byte = target.bytes[offset >> 3];
  const auto mask = static_cast<uint8_t>(0x80 >> (offset & 7));
  const bool old_bit = (byte & mask) != 0;
  if (target.grew || old_bit != (bit == 1)) {
    byte = static_cast<uint8_t>(bit ? byte | mask : byte & ~mask);
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx);
    Notify(ctx, kNotifyString, "setbit", ctx.arg(1));
  }
  ctx.reply.Integer(old_bit ? 1 : 0);
}

void GetbitCommand(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.arg(2), 0, &offset)) return;
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  char scratch[kInt64TextMax];
  const std::string_view bytes = StringBytes(entry, scratch);
  const size_t byte = offset >> 3;
  const bool set =
      byte < bytes.size() && (static_cast<uint8_t>(bytes[byte]) & (0x80 >> (offset & 7))) != 0;
  ctx.reply.Integer(set ? 1 : 0);
}

// A [start end [BYTE|BIT]] range of BITCOUNT and BITPOS, resolved against a value of `bytes`
// bytes into an inclusive range of bits.
struct BitRange {
  bool empty = false;
  uint64_t first = 0;  // bit positions, inclusive
  uint64_t last = 0;
};

// Redis's index rules: negative counts from the end, then both clamp into the value. BITCOUNT
// alone calls two negative indexes in the wrong order empty before clamping them.
BitRange Resolve(int64_t start, int64_t end, bool bit_unit, size_t bytes, bool negative_order) {
  const int64_t total = static_cast<int64_t>(bytes) * (bit_unit ? 8 : 1);
  if (negative_order && start < 0 && end < 0 && start > end) return BitRange{.empty = true};
  if (start < 0) start = std::max<int64_t>(total + start, 0);
  if (end < 0) end = std::max<int64_t>(total + end, 0);
  if (end >= total) end = total - 1;
  BitRange range;
  if (total == 0 || start > end) {
    range.empty = true;
    return range;
  }
  range.first = bit_unit ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  range.last = bit_unit ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return range;
}

// Parses the optional BYTE|BIT unit at ctx.arg(unit_arg); replies the error and returns false.
bool ParseRangeUnit(CommandContext& ctx, size_t unit_arg, bool* bit_unit) {
  *bit_unit = false;
  if (unit_arg >= ctx.argc()) return true;
  if (EqualsIgnoreCase(ctx.arg(unit_arg), "bit")) {
    *bit_unit = true;
  } else if (!EqualsIgnoreCase(ctx.arg(unit_arg), "byte")) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

uint64_t CountBits(std::string_view bytes, const BitRange& range) {
  if (range.empty) return 0;
  const size_t first_byte = range.first >> 3;
  const size_t last_byte = range.last >> 3;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t count = 0;
  size_t i = first_byte;
  for (; i + 8 <= last_byte + 1; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    count += static_cast<uint64_t>(std::popcount(word));
  }
  for (; i <= last_byte; ++i) count += static_cast<uint64_t>(std::popcount(p[i]));
  // Bits of the first and last byte outside the range: the high (first & 7) bits of the
  // first byte, the low 7 - (last & 7) bits of the last.
  const auto before = static_cast<uint8_t>(0xFF00u >> (range.first & 7));
  const auto after = static_cast<uint8_t>((1u << (7 - (range.last & 7))) - 1);
  count -= static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(p[first_byte] & before)));
  count -= static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(p[last_byte] & after)));
  return count;
}

void BitcountCommand(CommandContext& ctx) {
  int64_t start = 0, end = -1;
  bool bit_unit = false;
  if (ctx.argc() == 4 || ctx.argc() == 5) {
    if (!ParseIntegerArg(ctx, ctx.arg(2), &start) || !ParseIntegerArg(ctx, ctx.arg(3), &end) ||
        !ParseRangeUnit(ctx, 4, &bit_unit)) {
      return;
    }
  } else if (ctx.argc() != 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  char scratch[kInt64TextMax];
  const std::string_view bytes = StringBytes(entry, scratch);
  ctx.reply.Integer(
      static_cast<int64_t>(CountBits(bytes, Resolve(start, end, bit_unit, bytes.size(), true))));
}

// The first position in [range] whose bit is `bit`, or -1.
int64_t FindBit(std::string_view bytes, const BitRange& range, bool bit) {
  if (range.empty) return -1;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t pos = range.first;
  while (pos <= range.last) {
    if ((pos & 7) == 0 && pos + 63 <= range.last) {
      // A whole word at a time while it holds no match.
      uint64_t word;
      std::memcpy(&word, p + (pos >> 3), 8);
      if (word == (bit ? 0 : ~uint64_t{0})) {
        pos += 64;
        continue;
      }
    }
    if (((p[pos >> 3] >> (7 - (pos & 7))) & 1) == static_cast<unsigned>(bit)) {
      return static_cast<int64_t>(pos);
    }
    ++pos;
  }
  return -1;
}

void BitposCommand(CommandContext& ctx) {
  int64_t bit_arg;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &bit_arg)) return;
  if (bit_arg != 0 && bit_arg != 1) {
    ctx.reply.Error("ERR The bit argument must be 1 or 0.");
    return;
  }
  const bool bit = bit_arg == 1;
  int64_t start = 0, end = -1;
  bool end_given = false;
  bool bit_unit = false;
  if (ctx.argc() >= 4) {
    if (ctx.argc() > 6) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    // Redis reads the unit before the end.
    if (!ParseIntegerArg(ctx, ctx.arg(3), &start) || !ParseRangeUnit(ctx, 5, &bit_unit)) return;
    if (ctx.argc() >= 5) {
      if (!ParseIntegerArg(ctx, ctx.arg(4), &end)) return;
      end_given = true;
    }
  }
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    // A missing key is an endless run of zeros.
    ctx.reply.Integer(bit ? -1 : 0);
    return;
  }
  char scratch[kInt64TextMax];
  const std::string_view bytes = StringBytes(entry, scratch);
  const BitRange range = Resolve(start, end, bit_unit, bytes.size(), false);
  int64_t pos = FindBit(bytes, range, bit);
  // Looking for a clear bit without an end: past the value, the string reads as zeros.
  if (pos < 0 && !bit && !end_given && !range.empty) pos = static_cast<int64_t>(range.last + 1);
  ctx.reply.Integer(pos);
}

void BitopCommand(CommandContext& ctx) {
  const std::optional<bitop::Op> op = bitop::ParseOp(ctx.arg(1));
  if (!op) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (*op == bitop::Op::kNot && ctx.argc() != 4) {
    ctx.reply.Error("ERR BITOP NOT must be called with a single source key.");
    return;
  }
  if (bitop::NeedsTwoSources(*op) && ctx.argc() < 5) {
    ctx.reply.Error("ERR BITOP " + AsciiUpper(ctx.arg(1)) +
                    " must be called with at least two source keys.");
    return;
  }
  std::vector<std::string> sources;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    KeyEntry* entry;
    if (!LookupTyped(ctx, ctx.arg(i), ValueType::kString, &entry)) return;
    char scratch[kInt64TextMax];
    sources.emplace_back(StringBytes(entry, scratch));
  }
  const std::vector<std::string_view> views(sources.begin(), sources.end());
  const std::string result = bitop::Apply(*op, views);
  const size_t length = result.size();
  Database& db = ctx.db();
  if (length == 0) {
    if (db.Delete(ctx.arg(2))) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyGeneric, "del", ctx.arg(2));
    }
  } else {
    db.Put(ctx.arg(2), EntryValue::RawString(result), std::nullopt);
    MarkDirty(ctx);
    Notify(ctx, kNotifyString, "set", ctx.arg(2));
  }
  ctx.reply.Integer(static_cast<int64_t>(length));
}

// ---- BITFIELD ------------------------------------------------------------------------------

constexpr std::string_view kInvalidFieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";

struct FieldOp {
  enum class Kind : uint8_t { kGet, kSet, kIncrBy };
  Kind kind;
  bitfield::Overflow overflow;  // the OVERFLOW in force where the subcommand stood
  bitfield::FieldType type;
  uint64_t offset;
  int64_t argument;  // SET's value, INCRBY's increment
};

// BITFIELD and BITFIELD_RO (read_only_command). As in Redis, every subcommand is parsed, and its
// error replied, before the key is looked up; BITFIELD_RO refuses a SET or INCRBY only then, and
// a write looks the key up only after that.
void BitfieldGeneric(CommandContext& ctx, bool read_only_command) {
  std::vector<FieldOp> ops;
  ops.reserve((ctx.argc() - 2) / 3);
  auto overflow = bitfield::Overflow::kWrap;
  bool writes = false;
  uint64_t highest_bit = 0;  // the highest bit a SET or INCRBY writes
  for (size_t j = 2; j < ctx.argc(); ++j) {
    const size_t remaining = ctx.argc() - j - 1;
    const std::string_view name = ctx.arg(j);
    FieldOp op{};
    if (EqualsIgnoreCase(name, "get") && remaining >= 2) {
      op.kind = FieldOp::Kind::kGet;
    } else if (EqualsIgnoreCase(name, "set") && remaining >= 3) {
      op.kind = FieldOp::Kind::kSet;
    } else if (EqualsIgnoreCase(name, "incrby") && remaining >= 3) {
      op.kind = FieldOp::Kind::kIncrBy;
    } else if (EqualsIgnoreCase(name, "overflow") && remaining >= 1) {
      const std::string_view mode = ctx.arg(++j);
      if (EqualsIgnoreCase(mode, "wrap")) {
        overflow = bitfield::Overflow::kWrap;
      } else if (EqualsIgnoreCase(mode, "sat")) {
        overflow = bitfield::Overflow::kSat;
      } else if (EqualsIgnoreCase(mode, "fail")) {
        overflow = bitfield::Overflow::kFail;
      } else {
        ctx.reply.Error("ERR Invalid OVERFLOW type specified");
        return;
      }
      continue;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    if (!bitfield::ParseType(ctx.arg(j + 1), &op.type)) {
      ctx.reply.Error(kInvalidFieldType);
      return;
    }
    if (!ParseBitOffset(ctx, ctx.arg(j + 2), op.type.bits, &op.offset)) return;
    if (op.kind != FieldOp::Kind::kGet) {
      writes = true;
      highest_bit = std::max(highest_bit, op.offset + static_cast<uint64_t>(op.type.bits) - 1);
      if (!ParseIntegerArg(ctx, ctx.arg(j + 3), &op.argument)) return;
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == FieldOp::Kind::kGet ? 2 : 3;
  }

  const std::string_view key = ctx.arg(1);
  KeyEntry* entry;
  char scratch[kInt64TextMax];
  WritableBits target{nullptr, 0, false};
  if (!writes) {
    if (!LookupTyped(ctx, key, ValueType::kString, &entry)) return;
    const std::string_view bytes = StringBytes(entry, scratch);
    target = WritableBits{reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data())), bytes.size(),
                          false};
  } else {
    if (read_only_command) {
      ctx.reply.Error("ERR BITFIELD_RO only supports the GET subcommand");
      return;
    }
    if (!LookupTyped(ctx, key, ValueType::kString, &entry, false)) return;
    target = BitsForWrite(ctx, key, entry, (highest_bit >> 3) + 1);
  }

  ctx.reply.Array(ops.size());
  uint64_t changes = 0;
  for (const FieldOp& op : ops) {
    const int64_t old = bitfield::Get(target.bytes, target.size, op.offset, op.type);
    if (op.kind == FieldOp::Kind::kGet) {
      ctx.reply.Integer(old);
      continue;
    }
    const bitfield::Outcome outcome =
        op.kind == FieldOp::Kind::kSet
            ? bitfield::ForSet(op.type, op.argument, op.overflow)
            : bitfield::ForIncrement(op.type, old, op.argument, op.overflow);
    if (outcome.failed) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Integer(op.kind == FieldOp::Kind::kSet ? old : outcome.value);
    bitfield::Put(target.bytes, op.offset, op.type, outcome.value);
    if (target.grew || outcome.value != old) ++changes;
  }
  // Redis 7.2 counts only the writes that changed a field, so a key created or lengthened by
  // writes that all FAILed is neither logged nor seen by WATCH, and a replay lacks it; Goblin
  // counts that growth as one change, as later Redis versions do. The "setbit" event stays
  // 7.2's: only for a call that changed a field.
  if (changes > 0 || target.grew) {
    ctx.db().Touch(key);
    MarkDirty(ctx, std::max<uint64_t>(changes, 1));
  }
  if (changes > 0) Notify(ctx, kNotifyString, "setbit", key);
}

void BitfieldCommand(CommandContext& ctx) { BitfieldGeneric(ctx, false); }

void BitfieldRoCommand(CommandContext& ctx) { BitfieldGeneric(ctx, true); }

}  // namespace

void RegisterBitmapCommands(CommandTable* table) {
  CommandAdder add{table, "bitmap", kAclBitmap};
  add("setbit", 4, kCmdWrite | kCmdDenyOom, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)},
      SetbitCommand,
      "Sets or clears the bit at offset of the string value. Creates the key if it doesn't "
      "exist.",
      "2.2.0", "O(1)", "key offset value");
  add("getbit", 3, kCmdReadonly | kCmdFast, {KeyAt(1, kKeyRO | kKeyAccess)}, GetbitCommand,
      "Returns a bit value by offset.", "2.2.0", "O(1)", "key offset");
  add("bitcount", -2, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, BitcountCommand,
      "Counts the number of set bits (population counting) in a string.", "2.6.0", "O(N)",
      "key [start end [BYTE | BIT]]");
  add("bitpos", -3, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, BitposCommand,
      "Finds the first set (1) or clear (0) bit in a string.", "2.8.7", "O(N)",
      "key bit [start [end [BYTE | BIT]]]");
  Command* bitop = add(
      "bitop", -4, kCmdWrite | kCmdDenyOom,
      {KeyAt(2, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(3), KeyFind::Range(-1, 1, 0)}},
      BitopCommand, "Performs bitwise operations on multiple strings, and stores the result.",
      "2.6.0", "O(N)", "<AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE> destkey key [key ...]");
  // Redis 8.2's bitop.json adds DIFF, DIFF1, ANDOR and ONE with no history entry or since.
  bitop->arguments = {
      docs::OneOf("operation", {docs::Token("and", "AND"), docs::Token("or", "OR"),
                                docs::Token("xor", "XOR"), docs::Token("not", "NOT"),
                                docs::Token("diff", "DIFF"), docs::Token("diff1", "DIFF1"),
                                docs::Token("andor", "ANDOR"), docs::Token("one", "ONE")}),
      docs::Key("destkey", 0), docs::Multiple(docs::Key("key", 1))};
  add("bitfield", -2, kCmdWrite | kCmdDenyOom,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags, KeyBegin::Index(1),
               KeyFind::Range(0, 1, 0),
               "This command allows both access and modification of the key"}},
      BitfieldCommand, "Performs arbitrary bitfield integer operations on strings.", "3.2.0",
      "O(1) for each subcommand specified",
      "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | "
      "INCRBY encoding offset increment> [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] "
      "<SET encoding offset value | INCRBY encoding offset increment> ...]]");
  add("bitfield_ro", -2, kCmdReadonly | kCmdFast, {KeyAt(1, kKeyRO | kKeyAccess)},
      BitfieldRoCommand, "Performs arbitrary read-only bitfield integer operations on strings.",
      "6.0.0", "O(1) for each subcommand specified",
      "key [GET encoding offset [GET encoding offset ...]]");
}

}  // namespace goblin
