// Server administration: CONFIG TIME LASTSAVE SHUTDOWN MEMORY SLOWLOG LATENCY DEBUG MODULE.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define XXH_INLINE_ALL
#include "commands/command_util.h"
#include "commands/families.h"
#include "core/glob.h"
#include "core/sparkline.h"
#include "core/string_number.h"
#include "core/value_digest.h"
#include "core/value_types.h"
#include "server/crash_report.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/memory_stats.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/script_runner.h"
#include "server/shutdown.h"

namespace goblin {
namespace {

// --- CONFIG -------------------------------------------------------------------------------

void ConfigGetCommand(CommandContext& ctx) {
  std::vector<std::pair<std::string, std::string>> found;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    for (auto& pair : ctx.server.config_registry.Get(ctx.arg(i))) {
      bool seen = false;
      for (const auto& existing : found)
        seen = seen || EqualsIgnoreCase(existing.first, pair.first);
      if (!seen) found.push_back(std::move(pair));
    }
  }
  ctx.reply.Map(found.size());
  for (const auto& [name, value] : found) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

void ConfigSetCommand(CommandContext& ctx) {
  if (ctx.argc() % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 2; i < ctx.argc(); i += 2) pairs.emplace_back(ctx.arg(i), ctx.arg(i + 1));
  std::vector<ConfigChange> changed;
  Config before = ctx.server.config;
  const std::string& protection = ctx.server.config.enable_protected_configs;
  const bool allow_protected =
      protection == "yes" || (protection == "local" && ctx.client.is_local());
  std::string error = ctx.server.config_registry.SetAtRuntime(pairs, allow_protected, &changed);
  if (error.empty()) {
    error = ctx.server.ApplyConfigChanges(changed);
    if (!error.empty()) {
      // Redis's rollback: the old values come back and are applied again, undoing what the
      // failed apply half did (the old port's listener closed for a port that was taken).
      ctx.server.config = before;
      if (const std::string again = ctx.server.ApplyConfigChanges(changed); !again.empty()) {
        LogWarning("CONFIG SET rollback failed: " + again);
      }
    }
  }
  if (!error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

void ConfigResetstatCommand(CommandContext& ctx) {
  Server& s = ctx.server;
  KeyspaceCounters zero;
  s.stats.keyspace = zero;
  s.stats.total_connections_received = 0;
  s.stats.total_commands_processed = 0;
  s.stats.rejected_connections = 0;
  s.stats.net_input_bytes = s.stats.net_output_bytes = 0;
  s.stats.total_error_replies = 0;
  s.stats.unexpected_error_replies = 0;
  s.stats.net_repl_output_bytes = 0;
  s.stats.client_query_buffer_limit_disconnections = 0;
  s.stats.client_output_buffer_limit_disconnections = 0;
  s.stats.reply_buffer_shrinks = 0;
  s.replication->ResetStats();
  s.evictor.ResetCounters();
  s.stats.evicted_clients = 0;
  s.acl.ResetCounters();
  s.stats.error_counts.clear();
  s.stats.total_reads_processed = s.stats.total_writes_processed = 0;
  for (const Command* command : s.commands.All()) {
    command->stats = CommandStats();
    for (const auto& sub : command->subcommands) sub->stats = CommandStats();
  }
  ctx.reply.Ok();
}

// CONFIG REWRITE's work (DEBUG RESTART does it too): "" or why it failed.
std::string RewriteConfigFile(Server& server) {
  std::vector<std::string> users;
  if (server.config.acl.file.empty()) {
    for (const auto& [name, user] : server.acl.users()) {
      users.push_back(acl::AccessControl::UserLine(*user));
    }
  }
  return server.config_registry.Rewrite(users);
}

void ConfigRewriteCommand(CommandContext& ctx) {
  std::string error = RewriteConfigFile(ctx.server);
  if (!error.empty()) {
    ctx.reply.Error("ERR " + error);
    return;
  }
  ctx.reply.Ok();
}

void ConfigHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"GET <pattern>",
                  "    Return parameters matching the glob-like <pattern> and their values.",
                  "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
                  "RESETSTAT", "    Reset statistics reported by the INFO command.", "REWRITE",
                  "    Rewrite the configuration file."});
}

// --- TIME, LASTSAVE, SHUTDOWN ---------------------------------------------------------------

void TimeCommand(CommandContext& ctx) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(now).count();
  // Time stands still inside a script (Redis 7.2): every TIME it calls gives its start.
  if (ctx.client.kind == ClientKind::kScript) micros = ctx.server.scripts->start_micros();
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(micros / 1000000));
  ctx.reply.Bulk(std::to_string(micros % 1000000));
}

