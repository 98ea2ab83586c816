// INFO: the sections clients and dashboards read, with Redis's field names.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/string_number.h"
#include "core/version.h"
#include "server/failover.h"
#include "server/master_link.h"
#include "server/memory_stats.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/script_runner.h"

namespace goblin {
namespace {

// Redis's bytesToHuman: "1023B", "1.00K", "12.34M", ...
std::string BytesToHuman(double bytes) {
  static const char* kUnits[] = {"B", "K", "M", "G", "T", "P", "E"};
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(bytes));
    return buf;
  }
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof(buf), "%.2f%s", bytes, kUnits[unit]);
  return buf;
}

std::string Fixed(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", value);
  return buf;
}

class InfoWriter {
 public:
  void Section(std::string_view name) {
    if (!text_.empty()) text_ += "\r\n";
    text_ += "# ";
    text_ += name;
    text_ += "\r\n";
  }
  void Field(std::string_view name, std::string_view value) {
    text_.append(name).append(":").append(value).append("\r\n");
  }
  void Field(std::string_view name, int64_t value) { Field(name, Int64ToString(value)); }
  void Field(std::string_view name, uint64_t value) { Field(name, std::to_string(value)); }
  std::string& text() { return text_; }

 private:
  std::string text_;
};

void ServerSection(CommandContext& ctx, InfoWriter& w) {
  Server& s = ctx.server;
  utsname name{};
  uname(&name);
  w.Section("Server");
  w.Field("redis_version", kRedisVersion);
  w.Field("goblin_version", kGoblinVersion);
  w.Field("redis_git_sha1", "00000000");
  w.Field("redis_git_dirty", "0");
  w.Field("redis_build_id", "0");
  w.Field("redis_mode", ctx.server.cluster_mode != nullptr ? "cluster" : "standalone");
  w.Field("os", std::string(name.sysname) + " " + name.release + " " + name.machine);
  w.Field("arch_bits", "64");
  w.Field("monotonic_clock", "POSIX clock_gettime");
  w.Field("multiplexing_api", "epoll");
  w.Field("atomicvar_api", "c11-builtin");
  w.Field("gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                             std::to_string(__GNUC_PATCHLEVEL__));
  w.Field("process_id", static_cast<int64_t>(s.pid));
  w.Field("process_supervised", "no");
  w.Field("run_id", s.run_id);
  w.Field("tcp_port", static_cast<int64_t>(s.config.port));
  w.Field("server_time_usec", ctx.now_ms * 1000);
  w.Field("uptime_in_seconds", s.UptimeSeconds());
  w.Field("uptime_in_days", s.UptimeSeconds() / 86400);
  w.Field("hz", s.config.hz);
  w.Field("configured_hz", s.config.hz);
  w.Field("lru_clock", (ctx.now_ms / 1000) & ((1 << 24) - 1));
  w.Field("executable", s.executable);
  w.Field("config_file", s.config.config_file);
  w.Field("io_threads_active", "0");
}

void ClientsSection(CommandContext& ctx, InfoWriter& w) {
  std::vector<Client*> clients = ctx.server.ClientsById();
  size_t biggest_input = 0, biggest_output = 0;
  int64_t subscribers = 0, watchers = 0, in_timeout_table = 0;
  std::set<std::pair<int, std::string>> watched_keys, blocking_keys;
  for (Client* c : clients) {
    biggest_input = std::max(biggest_input, c->input.size());
    biggest_output = std::max(biggest_output, c->output.size());
    subscribers += c->subscribed() ? 1 : 0;
    watchers += c->watched.empty() ? 0 : 1;
    watched_keys.insert(c->watched.begin(), c->watched.end());
    if (c->blocked) {
      in_timeout_table += c->block.deadline_ms != 0 ? 1 : 0;
      for (const std::string& key : c->block.keys) blocking_keys.emplace(c->block.db, key);
    }
  }
  w.Section("Clients");
  w.Field("connected_clients", static_cast<int64_t>(clients.size()));
  w.Field("cluster_connections", "0");
  w.Field("maxclients", ctx.server.config.maxclients);
  w.Field("client_recent_max_input_buffer", static_cast<int64_t>(biggest_input));
  w.Field("client_recent_max_output_buffer", static_cast<int64_t>(biggest_output));
  w.Field("blocked_clients", ctx.server.stats.blocked_clients);
  w.Field("tracking_clients", static_cast<int64_t>(ctx.server.tracking.clients()));
  w.Field("pubsub_clients", subscribers);
  w.Field("watching_clients", watchers);
  w.Field("clients_in_timeout_table", in_timeout_table);
  w.Field("total_watched_keys", static_cast<int64_t>(watched_keys.size()));
  w.Field("total_blocking_keys", static_cast<int64_t>(blocking_keys.size()));
  w.Field("total_blocking_keys_on_nokey", "0");
}

void MemorySection(CommandContext& ctx, InfoWriter& w) {
  Server& s = ctx.server;
  size_t used = s.UsedMemory();
  size_t rss = ResidentBytes();
  size_t peak = s.PeakMemory();
  size_t active = AllocatorActiveBytes();
  size_t resident = AllocatorResidentBytes();
  long pages = sysconf(_SC_PHYS_PAGES);
  size_t system =
      pages > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
  size_t tables = 0;
  for (size_t i = 0; i < s.database_count(); ++i) tables += s.db(static_cast<int>(i)).TableBytes();
  size_t overhead = tables;
  auto ratio = [](size_t a, size_t b) {
    return b ? Fixed(static_cast<double>(a) / static_cast<double>(b)) : std::string("0.00");
  };
  w.Section("Memory");
  w.Field("used_memory", static_cast<uint64_t>(used));
  w.Field("used_memory_human", BytesToHuman(static_cast<double>(used)));
  w.Field("used_memory_rss", static_cast<uint64_t>(rss));
  w.Field("used_memory_rss_human", BytesToHuman(static_cast<double>(rss)));
  w.Field("used_memory_peak", static_cast<uint64_t>(peak));
  w.Field("used_memory_peak_human", BytesToHuman(static_cast<double>(peak)));
  w.Field("used_memory_peak_perc",
          (peak ? Fixed(100.0 * static_cast<double>(used) / static_cast<double>(peak))
                : std::string("0.00")) +
              "%");
  w.Field("used_memory_overhead", static_cast<uint64_t>(overhead));
  w.Field("used_memory_startup", "0");
  w.Field("used_memory_dataset", static_cast<uint64_t>(used > overhead ? used - overhead : 0));
  w.Field("used_memory_dataset_perc",
          (used ? Fixed(100.0 * static_cast<double>(used > overhead ? used - overhead : 0) /
                        static_cast<double>(used))
                : std::string("0.00")) +
              "%");
  w.Field("allocator_allocated", static_cast<uint64_t>(used));
  w.Field("allocator_active", static_cast<uint64_t>(active));
  w.Field("allocator_resident", static_cast<uint64_t>(resident));
  w.Field("total_system_memory", static_cast<uint64_t>(system));
  w.Field("total_system_memory_human", BytesToHuman(static_cast<double>(system)));
  // The interpreters' own memory (vm) and the bytes of the cached scripts and libraries.
  ScriptRunner& scripts = *s.scripts;
  const uint64_t vm_eval = scripts.eval.vm().MemoryBytes();
  const uint64_t vm_functions = scripts.functions.vm().MemoryBytes();
  const uint64_t scripts_eval = scripts.eval.CacheBytes();
  const uint64_t functions = scripts.functions.LibraryBytes();
  w.Field("used_memory_lua", vm_eval);
  w.Field("used_memory_vm_eval", vm_eval);
  w.Field("used_memory_lua_human", BytesToHuman(static_cast<double>(vm_eval)));
  w.Field("used_memory_scripts_eval", scripts_eval);
  w.Field("number_of_cached_scripts", static_cast<uint64_t>(scripts.eval.size()));
  w.Field("number_of_functions", static_cast<uint64_t>(scripts.functions.function_count()));
  w.Field("number_of_libraries", static_cast<uint64_t>(scripts.functions.libraries().size()));
  w.Field("used_memory_vm_functions", vm_functions);
  w.Field("used_memory_vm_total", vm_eval + vm_functions);
  w.Field("used_memory_vm_total_human", BytesToHuman(static_cast<double>(vm_eval + vm_functions)));
  w.Field("used_memory_functions", functions);
  w.Field("used_memory_scripts", scripts_eval + functions);
  w.Field("used_memory_scripts_human", BytesToHuman(static_cast<double>(scripts_eval + functions)));
  w.Field("maxmemory", s.config.maxmemory);
  w.Field("maxmemory_human", BytesToHuman(static_cast<double>(s.config.maxmemory)));
  w.Field("maxmemory_policy", s.config.maxmemory_policy);
  w.Field("allocator_frag_ratio", ratio(active, used));
  w.Field("allocator_frag_bytes", static_cast<int64_t>(active) - static_cast<int64_t>(used));
  w.Field("allocator_rss_ratio", ratio(resident, active));
  w.Field("allocator_rss_bytes", static_cast<int64_t>(resident) - static_cast<int64_t>(active));
  w.Field("rss_overhead_ratio", ratio(rss, resident));
  w.Field("rss_overhead_bytes", static_cast<int64_t>(rss) - static_cast<int64_t>(resident));
  w.Field("mem_fragmentation_ratio", ratio(rss, used));
  w.Field("mem_fragmentation_bytes", static_cast<int64_t>(rss) - static_cast<int64_t>(used));
  w.Field("mem_not_counted_for_evict", static_cast<uint64_t>(s.replication->ReplicaOutputBytes()));
  const size_t backlog = s.replication->BacklogBytes();
  const size_t replica_buffers = s.replication->ReplicaBufferBytes();
  w.Field("mem_replication_backlog", static_cast<uint64_t>(backlog));
  w.Field("mem_total_replication_buffers", static_cast<uint64_t>(backlog + replica_buffers));
  w.Field("mem_clients_slaves", static_cast<uint64_t>(replica_buffers));
  size_t client_memory = 0;
  for (Client* c : s.ClientsById()) {
    if (!c->is_replica()) client_memory += ClientMemory(*c);
  }
  w.Field("mem_clients_normal", static_cast<uint64_t>(client_memory));
  w.Field("mem_cluster_links", "0");
  w.Field("mem_aof_buffer", "0");
  w.Field("mem_allocator", AllocatorName());
  w.Field("active_defrag_running", "0");
  w.Field("lazyfree_pending_objects", "0");
  w.Field("lazyfreed_objects", "0");
}

void PersistenceSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Persistence");
  for (const auto& [name, value] : ctx.server.persistence->InfoFields(ctx.now_ms)) {
    w.Field(name, value);
  }
}

