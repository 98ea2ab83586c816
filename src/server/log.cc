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
long g_utc_offset_seconds = 0;  // local time minus UTC when the log was opened

// The writer's role letter, as described at the top of log.h.
char Role() { return getpid() != g_server_pid.load() ? 'C' : g_replica.load() ? 'S' : 'M'; }

// Appends the decimal digits of value, at least width of them, to out[*at...].
void AppendNumber(char* out, size_t size, size_t* at, long value, int width) {
  char digits[24];
  int n = 0;
  const bool negative = value < 0;
  unsigned long rest = negative ? 0UL - static_cast<unsigned long>(value) : value;
  do {
    digits[n++] = static_cast<char>('0' + rest % 10);
    rest /= 10;
  } while (rest != 0 || n < width);
  if (negative && *at < size) out[(*at)++] = '-';
  while (n > 0 && *at < size) out[(*at)++] = digits[--n];
}

void AppendText(char* out, size_t size, size_t* at, const char* text) {
  while (*text != '\0' && *at < size) out[(*at)++] = *text++;
}

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
  const time_t now = time(nullptr);
  tm local;
  localtime_r(&now, &local);
  g_utc_offset_seconds = local.tm_gmtoff;
}

int LogFileDescriptor() { return fileno(g_file != nullptr ? g_file : stdout); }

size_t FormatSignalSafeLogPrefix(char* out, size_t size) {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const long seconds = static_cast<long>(now.tv_sec) + g_utc_offset_seconds;
  // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
  long days = seconds / 86400;
  long of_day = seconds % 86400;
  if (of_day < 0) {
    of_day += 86400;
    --days;
  }
  days += 719468;
  const long era = (days >= 0 ? days : days - 146096) / 146097;
  const long day_of_era = days - era * 146097;
  const long year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const long month_index = (5 * day_of_year + 2) / 153;  // 0 is March
  const long day = day_of_year - (153 * month_index + 2) / 5 + 1;
  const long month = month_index < 10 ? month_index + 3 : month_index - 9;
  const long year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  size_t at = 0;
  AppendNumber(out, size, &at, static_cast<long>(getpid()), 1);
  if (at < size) out[at++] = ':';
  if (at < size) out[at++] = Role();
  if (at < size) out[at++] = ' ';
  AppendNumber(out, size, &at, day, 2);
  AppendText(out, size, &at, " ");
  AppendText(out, size, &at, kMonths[month - 1]);
  AppendText(out, size, &at, " ");
  AppendNumber(out, size, &at, year, 4);
  AppendText(out, size, &at, " ");
  AppendNumber(out, size, &at, of_day / 3600, 2);
  AppendText(out, size, &at, ":");
  AppendNumber(out, size, &at, of_day / 60 % 60, 2);
  AppendText(out, size, &at, ":");
  AppendNumber(out, size, &at, of_day % 60, 2);
  AppendText(out, size, &at, ".");
  AppendNumber(out, size, &at, now.tv_nsec / 1000000, 3);
  AppendText(out, size, &at, " # ");
  return at;
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
  std::fprintf(out, "%d:%c %s %c %.*s\n", static_cast<int>(getpid()), Role(), stamp,
               kMarks[static_cast<int>(level)], static_cast<int>(message.size()), message.data());
  std::fflush(out);
}

}  // namespace goblin