void ShutdownCommand(CommandContext& ctx) {
  uint32_t flags = 0;
  bool abort = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view option = ctx.arg(i);
    if (EqualsIgnoreCase(option, "save")) {
      flags |= kShutdownSave;
    } else if (EqualsIgnoreCase(option, "nosave")) {
      flags |= kShutdownNoSave;
    } else if (EqualsIgnoreCase(option, "now")) {
      flags |= kShutdownNow;
    } else if (EqualsIgnoreCase(option, "force")) {
      flags |= kShutdownForce;
    } else if (EqualsIgnoreCase(option, "abort")) {
      abort = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if ((abort && flags != 0) || ((flags & kShutdownSave) && (flags & kShutdownNoSave))) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (abort) {
    if (ctx.server.shutdown->Abort()) {
      ctx.reply.Ok();
    } else {
      ctx.reply.Error("ERR No shutdown in progress.");
    }
    return;
  }
  if (ctx.server.scripts->busy()) {
    // Past busy-reply-threshold only SHUTDOWN NOSAVE may end the server: the script is
    // stopped where it is, whatever it wrote.
    if ((flags & kShutdownNoSave) == 0) {
      ctx.reply.Error(ctx.server.scripts->BusyError());
      return;
    }
    ctx.server.scripts->Abort();
  }
  switch (ctx.server.shutdown->Begin(flags, &ctx.client)) {
    case Shutdown::Outcome::kExit:
      ctx.server.RequestShutdown();
      // Like Redis, the client gets no reply: the connection just closes.
      ctx.server.CloseClientLater(ctx.client);
      return;
    case Shutdown::Outcome::kWaiting:
      return;  // blocked until the server exits, or the shutdown is cancelled
    case Shutdown::Outcome::kFailed:
      ctx.reply.Error(errors::kShutdownFailed);
      return;
  }
}

// --- MEMORY -------------------------------------------------------------------------------

void MemoryUsageCommand(CommandContext& ctx) {
  if (ctx.argc() != 3 && !(ctx.argc() == 5 && EqualsIgnoreCase(ctx.arg(3), "samples"))) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argc() == 5) {
    int64_t samples;
    if (!ParseIntegerArg(ctx, ctx.arg(4), &samples)) return;
    if (samples < 0) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  KeyEntry* entry = ctx.db().Find(ctx.arg(2), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(entry->MemoryUsage()));
}

void MemoryStatsCommand(CommandContext& ctx) {
  Server& s = ctx.server;
  size_t used = s.UsedMemory();
  size_t keys = 0, tables = 0;
  for (size_t i = 0; i < s.database_count(); ++i) {
    keys += s.db(static_cast<int>(i)).size();
    tables += s.db(static_cast<int>(i)).TableBytes();
  }
  size_t clients = 0;
  for (Client* c : s.ClientsById()) {
    if (!c->is_replica()) clients += c->input.capacity() + c->output.allocated();
  }
  const size_t backlog = s.replication->BacklogBytes();
  const size_t replicas = s.replication->ReplicaBufferBytes();
  size_t overhead = tables + clients + backlog + replicas;
  size_t dataset = used > overhead ? used - overhead : 0;
  const size_t rss = ResidentBytes();
  const size_t active = AllocatorActiveBytes();
  const size_t resident = AllocatorResidentBytes();
  ReplyBuilder& r = ctx.reply;
  size_t nonempty = 0;
  for (size_t i = 0; i < s.database_count(); ++i)
    nonempty += s.db(static_cast<int>(i)).size() ? 1 : 0;
  // Redis 7.2's fields in its order: ten totals, one map per non-empty database, seventeen
  // figures of the dataset, the allocator and the process.
  r.Map(27 + nonempty);
  auto field = [&r](const char* name, int64_t value) {
    r.Bulk(name);
    r.Integer(value);
  };
  auto ratio = [&r](const char* name, size_t a, size_t b) {
    r.Bulk(name);
    r.Double(b ? static_cast<double>(a) / static_cast<double>(b) : 0);
  };
  auto difference = [](size_t a, size_t b) {
    return static_cast<int64_t>(a) - static_cast<int64_t>(b);
  };
  field("peak.allocated", static_cast<int64_t>(s.PeakMemory()));
  field("total.allocated", static_cast<int64_t>(used));
  field("startup.allocated", 0);
  field("replication.backlog", static_cast<int64_t>(backlog));
  field("clients.slaves", static_cast<int64_t>(replicas));
  field("clients.normal", static_cast<int64_t>(clients));
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (size_t i = 0; i < s.database_count(); ++i) {
    Database& db = s.db(static_cast<int>(i));
    if (db.size() == 0) continue;
    r.Bulk("db." + std::to_string(i));
    r.Map(3);
    field("overhead.hashtable.main", static_cast<int64_t>(db.TableBytes()));
    field("overhead.hashtable.expires", 0);
    // Redis 7.2 counts its cluster slot index here; without cluster mode it is empty.
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", static_cast<int64_t>(overhead));
  field("keys.count", static_cast<int64_t>(keys));
  field("keys.bytes-per-key", keys ? static_cast<int64_t>(used / keys) : 0);
  field("dataset.bytes", static_cast<int64_t>(dataset));
  r.Bulk("dataset.percentage");
  r.Double(used ? 100.0 * static_cast<double>(dataset) / static_cast<double>(used) : 0);
  r.Bulk("peak.percentage");
  r.Double(s.PeakMemory() ? 100.0 * static_cast<double>(used) / static_cast<double>(s.PeakMemory())
                          : 0);
  field("allocator.allocated", static_cast<int64_t>(used));
  field("allocator.active", static_cast<int64_t>(active));
  field("allocator.resident", static_cast<int64_t>(resident));
  ratio("allocator-fragmentation.ratio", active, used);
  field("allocator-fragmentation.bytes", difference(active, used));
  ratio("allocator-rss.ratio", resident, active);
  field("allocator-rss.bytes", difference(resident, active));
  ratio("rss-overhead.ratio", rss, resident);
  field("rss-overhead.bytes", difference(rss, resident));
  ratio("fragmentation", rss, used);
  field("fragmentation.bytes", difference(rss, used));
}

void MemoryDoctorCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(
      "Hi Sam, I can't find any memory issue in your instance. I can only account "
      "for what occurs on this base.\n");
}

void MemoryMallocStatsCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(std::string("Allocator: ") + std::string(AllocatorName()) +
                     "\nallocated: " + std::to_string(AllocatedBytes()) +
                     "\nactive: " + std::to_string(AllocatorActiveBytes()) +
                     "\nresident: " + std::to_string(AllocatorResidentBytes()) + "\n");
}

void MemoryPurgeCommand(CommandContext& ctx) { ctx.reply.Ok(); }

void MemoryHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"DOCTOR", "    Return memory problems reports.", "MALLOC-STATS",
                  "    Return internal statistics report from the memory allocator.", "PURGE",
                  "    Attempt to purge dirty pages for reclamation by the allocator.", "STATS",
                  "    Return information about the memory usage of the server.",
                  "USAGE <key> [SAMPLES <count>]",
                  "    Return memory in bytes used by <key> and its value. Nested values are",
                  "    sampled up to <count> times (default: 5, 0 means sample all)."});
}

// --- SLOWLOG ------------------------------------------------------------------------------

void SlowlogGetCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "SLOWLOG"));
    return;
  }
  int64_t count = 10;
  if (ctx.argc() == 3) {
    if (!ParseInt64(ctx.arg(2), &count) || count < -1) {
      ctx.reply.Error("ERR count should be greater than or equal to -1");
      return;
    }
    if (count == -1) count = INT64_MAX;
  }
  const auto& log = ctx.server.slowlog;
  size_t shown = static_cast<size_t>(std::min<int64_t>(count, static_cast<int64_t>(log.size())));
  ctx.reply.Array(shown);
  for (size_t i = 0; i < shown; ++i) {
    const SlowlogEntry& e = log[i];
    ctx.reply.Array(6);
    ctx.reply.Integer(static_cast<int64_t>(e.id));
    ctx.reply.Integer(e.unix_time);
    ctx.reply.Integer(e.duration_us);
    ctx.reply.Array(e.args.size());
    for (const std::string& arg : e.args) ctx.reply.Bulk(arg);
    ctx.reply.Bulk(e.peer);
    ctx.reply.Bulk(e.client_name);
  }
}

void SlowlogLenCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.slowlog.size()));
}

void SlowlogResetCommand(CommandContext& ctx) {
  ctx.server.slowlog.clear();
  ctx.reply.Ok();
}

void SlowlogHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"GET [<count>]",
                  "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                  "    Entries are made of:",
                  "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                  "    client name", "LEN", "    Return the length of the slowlog.", "RESET",
                  "    Reset the slowlog."});
}

// --- LATENCY ------------------------------------------------------------------------------

constexpr int kLatencyGraphColumns = 80;

