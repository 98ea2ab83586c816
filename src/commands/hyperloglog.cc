// HyperLogLog commands: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST. A HyperLogLog is a plain
// string in Redis's byte format (core/hyperloglog.h), edited where it lies: a dense value in
// place in its key's block, a sparse one (at most hll-sparse-max-bytes) through a copy that is
// written back when it changed.
//
// Keyspace events, as Redis sends them: PFADD announces `pfadd` when a register changed,
// PFMERGE `pfadd` on its destination; a new key is `new` first (the keyspace's own). PFCOUNT
// writing its cache and PFDEBUG's conversions announce nothing.
//
// Effects: PFADD and PFMERGE are deterministic and replay as they arrive. PFCOUNT of one key
// whose cache is stale writes the cardinality into the value, as Redis does, and counts that as
// a change; being may-replicate, it is then logged as it arrived and recomputes the same bytes
// on replay (Redis propagates it the same way). PFDEBUG GETREG and TODENSE log themselves when
// they turn a value dense.
#include "core/hyperloglog.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "server/errors.h"

namespace goblin {
namespace {

using hll::RaiseResult;

size_t SparseMaxBytes(const CommandContext& ctx) {
  return static_cast<size_t>(ctx.server.config.hll_sparse_max_bytes);
}

// Looks up a HyperLogLog: false after replying WRONGTYPE (another type, or a string that fails
// Redis's header checks). *entry is nullptr for a missing key; *bytes the value otherwise.
bool LookupHyperLogLog(CommandContext& ctx, std::string_view key, bool for_read, KeyEntry** entry,
                       std::string_view* bytes) {
  if (!LookupTyped(ctx, key, ValueType::kString, entry, for_read)) return false;
  if (*entry == nullptr) return true;
  if ((*entry)->string_encoding() == StringEncoding::kInt) {
    ctx.reply.Error(errors::kNotHyperLogLog);
    return false;
  }
  *bytes = (*entry)->string_value(nullptr);
  if (!hll::IsHyperLogLog(*bytes)) {
    ctx.reply.Error(errors::kNotHyperLogLog);
    return false;
  }
  return true;
}

// The same for a command that may edit the value where it lies: the string reads as raw from
// now on, as after Redis's dbUnshareStringValue.
bool LookupHyperLogLogToEdit(CommandContext& ctx, std::string_view key, bool for_read,
                             KeyEntry** entry, std::string_view* bytes) {
  if (!LookupHyperLogLog(ctx, key, for_read, entry, bytes)) return false;
  if (*entry != nullptr && (*entry)->string_encoding() != StringEncoding::kRaw) {
    *entry = ctx.db().UnshareString(key);
    *bytes = (*entry)->string_value(nullptr);
  }
  return true;
}

// The bytes of a raw string entry, writable in place (same length). Nothing is written until a
// register or the cache changes.
uint8_t* EditableBytes(KeyEntry* entry) {
  return reinterpret_cast<uint8_t*>(entry->MutableStringBytes());
}

// Stores value as key's string: a new key, the same block resized when it holds the value
// (a sparse value grows a few bytes at a time: headroom as Redis's, up to the sparse limit),
// or a block of its own for a value turned dense. The deadline stays. Counts as a change.
void StoreValue(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                const std::string& value) {
  Database& db = ctx.db();
  if (entry == nullptr || value.size() == hll::kDenseBytes) {
    db.Put(key, EntryValue::RawString(value), std::nullopt, /*keep_ttl=*/true);
    return;
  }
  char* bytes = KeyEntry::ResizeRawString(entry, value.size());
  if (bytes == nullptr) {
    const size_t grown = value.size() + std::min<size_t>(value.size(), 300);
    const size_t room = std::max(value.size(), std::min(grown, SparseMaxBytes(ctx)));
    bytes = KeyEntry::ResizeRawString(db.ReserveString(key, value.size(), room), value.size());
  }
  std::memcpy(bytes, value.data(), value.size());
  db.Touch(key);
}

// Scratch for a sparse value being edited, kept between commands for its buffer.
std::string& SparseScratch() {
  static std::string scratch;
  return scratch;
}

void PfaddCommand(CommandContext& ctx) {
  const std::string_view key = ctx.arg(1);
  KeyEntry* entry;
  std::string_view bytes;
  if (!LookupHyperLogLogToEdit(ctx, key, /*for_read=*/false, &entry, &bytes)) return;
  int64_t updated = 0;
  if (entry != nullptr && hll::EncodingOf(bytes) == hll::kDense) {
    uint8_t* value = EditableBytes(entry);
    for (size_t i = 2; i < ctx.argc(); ++i) {
      const hll::Pattern pattern = hll::PatternOf(ctx.arg(i));
      updated += hll::RaiseDense(value + hll::kHeaderBytes, pattern.index, pattern.count);
    }
    if (updated > 0) {
      hll::InvalidateCache(value);
      ctx.db().Touch(key);
      Notify(ctx, kNotifyString, "pfadd", key);
      MarkDirty(ctx, static_cast<uint64_t>(updated));
    }
    ctx.reply.Integer(updated > 0 ? 1 : 0);
    return;
  }

  std::string& value = SparseScratch();
  if (entry == nullptr) {
    value = hll::NewSparse();
    updated = 1;
  } else {
    value.assign(bytes);
  }
  bool corrupt = false;
  for (size_t i = 2; i < ctx.argc() && !corrupt; ++i) {
    const hll::Pattern pattern = hll::PatternOf(ctx.arg(i));
    switch (hll::Raise(&value, pattern.index, pattern.count, SparseMaxBytes(ctx))) {
      case RaiseResult::kRaised:
        ++updated;
        break;
      case RaiseResult::kCorrupt:
        corrupt = true;
        break;
      case RaiseResult::kUnchanged:
        break;
    }
  }
  if (corrupt) {
    // Redis keeps the edits made before the corrupt part was met, without logging them; Goblin
    // logs the command (it fails at the same element on replay), so the log rebuilds these bytes.
    if (value != bytes) {
      StoreValue(ctx, key, entry, value);
      MarkDirty(ctx);
    }
    ctx.reply.Error(errors::kCorruptHyperLogLog);
    return;
  }
  if (updated > 0) {
    hll::InvalidateCache(reinterpret_cast<uint8_t*>(value.data()));
    StoreValue(ctx, key, entry, value);
    Notify(ctx, kNotifyString, "pfadd", key);
    MarkDirty(ctx, static_cast<uint64_t>(updated));
  }
  ctx.reply.Integer(updated > 0 ? 1 : 0);
}

// Raises `registers` (one byte each) to the HyperLogLogs named by argv[1..], a missing key
// counting as empty: false after replying the error of the first key that is not one.
// *any_dense: some input is dense.
bool MergeArguments(CommandContext& ctx, uint8_t* registers, bool* any_dense) {
  for (size_t i = 1; i < ctx.argc(); ++i) {
    KeyEntry* entry;
    std::string_view bytes;
    if (!LookupHyperLogLog(ctx, ctx.arg(i), /*for_read=*/true, &entry, &bytes)) return false;
    if (entry == nullptr) continue;
    *any_dense = *any_dense || hll::EncodingOf(bytes) == hll::kDense;
    if (!hll::MergeInto(bytes, registers)) {
      ctx.reply.Error(errors::kCorruptHyperLogLog);
      return false;
    }
  }
  return true;
}

// PFCOUNT of several keys: the union's estimate from scratch registers, the keys untouched.
void CountUnion(CommandContext& ctx) {
  std::array<uint8_t, hll::kRegisters> registers{};
  bool any_dense = false;
  if (!MergeArguments(ctx, registers.data(), &any_dense)) return;
  hll::Histogram histogram{};
  hll::ByteHistogram(registers.data(), &histogram);
  ctx.reply.Integer(static_cast<int64_t>(hll::Estimate(histogram)));
}

void PfcountCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    CountUnion(ctx);
    return;
  }
  const std::string_view key = ctx.arg(1);
  KeyEntry* entry;
  std::string_view bytes;
  if (!LookupHyperLogLogToEdit(ctx, key, /*for_read=*/true, &entry, &bytes)) return;
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const auto* header = reinterpret_cast<const uint8_t*>(bytes.data());
  if (hll::CacheValid(header)) {
    ctx.reply.Integer(static_cast<int64_t>(hll::CachedCardinality(header)));
    return;
  }
  const std::optional<uint64_t> cardinality = hll::Count(bytes);
  if (!cardinality) {
    ctx.reply.Error(errors::kCorruptHyperLogLog);
    return;
  }
  hll::StoreCardinality(EditableBytes(entry), *cardinality);
  ctx.db().Touch(key);
  MarkDirty(ctx);
  ctx.reply.Integer(static_cast<int64_t>(*cardinality));
}

