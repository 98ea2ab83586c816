#include "server/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>

namespace goblin {
namespace {

LogLevel g_level = LogLevel::kNotice;
FILE* g_file = nullptr;
std::atomic<pid_t> g_server_pid{0};
std::atomic<bool> g_replica{false};

}  // namespace

void SetLogLevel(std::string_view level) {
  if (level == "debug")
    g_level = LogLevel::kDebug;
  else if (level == "verbose")
    g_level = LogLevel::kVerbose;
  else if (level == "notice")
    g_level = LogLevel::kNotice;
  else if (level == "warning")
    g_level = LogLevel::kWarning;
  else
    g_level = LogLevel::kNothing;
}

void SetLogFile(const std::string& path) {
  if (g_file != nullptr && g_file != stdout) std::fclose(g_file);
  g_file = path.empty() ? stdout : std::fopen(path.c_str(), "a");
  if (g_file == nullptr) g_file = stdout;
}

void SetLogProcess(pid_t pid) { g_server_pid.store(pid); }

void SetLogReplica(bool replica) { g_replica.store(replica); }

void Log(LogLevel level, std::string_view message) {
  if (level < g_level || g_level == LogLevel::kNothing) return;
  FILE* out = g_file != nullptr ? g_file : stdout;
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[64];
  size_t n = std::strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &local);
  std::snprintf(stamp + n, sizeof(stamp) - n, ".%03d", static_cast<int>(now.tv_usec / 1000));
  static const char kMarks[] = ".-*#";
  const pid_t pid = getpid();
  const char role = pid != g_server_pid.load() ? 'C' : g_replica.load() ? 'S' : 'M';
  std::fprintf(out, "%d:%c %s %c %.*s\n", static_cast<int>(pid), role, stamp,
               kMarks[static_cast<int>(level)], static_cast<int>(message.size()), message.data());
  std::fflush(out);
}

}  // namespace goblin