void StatsSection(CommandContext& ctx, InfoWriter& w) {
  const ServerStats& st = ctx.server.stats;
  double ops = 0;
  for (double sample : st.ops_samples) ops += sample;
  ops /= 16;
  w.Section("Stats");
  w.Field("total_connections_received", st.total_connections_received);
  w.Field("total_commands_processed", st.total_commands_processed);
  w.Field("instantaneous_ops_per_sec", static_cast<int64_t>(ops));
  w.Field("total_net_input_bytes", st.net_input_bytes);
  w.Field("total_net_output_bytes", st.net_output_bytes);
  w.Field("total_net_repl_input_bytes", "0");
  w.Field("total_net_repl_output_bytes", st.net_repl_output_bytes);
  w.Field("instantaneous_input_kbps", "0.00");
  w.Field("instantaneous_output_kbps", "0.00");
  w.Field("instantaneous_input_repl_kbps", "0.00");
  w.Field("instantaneous_output_repl_kbps", "0.00");
  w.Field("rejected_connections", st.rejected_connections);
  const ReplicationStats& repl = ctx.server.replication->stats();
  w.Field("sync_full", repl.sync_full);
  w.Field("sync_partial_ok", repl.sync_partial_ok);
  w.Field("sync_partial_err", repl.sync_partial_err);
  w.Field("expired_keys", st.keyspace.expired_keys);
  w.Field("expired_stale_perc", "0.00");
  w.Field("expired_time_cap_reached_count", "0");
  w.Field("expire_cycle_cpu_milliseconds", "0");
  w.Field("evicted_keys", ctx.server.evictor.evicted_keys());
  w.Field("evicted_clients", ctx.server.stats.evicted_clients);
  w.Field("total_eviction_exceeded_time", ctx.server.evictor.TotalExceededMs());
  w.Field("current_eviction_exceeded_time", ctx.server.evictor.CurrentExceededMs());
  w.Field("keyspace_hits", st.keyspace.keyspace_hits);
  w.Field("keyspace_misses", st.keyspace.keyspace_misses);
  const PubSub& pubsub = ctx.server.pubsub;
  w.Field("pubsub_channels", static_cast<uint64_t>(pubsub.Count(PubSub::kChannel)));
  w.Field("pubsub_patterns", static_cast<uint64_t>(pubsub.Count(PubSub::kPattern)));
  w.Field("pubsubshard_channels", static_cast<uint64_t>(pubsub.Count(PubSub::kShard)));
  w.Field("latest_fork_usec", "0");
  w.Field("total_forks", "0");
  w.Field("migrate_cached_sockets", static_cast<uint64_t>(ctx.server.migrate_connections.size()));
  w.Field("slave_expires_tracked_keys", "0");
  w.Field("active_defrag_hits", "0");
  w.Field("active_defrag_misses", "0");
  w.Field("active_defrag_key_hits", "0");
  w.Field("active_defrag_key_misses", "0");
  w.Field("total_active_defrag_time", "0");
  w.Field("current_active_defrag_time", "0");
  w.Field("tracking_total_keys", static_cast<int64_t>(ctx.server.tracking.keys()));
  w.Field("tracking_total_items", static_cast<int64_t>(ctx.server.tracking.items()));
  w.Field("tracking_total_prefixes", static_cast<int64_t>(ctx.server.tracking.prefixes()));
  w.Field("unexpected_error_replies", st.unexpected_error_replies);
  w.Field("total_error_replies", st.total_error_replies);
  w.Field("dump_payload_sanitizations", "0");
  w.Field("total_reads_processed", st.total_reads_processed);
  w.Field("total_writes_processed", st.total_writes_processed);
  w.Field("io_threaded_reads_processed", "0");
  w.Field("io_threaded_writes_processed", "0");
  w.Field("client_query_buffer_limit_disconnections", st.client_query_buffer_limit_disconnections);
  w.Field("client_output_buffer_limit_disconnections",
          st.client_output_buffer_limit_disconnections);
  w.Field("reply_buffer_shrinks", st.reply_buffer_shrinks);
  w.Field("reply_buffer_expands", "0");
  const acl::AccessControl::Counters& denied = ctx.server.acl.denied();
  w.Field("acl_access_denied_auth", denied.auth);
  w.Field("acl_access_denied_cmd", denied.command);
  w.Field("acl_access_denied_key", denied.key);
  w.Field("acl_access_denied_channel", denied.channel);
}

void ReplicationSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Replication");
  const Replication& replication = *ctx.server.replication;
  const std::vector<Client*> replicas = replication.Replicas();
  const MasterLink& link = *ctx.server.master_link;
  const Config& config = ctx.server.config;
  if (!link.is_replica()) {
    w.Field("role", "master");
  } else {
    w.Field("role", "slave");
    w.Field("master_host", link.master().host);
    w.Field("master_port", link.master().port);
    w.Field("master_link_status", link.connected() ? "up" : "down");
    w.Field("master_last_io_seconds_ago", link.last_io_seconds_ago(ctx.now_ms));
    w.Field("master_sync_in_progress", link.sync_in_progress() ? "1" : "0");
    w.Field("slave_read_repl_offset", link.read_offset());
    w.Field("slave_repl_offset", link.applied_offset());
    if (link.sync_in_progress()) {
      const int64_t size = link.transfer_size();
      const auto read = static_cast<int64_t>(link.transfer_read());
      char perc[32];
      std::snprintf(perc, sizeof(perc), "%.2f",
                    size > 0 ? static_cast<double>(read) / static_cast<double>(size) * 100 : 0.0);
      w.Field("master_sync_total_bytes", size);
      w.Field("master_sync_read_bytes", read);
      w.Field("master_sync_left_bytes", size - read);
      w.Field("master_sync_perc", perc);
      w.Field("master_sync_last_io_seconds_ago", (ctx.now_ms - link.transfer_last_io_ms()) / 1000);
    }
    if (!link.connected()) {
      w.Field("master_link_down_since_seconds", link.down_since_seconds(ctx.now_ms));
    }
    w.Field("slave_priority", config.replica_priority);
    w.Field("slave_read_only", config.replica_read_only ? "1" : "0");
    w.Field("replica_announced", config.replica_announced ? "1" : "0");
  }
  w.Field("connected_slaves", static_cast<uint64_t>(replicas.size()));
  if (config.min_replicas_to_write > 0 && config.min_replicas_max_lag > 0) {
    w.Field("min_slaves_good_slaves", replication.GoodReplicas(ctx.now_ms));
  }
  for (size_t i = 0; i < replicas.size(); ++i) {
    const ReplicaLink& link = replicas[i]->replica;
    const int64_t lag =
        link.state == ReplicaState::kOnline ? ctx.now_ms / 1000 - link.ack_time_ms / 1000 : 0;
    w.Field("slave" + std::to_string(i),
            "ip=" + Replication::ReplicaIp(*replicas[i]) +
                ",port=" + std::to_string(link.listening_port) +
                ",state=" + std::string(Replication::StateName(link.state)) +
                ",offset=" + std::to_string(link.ack_offset) + ",lag=" + std::to_string(lag));
  }
  const ReplBacklog* backlog = replication.backlog();
  w.Field("master_failover_state", ctx.server.failover->StateName());
  w.Field("master_replid", ctx.server.replication_id);
  w.Field("master_replid2", replication.replid2());
  w.Field("master_repl_offset", replication.offset());
  w.Field("second_repl_offset", replication.second_offset());
  w.Field("repl_backlog_active", backlog != nullptr ? "1" : "0");
  w.Field("repl_backlog_size", ctx.server.config.repl_backlog_size);
  w.Field("repl_backlog_first_byte_offset", backlog != nullptr ? backlog->first_offset() : 0);
  w.Field("repl_backlog_histlen", static_cast<uint64_t>(backlog != nullptr ? backlog->size() : 0));
}

