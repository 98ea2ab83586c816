// The server log: Redis's line format ("pid:M 30 Nov 2026 02:10:00.123 * message") to
// stdout or the configured logfile, filtered by loglevel. The letter after the pid is the
// writer's role, as Redis's: M a master, S a replica, C a child process (a BGSAVE, a
// rewrite), and C too before the server named its own process.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace goblin {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3, kNothing = 4 };

void SetLogLevel(std::string_view level);
void SetLogFile(const std::string& path);  // "" means stdout
// The server's own process: lines from any other (a forked child) carry C.
void SetLogProcess(pid_t pid);
// Whether the server is a replica (S) or a master (M) from now on.
void SetLogReplica(bool replica);
void Log(LogLevel level, std::string_view message);
inline void LogVerbose(std::string_view message) { Log(LogLevel::kVerbose, message); }
inline void LogNotice(std::string_view message) { Log(LogLevel::kNotice, message); }
inline void LogWarning(std::string_view message) { Log(LogLevel::kWarning, message); }

// For the crash report (crash_report.h), which may neither lock nor allocate: the log's file
// descriptor, and the start of a warning line ("pid:M 30 Nov 2026 02:10:00.123 # ") written
// into out (at most size bytes, no terminator). Its time is in the UTC offset the process had
// when the log was opened: reading the time zone again takes a lock.
int LogFileDescriptor();
size_t FormatSignalSafeLogPrefix(char* out, size_t size);

}  // namespace goblin
