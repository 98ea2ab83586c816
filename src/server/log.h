// The server log: Redis's line format ("pid:M 30 Nov 2026 02:10:00.123 * message") to
// stdout or the configured logfile, filtered by loglevel.
#pragma once

#include <string>
#include <string_view>

namespace goblin {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3, kNothing = 4 };

void SetLogLevel(std::string_view level);
void SetLogFile(const std::string& path);  // "" means stdout
void Log(LogLevel level, std::string_view message);
inline void LogVerbose(std::string_view message) { Log(LogLevel::kVerbose, message); }
inline void LogNotice(std::string_view message) { Log(LogLevel::kNotice, message); }
inline void LogWarning(std::string_view message) { Log(LogLevel::kWarning, message); }

}  // namespace goblin