void CpuSection(CommandContext&, InfoWriter& w) {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& t) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(t.tv_sec),
                  static_cast<long>(t.tv_usec));
    return std::string(buf);
  };
  w.Section("CPU");
  w.Field("used_cpu_sys", seconds(self.ru_stime));
  w.Field("used_cpu_user", seconds(self.ru_utime));
  w.Field("used_cpu_sys_children", seconds(children.ru_stime));
  w.Field("used_cpu_user_children", seconds(children.ru_utime));
  w.Field("used_cpu_sys_main_thread", seconds(self.ru_stime));
  w.Field("used_cpu_user_main_thread", seconds(self.ru_utime));
}

void ModulesSection(CommandContext&, InfoWriter& w) { w.Section("Modules"); }

void CommandstatsSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Commandstats");
  auto emit = [&w](const Command& command) {
    const CommandStats& st = command.stats;
    if (st.calls == 0 && st.rejected_calls == 0 && st.failed_calls == 0) return;
    double per_call = st.calls ? static_cast<double>(st.usec) / static_cast<double>(st.calls) : 0;
    w.Field("cmdstat_" + command.name, "calls=" + std::to_string(st.calls) +
                                           ",usec=" + std::to_string(st.usec) +
                                           ",usec_per_call=" + Fixed(per_call) +
                                           ",rejected_calls=" + std::to_string(st.rejected_calls) +
                                           ",failed_calls=" + std::to_string(st.failed_calls));
  };
  for (const Command* command : ctx.server.commands.All()) {
    emit(*command);
    for (const auto& sub : command->subcommands) emit(*sub);
  }
}

void ErrorstatsSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Errorstats");
  for (const auto& [prefix, count] : ctx.server.stats.error_counts) {
    w.Field("errorstat_" + prefix, "count=" + std::to_string(count));
  }
}

// Percentiles of each command's latency histogram, in microseconds with three decimals;
// only the header while latency-tracking is off.
void LatencystatsSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Latencystats");
  if (!ctx.server.config.latency_tracking) return;
  const std::vector<double>& percentiles = ctx.server.config.latency_tracking_info_percentiles;
  auto emit = [&w, &percentiles](const Command& command) {
    if (!command.stats.latency) return;
    std::string value;
    for (double percentile : percentiles) {
      char micros[64];
      std::snprintf(
          micros, sizeof(micros), "%.3f",
          static_cast<double>(command.stats.latency->ValueAtPercentile(percentile)) / 1000.0);
      if (!value.empty()) value += ',';
      value += "p" + FormatPercentile(percentile) + "=" + micros;
    }
    w.Field("latency_percentiles_usec_" + command.name, value);
  };
  for (const Command* command : ctx.server.commands.All()) {
    emit(*command);
    for (const auto& sub : command->subcommands) emit(*sub);
  }
}

void ClusterSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Cluster");
  w.Field("cluster_enabled", ctx.server.cluster_mode != nullptr ? "1" : "0");
}