void LatencyLatestCommand(CommandContext& ctx) {
  const auto& events = ctx.server.latency_events;
  ctx.reply.Array(events.size());
  for (const auto& [name, event] : events) {
    ctx.reply.Array(4);
    ctx.reply.Bulk(name);
    ctx.reply.Integer(event.history.back().unix_time);
    ctx.reply.Integer(event.history.back().latency_ms);
    ctx.reply.Integer(event.max_ms);
  }
}

void LatencyHistoryCommand(CommandContext& ctx) {
  auto it = ctx.server.latency_events.find(std::string(ctx.arg(2)));
  if (it == ctx.server.latency_events.end()) {
    ctx.reply.Array(0);
    return;
  }
  ctx.reply.Array(it->second.history.size());
  for (const LatencySample& sample : it->second.history) {
    ctx.reply.Array(2);
    ctx.reply.Integer(sample.unix_time);
    ctx.reply.Integer(sample.latency_ms);
  }
}

void LatencyResetCommand(CommandContext& ctx) {
  auto& events = ctx.server.latency_events;
  if (ctx.argc() == 2) {
    int64_t count = static_cast<int64_t>(events.size());
    events.clear();
    ctx.reply.Integer(count);
    return;
  }
  // Names match without case here, as in Redis (HISTORY and GRAPH match them exactly).
  int64_t count = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    count += static_cast<int64_t>(std::erase_if(
        events, [&](const auto& event) { return EqualsIgnoreCase(event.first, ctx.arg(i)); }));
  }
  ctx.reply.Integer(count);
}

// LATENCY HISTOGRAM: per command, its calls and the cumulative counts at power-of-two bounds
// in microseconds, as Redis prints its hdr_histogram (core/latency_histogram.h).
void ReplyCommandHistogram(ReplyBuilder& reply, const Command& command) {
  const LatencyHistogram& histogram = *command.stats.latency;
  const std::vector<LatencyHistogram::Step> steps = histogram.PowerOfTwoSteps();
  reply.Bulk(command.name);
  reply.Map(2);
  reply.Bulk("calls");
  reply.Integer(static_cast<int64_t>(histogram.count()));
  reply.Bulk("histogram_usec");
  reply.Map(steps.size());
  for (const LatencyHistogram::Step& step : steps) {
    reply.Integer(static_cast<int64_t>(step.upper / 1000));
    reply.Integer(static_cast<int64_t>(step.count));
  }
}

// Every command named (a container brings its subcommands, "config|get" one subcommand;
// unknown names are skipped, a name given twice is shown twice), or with no name every
// command, that has a histogram.
void LatencyHistogramCommand(CommandContext& ctx) {
  std::vector<const Command*> shown;
  auto add = [&shown](const Command& command) {
    if (command.stats.latency) shown.push_back(&command);
    for (const auto& sub : command.subcommands) {
      if (sub->stats.latency) shown.push_back(sub.get());
    }
  };
  if (ctx.argc() == 2) {
    for (const Command* command : ctx.server.commands.All()) add(*command);
  }
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (const Command* command = ctx.server.commands.FindFullName(ctx.arg(i))) add(*command);
  }
  ctx.reply.Map(shown.size());
  for (const Command* command : shown) ReplyCommandHistogram(ctx.reply, *command);
}

// The column labels of LATENCY GRAPH: how long ago a sample was taken, in its largest unit.
std::string AgeLabel(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

void LatencyGraphCommand(CommandContext& ctx) {
  auto it = ctx.server.latency_events.find(std::string(ctx.arg(2)));
  if (it == ctx.server.latency_events.end()) {
    ctx.reply.Error("ERR No samples available for event '" + errors::Quote(ctx.arg(2)) + "'");
    return;
  }
  const LatencyEvent& event = it->second;
  const int64_t now = ctx.server.NowMs() / 1000;
  std::vector<SparklineSample> samples;
  int64_t high = event.history.front().latency_ms, low = high;
  for (const LatencySample& sample : event.history) {
    high = std::max(high, sample.latency_ms);
    low = std::min(low, sample.latency_ms);
    samples.push_back({static_cast<double>(sample.latency_ms), AgeLabel(now - sample.unix_time)});
  }
  std::string graph = it->first + " - high " + std::to_string(high) + " ms, low " +
                      std::to_string(low) + " ms (all time high " + std::to_string(event.max_ms) +
                      " ms)\n" + std::string(kLatencyGraphColumns, '-') + "\n";
  graph += RenderSparkline(samples, kLatencyGraphColumns, 4);
  ctx.reply.Verbatim(graph);
}

// What LATENCY DOCTOR says about one event's samples (whole milliseconds, as recorded).
struct LatencyEventSummary {
  int64_t samples = 0;
  int64_t average_ms = 0;
  int64_t mean_deviation_ms = 0;  // mean absolute difference from the average
  double seconds_between = 0;     // the samples' time span (at least 1 s) over their number
};

LatencyEventSummary Summarize(const LatencyEvent& event, int64_t now) {
  LatencyEventSummary summary;
  if (event.history.empty()) return summary;
  int64_t sum = 0, oldest = event.history.front().unix_time;
  for (const LatencySample& sample : event.history) {
    sum += sample.latency_ms;
    oldest = std::min(oldest, sample.unix_time);
  }
  summary.samples = static_cast<int64_t>(event.history.size());
  summary.average_ms = sum / summary.samples;
  int64_t deviation = 0;
  for (const LatencySample& sample : event.history) {
    deviation += std::abs(sample.latency_ms - summary.average_ms);
  }
  summary.mean_deviation_ms = deviation / summary.samples;
  summary.seconds_between = static_cast<double>(std::max<int64_t>(now - oldest, 1)) /
                            static_cast<double>(summary.samples);
  return summary;
}

// LATENCY DOCTOR. The two texts for an instance without spikes are redis-server's own, which
// tools and people recognise; the report on recorded spikes is Goblin's.
std::string LatencyReport(Server& server) {
  const Config& config = server.config;
  if (server.latency_events.empty() && config.latency_monitor_threshold == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  const int64_t now = server.NowMs() / 1000;
  const std::string threshold_us = std::to_string(config.latency_monitor_threshold * 1000);
  std::vector<std::string> advice;
  auto advise = [&advice](const std::string& text) {
    if (std::find(advice.begin(), advice.end(), text) == advice.end()) advice.push_back(text);
  };
  std::string report;
  int number = 0;
  for (const auto& [name, event] : server.latency_events) {
    if (number++ == 0) {
      report += "Latency spikes were recorded on this server (latency-monitor-threshold " +
                std::to_string(config.latency_monitor_threshold) + " ms). By event:\n\n";
    }
    const LatencyEventSummary summary = Summarize(event, now);
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.2f", summary.seconds_between);
    report += std::to_string(number) + ". " + name + ": " + std::to_string(summary.samples) +
              (summary.samples == 1 ? " spike kept, " : " spikes kept, ") +
              std::to_string(summary.average_ms) + " ms on average (mean deviation " +
              std::to_string(summary.mean_deviation_ms) + " ms), one every " + seconds +
              " s; the worst since startup took " + std::to_string(event.max_ms) + " ms.\n";
    if (name == "command") {
      if (config.slowlog_log_slower_than < 0) {
        advise(
            "- The slow log is off, so nothing says which commands these were. 'CONFIG SET "
            "slowlog-log-slower-than " +
            threshold_us + "' records every command slower than the latency threshold.");
      } else if (config.slowlog_log_slower_than / 1000 > config.latency_monitor_threshold) {
        advise("- The slow log records only commands slower than " +
               std::to_string(config.slowlog_log_slower_than) +
               " us, which misses some of these spikes. 'CONFIG SET slowlog-log-slower-than " +
               threshold_us + "' records them all.");
      }
      advise(
          "- SLOWLOG GET lists the slow commands with their arguments: look there for the "
          "commands, or the keys, that take long.");
      advise(
          "- Deleting, expiring or evicting a key with a very large value frees it in one "
          "step. Values spread over several smaller keys are freed in smaller steps.");
    } else if (name == "fast-command") {
      advise(
          "- Commands that should take microseconds took milliseconds: the process was "
          "probably waiting for the CPU. Lower the load on the machine, give goblin-server "
          "a core of its own, and measure what the system adds with 'redis-cli "
          "--intrinsic-latency 100'.");
    }
  }
  if (SmapsBytes("AnonHugePages") > 0) {
    advise(
        "- The process uses transparent huge pages, which stall it while the kernel copies "
        "or compacts them (after a fork for a snapshot, above all). 'echo never > "
        "/sys/kernel/mm/transparent_hugepage/enabled' turns them off for processes started "
        "afterwards: run it at boot, then restart goblin-server.");
  }
  if (number == 0 && advice.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
           "in the slightest bit. I honestly think you ought to sit down calmly, take a stress "
           "pill, and think things over.\n";
  }
  if (advice.empty()) {
    report +=
        "\nNone of these events has a known remedy; the figures above and LATENCY HISTORY "
        "<event> show when they happen.\n";
    return report;
  }
  report += "\nWhat may help:\n\n";
  for (const std::string& text : advice) report += text + "\n";
  return report;
}

void LatencyDoctorCommand(CommandContext& ctx) { ctx.reply.Verbatim(LatencyReport(ctx.server)); }

void LatencyHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {
                     "DOCTOR",
                     "    Return a human readable latency analysis report.",
                     "GRAPH <event>",
                     "    Return an ASCII latency graph for the <event> class.",
                     "HISTORY <event>",
                     "    Return time-latency samples for the <event> class.",
                     "LATEST",
                     "    Return the latest latency samples for all events.",
                     "RESET [<event> ...]",
                     "    Reset latency data of one or more <event> classes.",
                     "    (default: reset all data for all event classes)",
                     "HISTOGRAM [COMMAND ...]",
                     "    Return a cumulative distribution of latencies in the format of a "
                     "histogram for the specified command names.",
                     "    If no commands are specified then all histograms are replied.",
                 });
}