void PfmergeCommand(CommandContext& ctx) {
  std::array<uint8_t, hll::kRegisters> registers{};
  bool any_dense = false;
  if (!MergeArguments(ctx, registers.data(), &any_dense)) return;  // the destination included
  const std::string_view key = ctx.arg(1);
  KeyEntry* entry;
  std::string_view bytes;
  if (!LookupHyperLogLogToEdit(ctx, key, /*for_read=*/false, &entry, &bytes)) return;
  std::string value = entry == nullptr ? hll::NewSparse() : std::string(bytes);
  // A dense input makes the destination dense at once; sparse inputs keep it sparse while the
  // union fits.
  if (any_dense && hll::EncodingOf(value) == hll::kSparse && !hll::SparseToDense(&value)) {
    ctx.reply.Error(errors::kCorruptHyperLogLog);
    return;
  }
  for (size_t i = 0; i < hll::kRegisters; ++i) {
    if (registers[i] != 0) hll::Raise(&value, i, registers[i], SparseMaxBytes(ctx));
  }
  hll::InvalidateCache(reinterpret_cast<uint8_t*>(value.data()));
  StoreValue(ctx, key, entry, value);
  Notify(ctx, kNotifyString, "pfadd", key);  // a merge is an add of many elements, to Redis
  MarkDirty(ctx);
  ctx.reply.Ok();
}

