// goblin-server [config-file] [--option value ...]: redis-server's command line.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands/families.h"
#include "core/hashing.h"
#include "core/version.h"
#include "keyspace/database.h"
#include "persist/rdb_loader.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"
#include "persist/snapshot_format.h"
#include "persist/snapshot_loader.h"
#include "server/cycle_clock.h"
#include "server/encoding_limits.h"
#include "server/log.h"
#include "server/memory_stats.h"
#include "server/server.h"

#ifdef GOBLIN_HAVE_JEMALLOC
// jemalloc reads this at startup. Background threads return freed pages to the kernel off
// the serving thread; without them a free inside a command can stall it for milliseconds
// (seen at 4-5 ms while a sorted set grew). Redis enables the same (jemalloc-bg-thread yes).
extern "C" {
const char* malloc_conf = "background_thread:true";
}
#endif

namespace {

// The first bytes of path (fewer when it is shorter); false when it cannot be read.
bool ReadHead(const std::string& path, char* head, size_t size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, head, size);
  close(fd);
  return n == static_cast<ssize_t>(size);
}

// --check-snapshot of a Redis RDB file: loaded whole into scratch databases, keeping every key
// (expired ones too) so that the count is the file's.
int CheckRdb(const std::string& path, const std::vector<goblin::Database*>& dbs,
             bool list_sections) {
  using namespace goblin;
  RdbLoadOptions options;
  options.skip_expired = false;
  RdbLoadStats stats;
  bool missing = false;
  std::string error;
  if (!LoadRdbFile(path, dbs, options, &stats, &missing, &error)) {
    std::fprintf(stderr, "%s\n",
                 missing ? (path + ": offset 0: no such file").c_str() : error.c_str());
    return 1;
  }
  if (list_sections) std::printf("an RDB file has no sections\n");
  const std::string creator = stats.Aux("redis-ver");
  std::printf("OK %s: %llu keys, %zu function libraries, %llu bytes, RDB version %u%s%s%s\n",
              path.c_str(), static_cast<unsigned long long>(stats.keys_read + stats.keys_empty),
              stats.libraries.size(), static_cast<unsigned long long>(stats.bytes), stats.version,
              creator.empty() ? "" : ", written by Redis ", creator.c_str(),
              stats.checksum_verified ? "" : " (no checksum)");
  return 0;
}

// goblin-server --check-snapshot FILE [--sections] [--databases N]: verifies a snapshot (Goblin's
// or a Redis RDB file) offline by loading it completely into scratch databases (every check of
// the loader runs).
int CheckSnapshot(int argc, char** argv) {
  using namespace goblin;
  std::string path = argv[2];
  bool list_sections = false;
  int64_t databases = 16;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sections") == 0) {
      list_sections = true;
    } else if (std::strcmp(argv[i], "--databases") == 0 && i + 1 < argc) {
      databases = std::max<int64_t>(1, std::atoll(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: goblin-server --check-snapshot FILE [--sections] "
                   "[--databases N]\n");
      return 2;
    }
  }
  std::vector<Database> storage(static_cast<size_t>(databases));
  std::vector<Database*> dbs;
  for (Database& db : storage) dbs.push_back(&db);
  if (char head[5] = {}; ReadHead(path, head, sizeof(head)) && IsRdbFile({head, sizeof(head)})) {
    return CheckRdb(path, dbs, list_sections);
  }
  SnapshotLoadStats stats;
  std::vector<SnapshotSection> sections;
  bool missing = false;
  std::string error;
  const bool ok = LoadSnapshotFile(path, dbs, EncodingLimits{}, /*now_ms=*/0, nullptr, nullptr,
                                   &stats, &sections, &missing, &error);
  if (list_sections) {
    for (const SnapshotSection& section : sections) {
      std::printf("section %llu %llu %s\n", static_cast<unsigned long long>(section.offset),
                  static_cast<unsigned long long>(section.length),
                  snapshot::SectionKindName(static_cast<uint8_t>(section.kind)));
    }
  }
  if (missing) {
    std::fprintf(stderr, "%s: offset 0: no such file\n", path.c_str());
    return 1;
  }
  if (!ok) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::printf("OK %s: %llu keys, %zu sections, %llu bytes, written by %s\n", path.c_str(),
              static_cast<unsigned long long>(stats.keys_read), sections.size(),
              static_cast<unsigned long long>(stats.bytes), stats.creator.c_str());
  return 0;
}