void KeyspaceSection(CommandContext& ctx, InfoWriter& w) {
  w.Section("Keyspace");
  for (size_t i = 0; i < ctx.server.database_count(); ++i) {
    Database& db = ctx.server.db(static_cast<int>(i));
    if (db.size() == 0) continue;
    w.Field("db" + std::to_string(i), "keys=" + std::to_string(db.size()) + ",expires=" +
                                          std::to_string(db.expires()) + ",avg_ttl=0");
  }
}

struct InfoSection {
  const char* name;
  void (*write)(CommandContext&, InfoWriter&);
  bool in_default;
  bool in_all;
};

constexpr InfoSection kSections[] = {
    {"server", ServerSection, true, true},
    {"clients", ClientsSection, true, true},
    {"memory", MemorySection, true, true},
    {"persistence", PersistenceSection, true, true},
    {"stats", StatsSection, true, true},
    {"replication", ReplicationSection, true, true},
    {"cpu", CpuSection, true, true},
    {"modules", ModulesSection, true, false},
    {"commandstats", CommandstatsSection, false, true},
    {"errorstats", ErrorstatsSection, true, true},
    {"latencystats", LatencystatsSection, false, true},
    {"cluster", ClusterSection, true, true},
    {"keyspace", KeyspaceSection, true, true},
};

void InfoCommand(CommandContext& ctx) {
  std::set<std::string> wanted;
  bool everything = false, all = false, defaults = ctx.argc() == 1;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string name(ctx.arg(i));
    name = AsciiLower(name);
    if (name == "everything")
      everything = true;
    else if (name == "all")
      all = true;
    else if (name == "default")
      defaults = true;
    else
      wanted.insert(name);
  }
  InfoWriter writer;
  for (const InfoSection& section : kSections) {
    bool include = everything || (all && section.in_all) || (defaults && section.in_default) ||
                   wanted.count(section.name);
    if (include) section.write(ctx, writer);
  }
  ctx.reply.Verbatim(writer.text());
}

}  // namespace

void RegisterInfoCommand(CommandTable* table) {
  CommandAdder add{table, "server"};
  add.In(kAclDangerous)(
      "info", -1, kCmdLoading | kCmdStale, {}, InfoCommand,
      "Returns information and statistics about the server.", "1.0.0", "O(1)",
      "[section [section ...]]",
      {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"});
}

}  // namespace goblin
