// The crash report: when a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, or SIGABRT, which a
// failed assertion raises) stops the server, it writes Redis's kind of bug report to the log
// and then dies by that same signal with its default action, as redis-server does, so that the
// exit status names the signal and a core dump can be taken. The report, between its banners:
//
//   === GOBLIN BUG REPORT START: Cut & paste starting from here ===
//   <pid:M date #> Goblin 0.1.0 crashed by signal: 11 (SIGSEGV), si_code: 2
//   <pid:M date #> Accessing address: 0x7f0c2f3fe000
//   <pid:M date #> Crashed running the instruction at: 0x55d1e0b4a3c1
//   <pid:M date #> === ASSERTION FAILED ===                  (a failed GOBLIN_ASSERT only)
//   <pid:M date #> ==> dispatch.cc:42 'x > 0' is not true
//   ------ STACK TRACE ------      EIP: the faulting frame, then Backtrace: every frame
//   ------ CURRENT CLIENT INFO ------   the client and its command: argc, then each argument
//                                       quoted, cut after 128 bytes, secrets "(redacted)"
//   ------ INFO OUTPUT ------      INFO all, as a command would get it
//   === GOBLIN BUG REPORT END. Make sure to include from START to END. ===
//
// Invariants:
// 1. Up to and including the current client, the report is written with write(2) from
//    buffers it owns: no allocation, no stdio, no locks, so that a crash inside the allocator
//    or while the log's FILE is locked still reports that much. backtrace() runs once at
//    install, because its first call loads libgcc, which allocates.
// 2. INFO needs the allocator and the server's structures, which the crash may have broken,
//    so it comes last and under a watchdog: if it has not finished after kInfoSeconds (a lock
//    the crash left held), SIGALRM ends the report and the process by the first signal.
// 3. A fault inside the handler does not start another report: SA_RESETHAND made a second
//    signal of the same kind fatal at once, and a guard turns any other into the end of the
//    report and death by the first signal.
// 4. The handler runs on its own stack (sigaltstack), so that a stack overflow reports too.
// 5. Only a crash of the serving thread (the one that installed the handler) reports the
//    client and INFO: another thread's would read structures the serving thread is changing.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace goblin {

class Server;
struct Client;
struct Command;
struct CommandContext;

// Prepares the report (server answers its INFO) and arms the handler for the fatal signals
// unless crash-log-enabled is no. REQUIRES: called on the serving thread.
void InstallCrashHandler(Server* server);
// Arms the handler, or puts the signals' default actions back (crash-log-enabled no: the
// process dies by the signal with no report). REQUIRES: InstallCrashHandler ran.
void ArmCrashHandler(bool armed);

// Dispatch names the command it is about to run (nullptr: none), so that the report can show
// it. Returns the one it replaces, which the caller puts back when its command returns (EXEC
// and scripts run commands inside a command).
const CommandContext* SetRunningCommand(const CommandContext* ctx);

// Redis's serverPanic: logs message ("Guru Meditation: <message> #<file>:<line>"), records it
// for the report and aborts.
[[noreturn]] void Panic(std::string_view message, const char* file, int line);

// Records the failed assertion for the report and aborts.
[[noreturn]] void FailAssertion(const char* expression, const char* file, int line);

// The CURRENT CLIENT INFO lines of command run by client with argv, written into out (at most
// size bytes; returns how many). Signal-safe: no allocation.
size_t FormatCurrentClient(const Client& client, const Command& command,
                           const std::vector<std::string_view>& argv, char* out, size_t size);

// The most bytes of one argument the report shows, and the most arguments.
inline constexpr size_t kReportArgumentBytes = 128;
inline constexpr size_t kReportArguments = 32;

}  // namespace goblin

// Crashes with the report, in Release builds too, when expression is false.
#define GOBLIN_ASSERT(expression) \
  ((expression) ? static_cast<void>(0) : ::goblin::FailAssertion(#expression, __FILE__, __LINE__))