// goblin-server --export-rdb SNAPSHOT OUT.rdb [config-file] [--option value ...]: converts a
// Goblin snapshot (or an RDB file of any version) into Redis's RDB version 10 offline. The options
// are the server's (databases, the encoding limits, rdbcompression, rdbchecksum,
// stream-node-max-*): values take the forms they give. Every key is kept, expired or not (a loading
// Redis drops those whose deadline has passed).
int ExportRdb(int argc, char** argv) {
  using namespace goblin;
  if (argc < 4 || std::strncmp(argv[2], "--", 2) == 0 || std::strncmp(argv[3], "--", 2) == 0) {
    std::fprintf(stderr,
                 "usage: goblin-server --export-rdb SNAPSHOT OUT.rdb [config-file] "
                 "[--option value ...]\n");
    return 2;
  }
  const std::string input = argv[2];
  const std::string output = argv[3];
  Config config;
  ConfigRegistry registry(&config);
  std::vector<char*> options = {argv[0]};
  options.insert(options.end(), argv + 4, argv + argc);
  std::string error = registry.LoadCommandLine(static_cast<int>(options.size()), options.data());
  if (!error.empty()) {
    std::fprintf(stderr, "goblin-server --export-rdb: %s\n", error.c_str());
    return 2;
  }
  // Built on the heap and never freed: a converter that exits needs no teardown of millions of
  // elements. A sanitizer build frees it, so that its leak check reports only real leaks: the key
  // table keeps entries as packed, shifted addresses, which LeakSanitizer cannot follow, so a
  // table merely kept reachable would still read as leaked.
  auto* storage = new std::vector<Database>(static_cast<size_t>(config.databases));
#if defined(__SANITIZE_ADDRESS__)
  const std::unique_ptr<std::vector<Database>> freed_in_sanitizer_builds(storage);
#endif
  std::vector<Database*> dbs;
  std::vector<const Database*> const_dbs;
  for (Database& db : *storage) {
    dbs.push_back(&db);
    const_dbs.push_back(&db);
  }
  // The input may be an RDB file too (rewritten with these limits, as version 10).
  std::vector<std::string> loaded_libraries;
  bool missing = false;
  bool ok;
  if (char head[5] = {}; ReadHead(input, head, sizeof(head)) && IsRdbFile({head, sizeof(head)})) {
    RdbLoadOptions options;
    options.limits = EncodingLimitsOf(config);
    options.skip_expired = false;
    RdbLoadStats stats;
    ok = LoadRdbFile(input, dbs, options, &stats, &missing, &error);
    loaded_libraries = std::move(stats.libraries);
  } else {
    SnapshotLoadStats stats;
    ok = LoadSnapshotFile(input, dbs, EncodingLimitsOf(config), /*now_ms=*/0, nullptr, nullptr,
                          &stats, nullptr, &missing, &error);
    loaded_libraries = std::move(stats.libraries);
  }
  if (!ok) {
    if (missing) error = input + ": no such file";
    std::fprintf(stderr, "goblin-server --export-rdb: %s\n", error.c_str());
    return 1;
  }
  RdbWriteOptions rdb;
  rdb.limits = EncodingLimitsOf(config);
  rdb.compress = config.rdbcompression;
  rdb.checksum = config.rdbchecksum;
  rdb.used_memory = AllocatedBytes();
  const std::vector<std::string_view> libraries(loaded_libraries.begin(), loaded_libraries.end());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  SnapshotSaveStats written;
  if (!WriteRdbFile(const_dbs, libraries, output, now_ms, rdb, &written, &error)) {
    std::fprintf(stderr, "goblin-server --export-rdb: %s\n", error.c_str());
    return 1;
  }
  std::printf("OK %s: %llu keys, %zu function libraries, %llu bytes (RDB %u) from %s\n",
              output.c_str(), static_cast<unsigned long long>(written.keys), libraries.size(),
              static_cast<unsigned long long>(written.bytes),
              static_cast<unsigned>(kRdbVersionWritten), input.c_str());
  return 0;
}

void Daemonize() {
  if (fork() != 0) _exit(0);
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace goblin;
  if (argc == 2 && (std::strcmp(argv[1], "-v") == 0 || std::strcmp(argv[1], "--version") == 0)) {
    std::printf("Goblin server v=%s redis_version=%s bits=64\n", kGoblinVersion, kRedisVersion);
    return 0;
  }
  if (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf(
        "Usage: goblin-server [/path/to/redis.conf] [--option value ...]\n"
        "       goblin-server --check-snapshot FILE [--sections] [--databases N]\n"
        "       goblin-server --export-rdb SNAPSHOT OUT.rdb [config-file] [--option value ...]\n"
        "Options take redis-server's names, e.g. --port 6380 --unixsocket /tmp/g.sock\n");
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "--check-snapshot") == 0) {
    SetHashSeed(0x9e3779b97f4a7c15ULL);
    return CheckSnapshot(argc, argv);
  }
  if (argc >= 2 && std::strcmp(argv[1], "--export-rdb") == 0) {
    SetHashSeed(0x9e3779b97f4a7c15ULL);
    return ExportRdb(argc, argv);
  }
  Config config;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) config.dir = cwd;
  ConfigRegistry registry(&config);
  // `user` lines are checked against the command table as the file is read.
  CommandTable user_rules_table;
  RegisterAllCommands(&user_rules_table);
  registry.set_command_table(&user_rules_table);
  std::string error = registry.LoadCommandLine(argc, argv);
  registry.set_command_table(nullptr);
  if (!error.empty()) {
    std::fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Goblin %s) ***\n%s\n", kGoblinVersion,
                 error.c_str());
    return 1;
  }
  SetLogLevel(config.loglevel);
  if (config.daemonize) Daemonize();
  SetLogFile(config.logfile);
  std::random_device entropy;
  SetHashSeed((static_cast<uint64_t>(entropy()) << 32) | entropy());
  CycleClock::Calibrate();

  Server server(std::move(config));
  RegisterAllCommands(&server.commands);
  server.executable = argv[0];
  server.command_line.assign(argv, argv + argc);
  if (!server.config.pidfile.empty()) {
    std::ofstream(server.config.pidfile) << getpid() << "\n";
  }
  LogNotice(std::string("Goblin Core ") + kGoblinVersion + " (Redis " + kRedisVersion +
            " compatible), pid=" + std::to_string(getpid()));
  if (!registry.InertOptionsSet().empty()) {
    std::string names;
    for (const std::string& name : registry.InertOptionsSet()) {
      names += (names.empty() ? "" : ", ") + name;
    }
    LogNotice("Accepted for compatibility, with no effect in Goblin: " + names);
  }
  if (server.config.disable_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
    LogWarning(std::string("Unable to disable transparent huge pages: ") + std::strerror(errno));
  }
  server.UpdateOomScore();
  SetAllocatorBackgroundThreads(server.config.jemalloc_bg_thread);
  int code = server.Run();
  if (!server.config.pidfile.empty()) unlink(server.config.pidfile.c_str());
  return code;
}