// --- DEBUG --------------------------------------------------------------------------------

// DEBUG DIGEST-VALUE: the value alone (its type and content), whatever its encoding.
ValueDigest DigestValue(const KeyEntry* entry) {
  ValueDigest digest;
  digest.Mix(InfoOf(entry->type()).name);
  if (entry->type() == ValueType::kString) {
    char scratch[kInt64TextMax];
    digest.Mix(entry->string_value(scratch));
  } else {
    entry->object()->Digest(&digest);
  }
  return digest;
}

// One key of DEBUG DIGEST: its database, name, type, value and deadline, in that order.
ValueDigest DigestKey(int db, const KeyEntry* entry) {
  ValueDigest digest;
  digest.Mix(static_cast<int64_t>(db));
  digest.Mix(entry->key());
  digest.Mix(DigestValue(entry));
  if (entry->has_expire()) digest.Mix(entry->expire_ms());
  return digest;
}

// DEBUG POPULATE count [prefix] [size]: keys "<prefix>:<n>" (prefix "key") for n below count,
// each holding "value:<n>", cut or padded with zero bytes to size when size is given (and not
// 0). A key that exists is left as it is. Redis formats the key into a 128-byte buffer, so a
// key is cut at 127 bytes and a prefix at its first zero byte, and so it is here. Not
// propagated (DEBUG does not write), as in Redis.
void DebugPopulate(CommandContext& ctx) {
  int64_t count = 0, size = 0;
  // Redis answers both a word and a negative number with the same error here.
  auto positive = [&](std::string_view text, int64_t* value) {
    if (!ParseInt64(text, value) || *value < 0) {
      ctx.reply.Error(errors::kPositive);
      return false;
    }
    return true;
  };
  if (!positive(ctx.arg(2), &count)) return;
  if (ctx.argc() == 5 && !positive(ctx.arg(4), &size)) return;
  std::string_view prefix = ctx.argc() >= 4 ? ctx.arg(3) : std::string_view("key");
  prefix = prefix.substr(0, prefix.find('\0'));
  constexpr size_t kLongestKey = 127;
  Database& db = ctx.db();
  std::string key, value;
  for (int64_t i = 0; i < count; ++i) {
    key.assign(prefix).append(":").append(Int64ToString(i));
    if (key.size() > kLongestKey) key.resize(kLongestKey);
    if (db.Find(key, ctx.now_ms, /*touch=*/false) != nullptr) continue;
    value.assign("value:").append(Int64ToString(i));
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    db.Put(key, EntryValue::String(value), std::nullopt);
  }
  ctx.reply.Ok();
}

