// A key's value as a payload and between servers: DUMP, RESTORE, RESTORE-ASKING, MIGRATE.
//
// A payload is Redis's: the value in RDB form (its value-type byte, then the value, as
// persist/rdb_writer.h writes it), the RDB version (2 bytes LE) and the CRC-64 of all that
// (8 bytes LE; persist/rdb_string.h). Goblin writes version 10, which every Redis 7 restores.
//
// MIGRATE is DUMP here and RESTORE there, done as Redis does it: synchronously, on a
// connection kept for the next MIGRATE to the same target (server/migrate_connections.h),
// every wait bounded by the call's timeout. One request carries [AUTH] [SELECT db] and a
// RESTORE (with the key's remaining time, REPLACE when asked) per key; the target's replies
// are read one by one, and without COPY each key the target accepted is deleted here and
// logged as DEL.
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "commands/hash_family.h"
#include "core/string_number.h"
#include "persist/aof_log.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"
#include "server/encoding_limits.h"
#include "server/errors.h"
#include "server/persistence.h"

namespace goblin {

namespace {

std::string DumpPayload(CommandContext& ctx, const KeyEntry& entry) {
  RdbOutput out;
  RdbAppendValue(&out, entry, ctx.server.persistence->RdbOptions());
  RdbAppendPayloadTrailer(&out.bytes, RdbVersionOfValueType(static_cast<uint8_t>(out.bytes[0])));
  return std::move(out.bytes);
}

void DumpCommand(CommandContext& ctx) {
  const KeyEntry* entry = ctx.db().FindForRead(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(DumpPayload(ctx, *entry));
}

// --- RESTORE ------------------------------------------------------------------------------

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency], checked
// in Redis's order: the options, the key (BUSYKEY), the ttl, the payload's trailer, its value.
void RestoreCommand(CommandContext& ctx) {
  bool replace = false;
  bool absttl = false;
  int64_t idle_seconds = -1;
  int64_t frequency = -1;
  for (size_t j = 4; j < ctx.argc(); ++j) {
    const size_t more = ctx.argc() - 1 - j;
    const std::string_view option = ctx.arg(j);
    if (EqualsIgnoreCase(option, "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(option, "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(option, "idletime") && more >= 1 && frequency == -1) {
      if (!ParseIntegerArg(ctx, ctx.arg(++j), &idle_seconds)) return;
      if (idle_seconds < 0) {
        ctx.reply.Error("ERR Invalid IDLETIME value, must be >= 0");
        return;
      }
    } else if (EqualsIgnoreCase(option, "freq") && more >= 1 && idle_seconds == -1) {
      if (!ParseIntegerArg(ctx, ctx.arg(++j), &frequency)) return;
      if (frequency < 0 || frequency > 255) {
        ctx.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  const std::string_view key = ctx.arg(1);
  Database& db = ctx.db();
  if (!replace && db.Find(key, ctx.now_ms) != nullptr) {
    ctx.reply.Error(errors::kBusyKey);
    return;
  }
  int64_t ttl;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &ttl)) return;
  if (ttl < 0) {
    ctx.reply.Error("ERR Invalid TTL value, must be >= 0");
    return;
  }
  const std::string_view payload = ctx.arg(3);
  std::string_view body;
  if (!RdbCheckPayload(payload, &body, !ctx.server.skip_checksum_validation)) {
    ctx.reply.Error(errors::kBadPayload);
    return;
  }
  // Redis reads the value from the whole payload, its trailer included: a value that runs into
  // the trailer, or stops short of it, restores there, and so it does here.
  RdbValue value;
  RdbReadError error;
  size_t pos = 1;
  if (!RdbReadValue(static_cast<uint8_t>(payload[0]), payload, &pos,
                    EncodingLimitsOf(ctx.server.config), &value, &error) ||
      (LapsedFieldRule(ctx) == LapsedField::kGone && !value.DropExpiredFields(ctx.now_ms))) {
    // (a hash whose fields had all expired restores nothing, as in Redis 7.4)
    ctx.reply.Error("ERR Bad data format");
    return;
  }
  const bool deleted = replace && db.Delete(key);
  // A relative ttl becomes a deadline; one that lies in the past (or wraps past the largest
  // time, as Redis's addition does) means the key is gone at once.
  if (ttl != 0 && !absttl) {
    ttl = static_cast<int64_t>(static_cast<uint64_t>(ttl) + static_cast<uint64_t>(ctx.now_ms));
  }
  if (ttl != 0 && ttl <= ctx.now_ms) {
    if (deleted) {
      MarkDirty(ctx);
      ctx.Propagate({ctx.server.config.lazyfree.server_del ? "UNLINK" : "DEL", key});
      Notify(ctx, kNotifyGeneric, "del", key);
    }
    // (value's collection, never taken, is freed with it)
    ctx.reply.Ok();
    return;
  }
  db.Put(key, value.Take(), ttl != 0 ? std::optional<int64_t>(ttl) : std::nullopt);
  // As Redis's objectSetLRUOrLFU: FREQ sets the counter under an LFU policy, IDLETIME the time
  // of last use under any other; each is ignored under the other kind of policy.
  const AccessClock& clock = ctx.server.access_clock;
  if (clock.lfu && frequency >= 0) {
    db.SetAccessStamp(key, clock.StampWithCounter(static_cast<uint32_t>(frequency)));
  } else if (!clock.lfu && idle_seconds >= 0) {
    db.SetAccessStamp(key, clock.StampIdleFor(static_cast<uint64_t>(idle_seconds)));
  }
  if (ttl != 0 && !absttl && ctx.propagating()) {
    // The deadline is absolute in the log, as Redis rewrites the command.
    const std::string deadline = std::to_string(ttl);
    std::vector<std::string_view> logged(ctx.argv.begin(), ctx.argv.end());
    logged[2] = deadline;
    logged.push_back("ABSTTL");
    ctx.Propagate(std::span<const std::string_view>(logged));
  }
  Notify(ctx, kNotifyGeneric, "restore", key);
  MarkDirty(ctx);
  ctx.reply.Ok();
}

// --- MIGRATE ------------------------------------------------------------------------------

constexpr std::string_view kMigrateConnectError = "IOERR error or timeout connecting to the client";
constexpr std::string_view kMigrateWriteError = "IOERR error or timeout writing to target instance";
// (sic: Redis's text)
constexpr std::string_view kMigrateReadError = "IOERR error or timeout reading to target instance";

struct MigrateArgs {
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;
  std::optional<std::string_view> password;
  size_t first_key = 3;
  size_t key_count = 1;
  int64_t db = 0;
  int64_t timeout_ms = 0;
};

// MIGRATE's options in Redis's order: the options left to right, then timeout and db.
bool ParseMigrateArgs(CommandContext& ctx, MigrateArgs* args) {
  for (size_t j = 6; j < ctx.argc(); ++j) {
    const size_t more = ctx.argc() - 1 - j;
    const std::string_view option = ctx.arg(j);
    if (EqualsIgnoreCase(option, "copy")) {
      args->copy = true;
    } else if (EqualsIgnoreCase(option, "replace")) {
      args->replace = true;
    } else if (EqualsIgnoreCase(option, "auth") && more >= 1) {
      args->password = ctx.arg(++j);
    } else if (EqualsIgnoreCase(option, "auth2") && more >= 2) {
      args->username = ctx.arg(++j);
      args->password = ctx.arg(++j);
    } else if (EqualsIgnoreCase(option, "keys")) {
      if (!ctx.arg(3).empty()) {
        ctx.reply.Error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      args->first_key = j + 1;
      args->key_count = ctx.argc() - j - 1;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (!ParseIntegerArg(ctx, ctx.arg(5), &args->timeout_ms) ||
      !ParseIntegerArg(ctx, ctx.arg(4), &args->db)) {
    return false;
  }
  if (args->timeout_ms <= 0) args->timeout_ms = 1000;
  return true;
}

struct MigratingKey {
  std::string_view key;
  const KeyEntry* entry;
};

// The request for one attempt: [AUTH] [SELECT] and a RESTORE per key still live. *sent
// receives the keys it carries.
std::string MigrateRequest(CommandContext& ctx, const MigrateArgs& args, bool select,
                           const std::vector<MigratingKey>& keys,
                           std::vector<std::string_view>* sent) {
  std::string request;
  if (args.password) {
    if (args.username) {
      AppendRespCommand(&request, {{"AUTH", *args.username, *args.password}});
    } else {
      AppendRespCommand(&request, {{"AUTH", *args.password}});
    }
  }
  if (select) {
    const std::string db = std::to_string(args.db);
    AppendRespCommand(&request, {{"SELECT", db}});
  }
  sent->clear();
  // A cluster node's target is importing the slot: RESTORE-ASKING reaches it there.
  const std::string_view restore =
      ctx.server.cluster_mode != nullptr ? "RESTORE-ASKING" : "RESTORE";
  for (const MigratingKey& key : keys) {
    int64_t ttl = 0;
    if (key.entry->has_expire()) {
      ttl = key.entry->expire_ms() - ctx.now_ms;
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;  // 0 would mean no deadline
    }
    sent->push_back(key.key);
    const std::string ttl_text = std::to_string(ttl);
    const std::string payload = DumpPayload(ctx, *key.entry);
    if (args.replace) {
      AppendRespCommand(&request, {{restore, key.key, ttl_text, payload, "REPLACE"}});
    } else {
      AppendRespCommand(&request, {{restore, key.key, ttl_text, payload}});
    }
  }
  return request;
}

void MigrateCommand(CommandContext& ctx) {
  MigrateArgs args;
  if (!ParseMigrateArgs(ctx, &args)) return;
  std::vector<MigratingKey> keys;
  for (size_t j = 0; j < args.key_count; ++j) {
    const std::string_view key = ctx.arg(args.first_key + j);
    if (const KeyEntry* entry = ctx.db().FindForRead(key, ctx.now_ms)) keys.push_back({key, entry});
  }
  if (keys.empty()) {
    ctx.reply.Simple("NOKEY");
    return;
  }
  const std::string_view host = ctx.arg(1);
  const std::string_view port = ctx.arg(2);
  MigrateConnections& connections = ctx.server.migrate_connections;
  using Status = MigrateConnection::Status;
  std::vector<std::string_view> sent;
  std::string line;
  // A connection that failed is closed and the whole attempt made once more on a new one, as
  // Redis does (a cached connection the target has since closed is common), unless the
  // failure was a timeout or a reply other than the first was already read.
  // tls-cluster yes: MIGRATE speaks TLS to its target, as Redis's does.
  SSL_CTX* tls = ctx.server.config.tls.cluster && ctx.server.tls_context() != nullptr
                     ? ctx.server.tls_context()->client()
                     : nullptr;
  for (bool may_retry = true;; may_retry = false) {
    MigrateConnection* connection =
        connections.Get(host, port, args.timeout_ms, ctx.now_ms / 1000, ctx.server.Random64(), tls);
    if (connection == nullptr) {
      ctx.reply.Error(kMigrateConnectError);
      return;
    }
    const bool select = connection->last_db != args.db;
    const std::string request = MigrateRequest(ctx, args, select, keys, &sent);
    Status status = connection->WriteAll(request, args.timeout_ms);
    if (status != Status::kOk) {
      connections.Close(host, port);
      if (status != Status::kTimeout && may_retry) continue;
      ctx.reply.Error(kMigrateWriteError);
      return;
    }
    std::string auth_reply;
    std::string select_reply;
    if (args.password) status = connection->ReadLine(&auth_reply, args.timeout_ms);
    if (status == Status::kOk && select) {
      status = connection->ReadLine(&select_reply, args.timeout_ms);
    }
    if (status != Status::kOk) {
      connections.Close(host, port);
      if (status != Status::kTimeout && may_retry) continue;
      ctx.reply.Error(kMigrateReadError);
      return;
    }
    // Each RESTORE reply counts as an error when AUTH's, SELECT's or its own is one; the
    // reply names the first of them, as Redis's does.
    const bool auth_failed = !auth_reply.empty() && auth_reply[0] == '-';
    const bool select_failed = !select_reply.empty() && select_reply[0] == '-';
    std::string target_error;
    std::vector<std::string_view> deleted = {"DEL"};
    size_t read = 0;
    for (; read < sent.size(); ++read) {
      status = connection->ReadLine(&line, args.timeout_ms);
      if (status != Status::kOk) break;
      if (auth_failed || select_failed || (!line.empty() && line[0] == '-')) {
        if (target_error.empty()) {
          connection->last_db = -1;
          const std::string& first = auth_failed ? auth_reply : select_failed ? select_reply : line;
          target_error = "ERR Target instance replied with error: " + first.substr(1);
        }
        continue;
      }
      if (args.copy) continue;
      ctx.db().Delete(sent[read]);
      MarkDirty(ctx);
      Notify(ctx, kNotifyGeneric, "del", sent[read]);
      deleted.push_back(sent[read]);
    }
    if (status != Status::kOk) {
      connections.Close(host, port);
      // Nothing reached the target for sure only when not even the first reply came.
      if (target_error.empty() && read == 0 && may_retry && status != Status::kTimeout) continue;
    }
    if (deleted.size() > 1) ctx.Propagate(std::span<const std::string_view>(deleted));
    if (!target_error.empty()) {
      ctx.reply.Error(target_error);
      return;
    }
    if (status != Status::kOk) {
      ctx.reply.Error(kMigrateReadError);
      return;
    }
    connection->last_db = args.db;
    ctx.reply.Ok();
    return;
  }
}

// The keys of a MIGRATE call as Redis 7 finds them. Its key specs come first: argv[3], and the
// keys after a KEYS searched backwards from the last argument but one. When that search finds
// no KEYS, argv[3] is the answer (even with a KEYS last); when it finds one, the spec is
// incomplete and migrateGetKeys decides: the keys after the first KEYS among the options
// (skipping the arguments of AUTH and AUTH2), none (an error) when the key argument is not
// empty or nothing follows.
std::optional<std::vector<size_t>> MigrateKeyPositions(const std::vector<std::string_view>& argv) {
  bool keyword = false;
  for (size_t i = 1; i + 1 < argv.size() && !keyword; ++i) {
    keyword = EqualsIgnoreCase(argv[i], "keys");
  }
  if (!keyword) return std::vector<size_t>{3};
  size_t first = 3;
  size_t count = 1;
  for (size_t i = 6; i < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "keys")) {
      if (!argv[3].empty()) return std::nullopt;
      first = i + 1;
      count = argv.size() - first;
      break;
    }
    if (EqualsIgnoreCase(argv[i], "auth")) {
      i += 1;
    } else if (EqualsIgnoreCase(argv[i], "auth2")) {
      i += 2;
    }
  }
  if (count == 0) return std::nullopt;
  std::vector<size_t> positions;
  for (size_t i = 0; i < count; ++i) positions.push_back(first + i);
  return positions;
}

}  // namespace

void RegisterDumpRestoreCommands(CommandTable* table) {
  CommandAdder add{table, "generic", kAclKeyspace};
  add("dump", 2, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, DumpCommand,
      "Returns a serialized representation of the value stored at a key.", "2.6.0",
      "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of "
      "Redis objects composing the value and M their average size. For small string values the "
      "time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
      "key", {"nondeterministic_output"});
  constexpr const char* kRestoreComplexity =
      "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
      "where N is the number of Redis objects composing the value and M their average size. For "
      "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
      "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "
      "values into sorted sets is O(log(N)).";
  constexpr const char* kRestoreSyntax =
      "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]";
  add.In(kAclKeyspace | kAclDangerous)(
      "restore", -4, kCmdWrite | kCmdDenyOom, {KeyAt(1, kKeyOW | kKeyUpdate)}, RestoreCommand,
      "Creates a key from the serialized representation of a value.", "2.6.0", kRestoreComplexity,
      kRestoreSyntax);
  // What MIGRATE sends in a cluster; outside one it is RESTORE under another name, as in Redis.
  CommandAdder server_add{table, "server"};
  server_add.In(kAclKeyspace | kAclDangerous)(
      "restore-asking", -4, kCmdWrite | kCmdDenyOom | kCmdAsking, {KeyAt(1, kKeyOW | kKeyUpdate)},
      RestoreCommand, "An internal command for migrating keys in a cluster", "3.0.0",
      kRestoreComplexity, kRestoreSyntax);
  Command* migrate = add.In(kAclKeyspace | kAclDangerous)(
      "migrate", -6, kCmdWrite,
      {KeyAt(3, kKeyRW | kKeyAccess | kKeyDelete),
       KeySpec{kKeyRW | kKeyAccess | kKeyDelete | kKeyIncomplete, KeyBegin::Keyword("KEYS", -2),
               KeyFind::Range(-1, 1, 0)}},
      MigrateCommand, "Atomically transfers a key from one Redis instance to another.", "2.6.0",
      "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in "
      "the target instance. See the pages of these commands for time complexity. Also an "
      "O(N) data transfer between the two instances is performed.",
      "host port <key | \"\"> destination-db timeout [COPY] [REPLACE] [AUTH password | "
      "AUTH2 username password] [KEYS key [key ...]]",
      {"nondeterministic_output"});
  migrate->find_keys = MigrateKeyPositions;
}

}  // namespace goblin