// PFDEBUG GETREG and TODENSE turn a sparse value dense: false after replying the error.
bool MakeDense(CommandContext& ctx, std::string_view key, KeyEntry* entry, std::string_view bytes) {
  std::string value(bytes);
  if (!hll::SparseToDense(&value)) {
    ctx.reply.Error(errors::kCorruptHyperLogLog);
    return false;
  }
  StoreValue(ctx, key, entry, value);
  MarkDirty(ctx);
  return true;
}

void PfdebugCommand(CommandContext& ctx) {
  const std::string_view subcommand = ctx.arg(1);
  const std::string_view key = ctx.arg(2);
  KeyEntry* entry;
  std::string_view bytes;
  if (!LookupHyperLogLogToEdit(ctx, key, /*for_read=*/false, &entry, &bytes)) return;
  if (entry == nullptr) {
    ctx.reply.Error("ERR The specified key does not exist");
    return;
  }
  const bool sparse = hll::EncodingOf(bytes) == hll::kSparse;
  if (EqualsIgnoreCase(subcommand, "getreg")) {
    if (sparse) {
      if (!MakeDense(ctx, key, entry, bytes)) return;
      bytes = ctx.db().Find(key, ctx.now_ms)->string_value(nullptr);
    }
    const auto* registers = reinterpret_cast<const uint8_t*>(bytes.data()) + hll::kHeaderBytes;
    ctx.reply.Array(hll::kRegisters);
    for (size_t i = 0; i < hll::kRegisters; ++i) {
      ctx.reply.Integer(hll::DenseRegister(registers, i));
    }
  } else if (EqualsIgnoreCase(subcommand, "decode")) {
    if (!sparse) {
      ctx.reply.Error("ERR HLL encoding is not sparse");
      return;
    }
    ctx.reply.Bulk(hll::DecodeSparse(bytes.substr(hll::kHeaderBytes)));
  } else if (EqualsIgnoreCase(subcommand, "encoding")) {
    ctx.reply.Simple(sparse ? "sparse" : "dense");
  } else if (EqualsIgnoreCase(subcommand, "todense")) {
    if (sparse && !MakeDense(ctx, key, entry, bytes)) return;
    ctx.reply.Integer(sparse ? 1 : 0);
  } else {
    ctx.reply.Error("ERR Unknown PFDEBUG subcommand '" + errors::Quote(subcommand) + "'");
  }
}

void PfselftestCommand(CommandContext& ctx) {
  const std::string failure = hll::SelfTest(SparseMaxBytes(ctx), ctx.server.Random64());
  if (failure.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR " + failure);
  }
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable* table) {
  CommandAdder add{table, "hyperloglog", kAclHyperLogLog};
  add("pfadd", -2, kCmdWrite | kCmdDenyOom | kCmdFast, {KeyAt(1, kKeyRW | kKeyInsert)},
      PfaddCommand, "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
      "2.8.9", "O(1) to add every element.", "key [element [element ...]]");
  add("pfcount", -2, kCmdReadonly | kCmdMayReplicate,
      {KeySpec{kKeyRW | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0),
               "RW because it may change the internal representation of the key, and propagate to "
               "replicas"}},
      PfcountCommand,
      "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
      "2.8.9",
      "O(1) with a very small average constant time when called with a single key. O(N) with N "
      "being the number of keys, and much bigger constant times, when called with multiple keys.",
      "key [key ...]");
  add("pfdebug", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, {KeyAt(2, kKeyRW | kKeyAccess)},
      PfdebugCommand, "Internal commands for debugging HyperLogLog values.", "2.8.9", "N/A",
      "subcommand key");
  add("pfmerge", -2, kCmdWrite | kCmdDenyOom,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyInsert),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Range(-1, 1, 0)}},
      PfmergeCommand, "Merges one or more HyperLogLog values into a single key.", "2.8.9",
      "O(N) to merge N HyperLogLogs, but with high constant times.",
      "destkey [sourcekey [sourcekey ...]]");
  add("pfselftest", 1, kCmdAdmin, {}, PfselftestCommand,
      "An internal command for testing HyperLogLog values.", "2.8.9", "N/A", "");
}

}  // namespace goblin