// DEBUG SDSLEN key: Redis's view of a key and a string value held as SDS strings. Goblin keeps
// neither in SDS: the lengths are the real ones, nothing is allocated ahead (avail 0), and the
// allocation sizes are the bytes Goblin holds for the key and for the value. Values that Redis
// would not hold as SDS (other types, integers) get its error.
void DebugSdslen(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().Find(ctx.arg(2), ctx.now_ms, /*touch=*/false);
  if (entry == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  if (entry->type() != ValueType::kString || entry->EncodingName() == "int") {
    ctx.reply.Error("ERR Not an sds encoded string.");
    return;
  }
  char scratch[kInt64TextMax];
  const size_t key_length = entry->key().size();
  const size_t value_length = entry->string_value(scratch).size();
  ctx.reply.Simple("key_sds_len:" + std::to_string(key_length) +
                   ", key_sds_avail:0, key_zmalloc: " + std::to_string(key_length) +
                   ", val_sds_len:" + std::to_string(value_length) +
                   ", val_sds_avail:0, val_zmalloc: " + std::to_string(entry->MemoryUsage()));
}

// DEBUG CLIENT-EVICTION: the memory and the number of the evictable clients by bucket, in
// Redis's layout.
void DebugClientEviction(CommandContext& ctx) {
  if (ctx.server.client_eviction_limit() == 0) {
    ctx.reply.Error("ERR maxmemory-clients is disabled.");
    return;
  }
  const std::vector<std::pair<size_t, size_t>> buckets = ctx.server.ClientMemoryBuckets();
  std::string text;
  char line[160];
  for (size_t i = 0; i < buckets.size(); ++i) {
    const size_t floor = ClientMemoryBucketFloor(i);
    if (i + 1 == buckets.size()) {
      std::snprintf(line, sizeof(line), "bucket %10zu+            : ", floor);
    } else {
      std::snprintf(line, sizeof(line), "bucket %10zu - %10zu: ", floor,
                    ClientMemoryBucketFloor(i + 1) - 1);
    }
    text += line;
    std::snprintf(line, sizeof(line), "tot-mem: %10zu, clients: %zu\n", buckets[i].first,
                  buckets[i].second);
    text += line;
  }
  ctx.reply.Verbatim(text);
}

// DEBUG MALLCTL key [value] and MALLCTL-STR key [value]: jemalloc's controls.
void DebugMallctl(CommandContext& ctx, bool string) {
  const std::string name(ctx.arg(2));
  bool wrote_only = false;
  std::string error;
  if (string) {
    std::string old;
    const std::string value = ctx.argc() > 3 ? std::string(ctx.arg(3)) : std::string();
    error = AllocatorControlString(name, ctx.argc() > 3 ? &value : nullptr, &old, &wrote_only);
    if (error.empty() && !wrote_only) {
      ctx.reply.Bulk(old);
      return;
    }
  } else {
    int64_t value = 0, old = 0;
    if (ctx.argc() > 3 && !ParseInt64(ctx.arg(3), &value)) {
      ctx.reply.Error(errors::kNotInteger);
      return;
    }
    error = AllocatorControlInt(name, ctx.argc() > 3 ? &value : nullptr, &old, &wrote_only);
    if (error.empty() && !wrote_only) {
      ctx.reply.Integer(old);
      return;
    }
  }
  if (!error.empty()) {
    ctx.reply.Error("ERR " + error);
  } else {
    ctx.reply.Ok();
  }
}

// DEBUG RESTART [ms] and CRASH-AND-RECOVER [ms]: the server runs its own executable again with
// its command line, after delay ms. RESTART first rewrites the configuration file (if any) and
// shuts down properly (the final save, without waiting for replicas); CRASH-AND-RECOVER just
// stops. Every descriptor past stderr is closed, so the new process can bind the ports. On
// success nothing returns; the reply is the failure's.
void DebugRestart(CommandContext& ctx, bool graceful) {
  int64_t delay = 0;
  if (ctx.argc() >= 3) {
    if (!ParseInt64(ctx.arg(2), &delay)) {
      ctx.reply.Error(errors::kNotInteger);
      return;
    }
    delay = std::max<int64_t>(delay, 0);
  }
  Server& server = ctx.server;
  constexpr std::string_view kFailed = "ERR failed to restart the server. Check server logs.";
  char executable[4096];
  const ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
  if (length <= 0 || access(std::string(executable, length).c_str(), X_OK) != 0) {
    LogWarning("Can't restart: this process has no permissions to execute " + server.executable);
    ctx.reply.Error(kFailed);
    return;
  }
  executable[length] = '\0';
  if (graceful) {
    if (!server.config.config_file.empty()) {
      if (std::string error = RewriteConfigFile(server); !error.empty()) {
        LogWarning("Can't restart: configuration rewrite process failed: " + error);
        ctx.reply.Error(kFailed);
        return;
      }
    }
    if (server.shutdown->Begin(kShutdownNow, nullptr) != Shutdown::Outcome::kExit) {
      LogWarning("Can't restart: error preparing for shutdown");
      ctx.reply.Error(kFailed);
      return;
    }
    server.persistence->FlushLog();
  }
  const long open_max = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (open_max > 0 ? open_max : 65536); ++fd) {
    if (fcntl(fd, F_GETFD) != -1) close(fd);
  }
  if (delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  std::vector<char*> argv;
  argv.push_back(executable);
  for (size_t i = 1; i < server.command_line.size(); ++i) {
    argv.push_back(server.command_line[i].data());
  }
  argv.push_back(nullptr);
  execve(executable, argv.data(), environ);
  _exit(1);  // nothing is left to go back to
}

void DebugCommand(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "sleep") && ctx.argc() == 3) {
    // As Redis reads it: the longest prefix that is a number, 0 when there is none.
    double seconds = std::strtod(std::string(ctx.arg(2)).c_str(), nullptr);
    if (!(seconds > 0)) seconds = 0;  // NaN and negatives too
    seconds = std::min(seconds, 1e9);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "segfault")) {
    // As Redis does it: a write to a page mapped read-only, a real fault at a known address.
    // Like Redis, it takes any further arguments and never replies.
    auto* page = static_cast<volatile char*>(
        mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    *page = 'x';
  } else if (EqualsIgnoreCase(sub, "assert")) {
    GOBLIN_ASSERT(1 == 2);
  } else if (EqualsIgnoreCase(sub, "panic")) {
    Panic("DEBUG PANIC called at Unix time " + std::to_string(ctx.now_ms / 1000), __FILE__,
          __LINE__);
  } else if (EqualsIgnoreCase(sub, "oom")) {
    // Redis asks its allocator for SIZE_MAX bytes and its out-of-memory handler panics; the
    // same end without the allocation.
    const std::string bytes = std::to_string(SIZE_MAX);
    LogWarning("Out Of Memory allocating " + bytes + " bytes!");
    Panic("Redis aborting for OUT OF MEMORY. Allocating " + bytes + " bytes!", __FILE__, __LINE__);
  } else if (EqualsIgnoreCase(sub, "restart") || EqualsIgnoreCase(sub, "crash-and-recover")) {
    DebugRestart(ctx, EqualsIgnoreCase(sub, "restart"));
  } else if (EqualsIgnoreCase(sub, "reload")) {
    bool save = true, flush = true, merge = false;
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (EqualsIgnoreCase(ctx.arg(i), "merge")) {
        merge = true;
      } else if (EqualsIgnoreCase(ctx.arg(i), "noflush")) {
        flush = false;
      } else if (EqualsIgnoreCase(ctx.arg(i), "nosave")) {
        save = false;
      } else {
        ctx.reply.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
        return;
      }
    }
    const std::string error = ctx.server.persistence->DebugReload(save, flush, merge);
    if (!error.empty()) {
      ctx.reply.Error(error);
      return;
    }
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "loadaof")) {
    const std::string error = ctx.server.persistence->DebugLoadLog();
    if (!error.empty()) {
      ctx.reply.Error(error);
      return;
    }
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "populate") && ctx.argc() >= 3 && ctx.argc() <= 5) {
    DebugPopulate(ctx);
  } else if (EqualsIgnoreCase(sub, "sdslen") && ctx.argc() == 3) {
    DebugSdslen(ctx);
  } else if (EqualsIgnoreCase(sub, "replicate") && ctx.argc() >= 3) {
    ctx.server.replication->FeedCommand(
        std::span<const std::string_view>(ctx.argv.data() + 2, ctx.argc() - 2));
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "set-skip-checksum-validation") && ctx.argc() == 3) {
    ctx.server.skip_checksum_validation = std::atoi(std::string(ctx.arg(2)).c_str()) != 0;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "set-disable-deny-scripts") && ctx.argc() == 3) {
    ctx.server.script_disable_deny_script = std::atoi(std::string(ctx.arg(2)).c_str()) != 0;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "client-eviction") && ctx.argc() == 2) {
    DebugClientEviction(ctx);
  } else if ((EqualsIgnoreCase(sub, "mallctl") || EqualsIgnoreCase(sub, "mallctl-str")) &&
             ctx.argc() >= 3 && AllocatorHasControls()) {
    DebugMallctl(ctx, EqualsIgnoreCase(sub, "mallctl-str"));
  } else if (EqualsIgnoreCase(sub, "replybuffer") && ctx.argc() == 4) {
    if (EqualsIgnoreCase(ctx.arg(2), "peak-reset-time")) {
      int64_t ms = 0;
      if (EqualsIgnoreCase(ctx.arg(3), "never")) {
        ms = -1;
      } else if (EqualsIgnoreCase(ctx.arg(3), "reset")) {
        ms = 5000;
      } else if (!ParseInt64(ctx.arg(3), &ms)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      ctx.server.reply_buffer_peak_reset_time_ms = ms;
    } else if (EqualsIgnoreCase(ctx.arg(2), "resizing")) {
      ctx.server.reply_buffer_resizing = std::atoi(std::string(ctx.arg(3)).c_str()) != 0;
    } else {
      ctx.reply.Error(errors::UnknownSubcommandOrArity(sub, "DEBUG"));
      return;
    }
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "error") && ctx.argc() == 3) {
    ctx.reply.Error(ctx.arg(2));
  } else if (EqualsIgnoreCase(sub, "log") && ctx.argc() == 3) {
    LogWarning("DEBUG LOG: " + std::string(ctx.arg(2)));
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "change-repl-id") && ctx.argc() == 2) {
    ctx.server.replication_id = ctx.server.RandomHexId();
    LogWarning("Changing replication IDs after receiving DEBUG change-repl-id");
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "pause-cron") && ctx.argc() == 3) {
    ctx.server.cron_paused = ctx.arg(2) != "0";
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "quicklist-packed-threshold") && ctx.argc() == 3) {
    int64_t bytes;
    if (!ParseMemory(ctx.arg(2), &bytes) || bytes < 0 ||
        bytes > (int64_t{1} << 32) - (int64_t{1} << 20)) {
      ctx.reply.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
      return;
    }
    ctx.server.quicklist_packed_threshold = bytes == 0 ? uint64_t{1} << 30 : bytes;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "listpack") && ctx.argc() == 3) {
    // Goblin's small forms are its own packed runs, not Redis listpacks: there is no listpack
    // structure to print, so every value answers as Redis answers for another encoding.
    KeyEntry* entry = ctx.db().Find(ctx.arg(2), ctx.now_ms);
    ctx.reply.Error(entry == nullptr ? errors::kNoSuchKey : "ERR Not a listpack encoded object.");
  } else if (EqualsIgnoreCase(sub, "stringmatch-len") && ctx.argc() == 2) {
    // Redis's check that a pathological pattern neither overflows the stack nor runs away.
    std::string pattern(1000, '*');
    for (size_t i = 1; i < pattern.size(); i += 2) pattern[i] = 'a';
    const std::string text(5000, 'a');
    GlobMatch(pattern, text, false);
    ctx.reply.Simple("Apparently Redis did not crash: test passed");
  } else if (EqualsIgnoreCase(sub, "set-active-expire") && ctx.argc() == 3) {
    ctx.server.active_expire_enabled = ctx.arg(2) != "0";
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "digest") && ctx.argc() == 2) {
    // Keys in any order give the same digest: each key's digest is XORed in.
    ValueDigest digest;
    for (size_t i = 0; i < ctx.server.database_count(); ++i) {
      ctx.server.db(static_cast<int>(i)).ForEach([&](const KeyEntry* entry) {
        if (!Database::Expired(entry, ctx.now_ms))
          digest.Xor(DigestKey(static_cast<int>(i), entry));
      });
    }
    ctx.reply.Simple(digest.Hex());
  } else if (EqualsIgnoreCase(sub, "digest-value") && ctx.argc() >= 2) {
    ctx.reply.Array(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); ++i) {
      KeyEntry* entry = ctx.db().Find(ctx.arg(i), ctx.now_ms);
      ctx.reply.Simple(entry != nullptr ? DigestValue(entry).Hex() : ValueDigest().Hex());
    }
  } else if (EqualsIgnoreCase(sub, "object") && ctx.argc() == 3) {
    // The key as stored, expired or not and without touching it, as Redis reads its dict.
    const uint32_t stamp = ctx.db().AccessStamp(ctx.arg(2));
    KeyEntry* entry = ctx.db().Peek(ctx.arg(2));
    if (entry == nullptr) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    char address[32];
    std::snprintf(address, sizeof(address), "%p", static_cast<void*>(entry));
    ctx.reply.Simple(std::string("Value at:") + address +
                     " refcount:1 encoding:" + std::string(entry->EncodingName()) +
                     " serializedlength:" + std::to_string(entry->MemoryUsage()) +
                     " lru:" + std::to_string(stamp) + " lru_seconds_idle:" +
                     std::to_string(ctx.server.access_clock.IdleMs(stamp) / 1000));
  } else if (EqualsIgnoreCase(sub, "protocol") && ctx.argc() == 3) {
    std::string_view type = ctx.arg(2);
    ReplyBuilder& r = ctx.reply;
    if (EqualsIgnoreCase(type, "string")) {
      r.Bulk("Hello World");
    } else if (EqualsIgnoreCase(type, "integer")) {
      r.Integer(12345);
    } else if (EqualsIgnoreCase(type, "double")) {
      r.Double(3.141);
    } else if (EqualsIgnoreCase(type, "bignum")) {
      r.Raw(r.resp3() ? "(1234567999999999999999999999999999999\r\n"
                      : "$37\r\n1234567999999999999999999999999999999\r\n");
    } else if (EqualsIgnoreCase(type, "null")) {
      r.Null();
    } else if (EqualsIgnoreCase(type, "array")) {
      r.Array(3);
      for (int j = 0; j < 3; ++j) r.Integer(j);
    } else if (EqualsIgnoreCase(type, "set")) {
      r.Set(3);
      for (int j = 0; j < 3; ++j) r.Integer(j);
    } else if (EqualsIgnoreCase(type, "map")) {
      r.Map(3);
      for (int j = 0; j < 3; ++j) {
        r.Integer(j);
        r.Bool(j == 1);
      }
    } else if (EqualsIgnoreCase(type, "attrib")) {
      if (r.resp3()) r.Raw("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n");
      r.Bulk("Some real reply following the attribute");
    } else if (EqualsIgnoreCase(type, "push")) {
      if (!r.resp3()) {
        r.Error("ERR RESP2 is not supported by this command");
        return;
      }
      r.Push(2);
      r.Bulk("server-cpu-usage");
      r.Integer(42);
      r.Bulk("Some real reply following the push reply");
    } else if (EqualsIgnoreCase(type, "true")) {
      r.Bool(true);
    } else if (EqualsIgnoreCase(type, "false")) {
      r.Bool(false);
    } else if (EqualsIgnoreCase(type, "verbatim")) {
      r.Verbatim("This is a verbatim\nstring");
    } else {
      r.Error(
          "ERR Wrong protocol type name. Please use one of the following: "
          "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
  } else if (EqualsIgnoreCase(sub, "help")) {
    // Redis 7.2's lines, in its order, for the subcommands served here.
    ReplyHelp(
        ctx,
        {
            "ASSERT",
            "    Crash by assertion failed.",
            "CHANGE-REPL-ID",
            "    Change the replication IDs of the instance.",
            "    Dangerous: should be used only for testing the replication subsystem.",
            "CRASH-AND-RECOVER [<milliseconds>]",
            "    Hard crash and restart after a <milliseconds> delay (default 0).",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate Redis errors.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "LOADAOF",
            "    Flush the AOF buffers on disk and reload the AOF in memory.",
            "REPLICATE <string>",
            "    Replicates the provided string to replicas, allowing data divergence.",
            "MALLCTL <key> [<val>]",
            "    Get or set a malloc tuning integer.",
            "MALLCTL-STR <key> [<val>]",
            "    Get or set a malloc tuning string.",
            "OBJECT <key>",
            "    Show low level info about `key` and associated value.",
            "OOM",
            "    Crash the server simulating an out-of-memory error.",
            "PANIC",
            "    Crash the server simulating a panic.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix. These are not propagated to",
            "    replicas. Cluster slots are not respected so keys not belonging to the",
            "    current node can be created in cluster mode.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "RELOAD [option ...]",
            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
            "RESTART [<milliseconds>]",
            "    Graceful restart: save config, db, restart after a <milliseconds> delay (default "
            "0).",
            "SDSLEN <key>",
            "    Show low level SDS string info representing `key` and value.",
            "SEGFAULT",
            "    Crash the server with sigsegv.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
            "SET-DISABLE-DENY-SCRIPTS <0|1>",
            "    Allows or denies scripts the commands flagged noscript.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "STRINGMATCH-LEN",
            "    Run a fuzz tester against the stringmatchlen() function.",
            "LISTPACK <key>",
            "    Show low level info about the listpack encoding of <key>.",
            "CLIENT-EVICTION",
            "    Show low level client eviction pools info (maxmemory-clients).",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
            "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
            "    In case NEVER is provided the last observed peak will never be reset",
            "    In case RESET is provided the peak reset time will be restored to the default "
            "value",
            "REPLYBUFFER RESIZING <0|1>",
            "    Enable or disable the reply buffer resize cron job",
        });
  } else {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(sub, "DEBUG"));
  }
}

// --- MODULE -------------------------------------------------------------------------------

void ModuleListCommand(CommandContext& ctx) { ctx.reply.Array(0); }

void ModuleLoadCommand(CommandContext& ctx) {
  LogWarning("Module " + std::string(ctx.arg(2)) +
             " failed to load: Goblin does not load Redis modules");
  ctx.reply.Error("ERR Error loading the extension. Please check the server logs.");
}

void ModuleUnloadCommand(CommandContext& ctx) {
  ctx.reply.Error("ERR Error unloading module: no such module with that name");
}

void ModuleHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"LIST", "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
             "    Load a module library from <path>, passing to it any optional arguments.",
             "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
             "    Load a module library from <path>, while passing it module configurations and "
             "optional arguments.",
             "UNLOAD <name>", "    Unload a module."});
}

// A master: its offset and, for each online replica, its address, port and acknowledged offset.
// A replica: its master, the link's state and the offset applied (-1 without a master client).
void RoleCommand(CommandContext& ctx) {
  const MasterLink& link = *ctx.server.master_link;
  if (link.is_replica()) {
    ctx.reply.Array(5);
    ctx.reply.Bulk("slave");
    ctx.reply.Bulk(link.master().host);
    ctx.reply.Integer(link.master().port);
    ctx.reply.Bulk(link.RoleState());
    ctx.reply.Integer(link.connected() ? static_cast<int64_t>(ctx.server.replication->offset())
                                       : -1);
    return;
  }
  const Replication& replication = *ctx.server.replication;
  std::vector<Client*> online;
  for (Client* replica : replication.Replicas()) {
    if (replica->replica.state == ReplicaState::kOnline) online.push_back(replica);
  }
  ctx.reply.Array(3);
  ctx.reply.Bulk("master");
  ctx.reply.Integer(static_cast<int64_t>(replication.offset()));
  ctx.reply.Array(online.size());
  for (const Client* replica : online) {
    ctx.reply.Array(3);
    ctx.reply.Bulk(Replication::ReplicaIp(*replica));
    ctx.reply.Bulk(std::to_string(replica->replica.listening_port));
    ctx.reply.Bulk(std::to_string(replica->replica.ack_offset));
  }
}

void MonitorCommand(CommandContext& ctx) {
  if (!ctx.client.may_block()) {
    ctx.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  if (ctx.client.monitor) return;  // Redis ignores a second MONITOR, without a reply
  ctx.server.AddMonitor(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterServerCommands(CommandTable* table) {
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale;
  CommandAdder add{table, "server"};
  Command* config =
      add("config", -2, 0, {}, nullptr, "A container for server configuration commands.", "2.0.0",
          "Depends on subcommand.", "");
  add.Sub(config, "get", -3, kAdmin, {}, ConfigGetCommand,
          "Returns the effective values of configuration parameters.", "2.0.0",
          "O(N) when N is the number of configuration parameters provided",
          "parameter [parameter ...]");
  add.Sub(config, "set", -4, kAdmin, {}, ConfigSetCommand,
          "Sets configuration parameters in-flight.", "2.0.0",
          "O(N) when N is the number of configuration parameters provided",
          "parameter value [parameter value ...]",
          {"request_policy:all_nodes", "response_policy:all_succeeded"});
  add.Sub(config, "resetstat", 2, kAdmin, {}, ConfigResetstatCommand,
          "Resets the server's statistics.", "2.0.0", "O(1)", "");
  add.Sub(config, "rewrite", 2, kAdmin, {}, ConfigRewriteCommand,
          "Persists the effective configuration to file.", "2.8.0", "O(1)", "");
  add.Sub(config, "help", 2, kCmdLoading | kCmdStale, {}, ConfigHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
  add("monitor", 1, kAdmin, {}, MonitorCommand,
      "Listens for all requests received by the server in real-time.", "1.0.0", "", "");
  add.In(kAclAdmin | kAclDangerous)("role", 1, kCmdNoscript | kCmdLoading | kCmdStale | kCmdFast,
                                    {}, RoleCommand, "Returns the replication role.", "2.8.12",
                                    "O(1)", "");
  add("time", 1, kCmdLoading | kCmdStale | kCmdFast, {}, TimeCommand, "Returns the server time.",
      "2.6.0", "O(1)", "", {"nondeterministic_output"});
  add("shutdown", -1, kAdmin | kCmdAllowBusy | kCmdNoMulti, {}, ShutdownCommand,
      "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0",
      "O(N) when saving, where N is the total number of keys in all databases when saving data, "
      "otherwise O(1)",
      "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]");
  Command* memory =
      add("memory", -2, 0, {}, nullptr, "A container for memory diagnostics commands.", "4.0.0",
          "Depends on subcommand.", "");
  add.Sub(memory, "usage", -3, kCmdReadonly | kCmdNoTouch, {KeyAt(2, kKeyRO)}, MemoryUsageCommand,
          "Estimates the memory usage of a key.", "4.0.0", "O(N) where N is the number of samples.",
          "key [SAMPLES count]");
  add.Sub(memory, "stats", 2, 0, {}, MemoryStatsCommand, "Returns details about memory usage.",
          "4.0.0", "O(1)", "",
          {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"});
  add.Sub(memory, "doctor", 2, 0, {}, MemoryDoctorCommand, "Outputs a memory problems report.",
          "4.0.0", "O(1)", "",
          {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"});
  add.Sub(memory, "malloc-stats", 2, 0, {}, MemoryMallocStatsCommand,
          "Returns the allocator statistics.", "4.0.0",
          "Depends on how much memory is allocated, could be slow", "",
          {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"});
  add.Sub(memory, "purge", 2, 0, {}, MemoryPurgeCommand, "Asks the allocator to release memory.",
          "4.0.0", "Depends on how much memory is allocated, could be slow", "",
          {"request_policy:all_shards", "response_policy:all_succeeded"});
  add.Sub(memory, "help", 2, kCmdLoading | kCmdStale, {}, MemoryHelpCommand,
          "Returns helpful text about the different subcommands.", "4.0.0", "O(1)", "");
  Command* slowlog = add("slowlog", -2, 0, {}, nullptr, "A container for slow log commands.",
                         "2.2.12", "Depends on subcommand.", "");
  add.Sub(slowlog, "get", -2, kCmdAdmin | kCmdLoading | kCmdStale, {}, SlowlogGetCommand,
          "Returns the slow log's entries.", "2.2.12",
          "O(N) where N is the number of entries returned", "[count]",
          {"request_policy:all_nodes", "nondeterministic_output"});
  add.Sub(slowlog, "len", 2, kCmdAdmin | kCmdLoading | kCmdStale, {}, SlowlogLenCommand,
          "Returns the number of entries in the slow log.", "2.2.12", "O(1)", "",
          {"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"});
  add.Sub(slowlog, "reset", 2, kCmdAdmin | kCmdLoading | kCmdStale, {}, SlowlogResetCommand,
          "Clears all entries from the slow log.", "2.2.12",
          "O(N) where N is the number of entries in the slowlog", "",
          {"request_policy:all_nodes", "response_policy:all_succeeded"});
  add.Sub(slowlog, "help", 2, kCmdLoading | kCmdStale, {}, SlowlogHelpCommand,
          "Show helpful text about the different subcommands", "6.2.0", "O(1)", "");
  Command* latency =
      add("latency", -2, 0, {}, nullptr, "A container for latency diagnostics commands.", "2.8.13",
          "Depends on subcommand.", "");
  add.Sub(latency, "latest", 2, kAdmin, {}, LatencyLatestCommand,
          "Returns the latest latency samples for all events.", "2.8.13", "O(1)", "",
          {"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"});
  add.Sub(latency, "history", 3, kAdmin, {}, LatencyHistoryCommand,
          "Returns timestamp-latency samples for an event.", "2.8.13", "O(1)", "event",
          {"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"});
  add.Sub(latency, "reset", -2, kAdmin, {}, LatencyResetCommand,
          "Resets the latency data for one or more events.", "2.8.13", "O(1)",
          "[event [event ...]]", {"request_policy:all_nodes", "response_policy:all_succeeded"});
  add.Sub(latency, "doctor", 2, kAdmin, {}, LatencyDoctorCommand,
          "Returns a human-readable latency analysis report.", "2.8.13", "O(1)", "",
          {"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"});
  add.Sub(latency, "graph", 3, kAdmin, {}, LatencyGraphCommand,
          "Returns a latency graph for an event.", "2.8.13", "O(1)", "event",
          {"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"});
  add.Sub(latency, "histogram", -2, kAdmin, {}, LatencyHistogramCommand,
          "Returns the cumulative distribution of latencies of a subset or all commands.", "7.0.0",
          "O(N) where N is the number of commands with latency information being retrieved.",
          "[command [command ...]]",
          {"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"});
  add.Sub(latency, "help", 2, kCmdLoading | kCmdStale, {}, LatencyHelpCommand,
          "Returns helpful text about the different subcommands.", "2.8.13", "O(1)", "");
  add("debug", -2, kAdmin | kCmdProtected, {}, DebugCommand, "A container for debugging commands.",
      "1.0.0", "Depends on subcommand.", "subcommand [argument ...]");
  Command* module = add("module", -2, 0, {}, nullptr, "A container for module commands.", "4.0.0",
                        "Depends on subcommand.", "");
  add.Sub(module, "list", 2, kCmdAdmin | kCmdNoscript, {}, ModuleListCommand,
          "Returns all loaded modules.", "4.0.0", "O(N) where N is the number of loaded modules.",
          "", {"nondeterministic_output_order"});
  add.Sub(module, "load", -3, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdProtected, {},
          ModuleLoadCommand, "Loads a module.", "4.0.0", "O(1)", "path [arg [arg ...]]");
  add.Sub(module, "loadex", -3, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdProtected, {},
          ModuleLoadCommand, "Loads a module using extended parameters.", "7.0.0", "O(1)",
          "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]");
  add.Sub(module, "unload", 3, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdProtected, {},
          ModuleUnloadCommand, "Unloads a module.", "4.0.0", "O(1)", "name");
  add.Sub(module, "help", 2, kCmdLoading | kCmdStale, {}, ModuleHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
}

}  // namespace goblin
