#include "server/crash_report.h"

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/version.h"
#include "server/log.h"
#include "server/server.h"

namespace goblin {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr unsigned kInfoSeconds = 5;
constexpr size_t kAlternateStackBytes = 256 * 1024;
constexpr int kMaxFrames = 100;

Server* g_server = nullptr;
pthread_t g_serving_thread;  // the thread that installed the handler
const CommandContext* g_running = nullptr;
const char* g_assert_expression = nullptr;
const char* g_assert_file = nullptr;
int g_assert_line = 0;
// A panic's message (Panic), kept in a buffer of its own: the handler must not allocate.
char g_panic_message[512];
bool g_panicked = false;
// The signal being reported, 0 before any (invariant 3).
volatile sig_atomic_t g_reporting = 0;
// The CURRENT CLIENT INFO text is built here rather than on the handler's small stack.
char g_client_text[kReportArguments * (kReportArgumentBytes * 4 + 48) + 512];

// Appends to a fixed buffer, dropping what does not fit.
class TextBuffer {
 public:
  TextBuffer(char* out, size_t size) : out_(out), size_(size) {}

  size_t size() const { return used_; }
  void Text(std::string_view text) {
    for (char c : text) Char(c);
  }
  void Char(char c) {
    if (used_ < size_) out_[used_++] = c;
  }
  void Number(long long value) {
    char digits[24];
    int n = 0;
    unsigned long long rest = value < 0 ? 0ULL - static_cast<unsigned long long>(value) : value;
    do {
      digits[n++] = static_cast<char>('0' + rest % 10);
      rest /= 10;
    } while (rest != 0);
    if (value < 0) Char('-');
    while (n > 0) Char(digits[--n]);
  }
  void Hex(uintptr_t value) {
    static const char kDigits[] = "0123456789abcdef";
    char digits[2 * sizeof(value)];
    int n = 0;
    do {
      digits[n++] = kDigits[value & 15];
      value >>= 4;
    } while (value != 0);
    Text("0x");
    while (n > 0) Char(digits[--n]);
  }
  void Field(std::string_view name, std::string_view value) {
    Text(name);
    Char('=');
    Text(value);
  }
  void Field(std::string_view name, long long value) {
    Text(name);
    Char('=');
    Number(value);
  }
  // bytes in double quotes, with quotes, backslashes and unprintable bytes escaped.
  void Quoted(std::string_view bytes) {
    static const char kDigits[] = "0123456789abcdef";
    Char('"');
    for (char c : bytes) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        Char('\\');
        Char(c);
      } else if (byte < 0x20 || byte >= 0x7f) {
        Text("\\x");
        Char(kDigits[byte >> 4]);
        Char(kDigits[byte & 15]);
      } else {
        Char(c);
      }
    }
    Char('"');
  }

 private:
  char* out_;
  size_t size_;
  size_t used_ = 0;
};

void WriteAll(std::string_view bytes) {
  const int fd = LogFileDescriptor();
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// One log line at warning level: the log's prefix, then text.
void WriteLine(std::string_view text) {
  char line[512];
  size_t at = FormatSignalSafeLogPrefix(line, sizeof(line));
  const size_t n = std::min(text.size(), sizeof(line) - 1 - at);
  std::memcpy(line + at, text.data(), n);
  at += n;
  line[at++] = '\n';
  WriteAll(std::string_view(line, at));
}

const char* SignalName(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "unknown signal";
  }
}

void* InstructionPointer(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  if (uc == nullptr) return nullptr;
#if defined(__x86_64__)
  return reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return reinterpret_cast<void*>(uc->uc_mcontext.pc);
#else
  return nullptr;
#endif
}

void WriteEndBanner() {
  WriteAll(
      "\n=== GOBLIN BUG REPORT END. Make sure to include from START to END. ===\n\n"
      "       Please report the crash with the log above, from START to END.\n\n");
}

// Dies by signal_number with its default action (a core dump where the system takes one).
[[noreturn]] void DieBy(int signal_number) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal_number, &action, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  raise(signal_number);
  _exit(128 + signal_number);  // not reached: the default action of every fatal signal ends us
}

// Invariant 2: INFO did not finish in time.
void OnInfoTimeout(int) {
  WriteAll("\n(INFO did not finish: the crash may have left a lock held)\n");
  WriteEndBanner();
  DieBy(g_reporting);
}

void WriteInfo() {
  if (g_server == nullptr) return;
  const Command* info = g_server->commands.Find("info");
  if (info == nullptr) return;
  struct sigaction action {};
  action.sa_handler = OnInfoTimeout;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, nullptr);
  alarm(kInfoSeconds);
  Client scratch(0, -1, ClientKind::kScript);
  const std::vector<std::string_view> argv = {"info", "all"};
  CommandContext ctx{*g_server, scratch, argv, *info, scratch.reply, g_server->NowMs()};
  info->handler(ctx);
  alarm(0);
  // A RESP2 bulk string: "$<length>\r\n<text>\r\n", the text's lines ending in CRLF.
  const std::string whole = scratch.output.ToString();
  std::string_view reply = whole;
  const size_t start = reply.find("\r\n");
  if (reply.empty() || reply[0] != '$' || start == std::string_view::npos) return;
  reply = reply.substr(start + 2);
  if (reply.size() >= 2) reply.remove_suffix(2);
  std::string text;
  text.reserve(reply.size());
  for (char c : reply) {
    if (c != '\r') text += c;
  }
  WriteAll(text);
}

void OnFatalSignal(int signal_number, siginfo_t* info, void* context) {
  if (g_reporting != 0) {  // invariant 3
    WriteAll("\n(a second fatal signal arrived while the report was written: ");
    WriteAll(SignalName(signal_number));
    WriteAll(")\n");
    WriteEndBanner();
    DieBy(g_reporting);
  }
  g_reporting = signal_number;
  WriteAll("\n\n=== GOBLIN BUG REPORT START: Cut & paste starting from here ===\n");
  char text[256];
  {
    TextBuffer line(text, sizeof(text));
    line.Text("Goblin ");
    line.Text(kGoblinVersion);
    line.Text(" crashed by signal: ");
    line.Number(signal_number);
    line.Text(" (");
    line.Text(SignalName(signal_number));
    line.Text("), si_code: ");
    line.Number(info->si_code);
    WriteLine(std::string_view(text, line.size()));
  }
  if (info->si_code == SI_USER || info->si_code == SI_TKILL) {
    TextBuffer line(text, sizeof(text));
    line.Text("Killed by PID: ");
    line.Number(info->si_pid);
    line.Text(", UID: ");
    line.Number(info->si_uid);
    WriteLine(std::string_view(text, line.size()));
  } else if (signal_number != SIGABRT) {
    TextBuffer line(text, sizeof(text));
    line.Text("Accessing address: ");
    line.Hex(reinterpret_cast<uintptr_t>(info->si_addr));
    WriteLine(std::string_view(text, line.size()));
  }
  void* instruction = InstructionPointer(context);
  if (instruction != nullptr) {
    TextBuffer line(text, sizeof(text));
    line.Text("Crashed running the instruction at: ");
    line.Hex(reinterpret_cast<uintptr_t>(instruction));
    WriteLine(std::string_view(text, line.size()));
  }
  if (g_panicked) {
    TextBuffer line(text, sizeof(text));
    line.Text("Guru Meditation: ");
    line.Text(g_panic_message);
    line.Text(" #");
    line.Text(g_assert_file);
    line.Char(':');
    line.Number(g_assert_line);
    WriteLine(std::string_view(text, line.size()));
  } else if (g_assert_expression != nullptr) {
    WriteLine("=== ASSERTION FAILED ===");
    TextBuffer line(text, sizeof(text));
    line.Text("==> ");
    line.Text(g_assert_file);
    line.Char(':');
    line.Number(g_assert_line);
    line.Text(" '");
    line.Text(g_assert_expression);
    line.Text("' is not true");
    WriteLine(std::string_view(text, line.size()));
  }

  WriteAll("\n------ STACK TRACE ------\n");
  const int fd = LogFileDescriptor();
  if (instruction != nullptr) {
    WriteAll("EIP:\n");
    backtrace_symbols_fd(&instruction, 1, fd);
  }
  WriteAll("\nBacktrace:\n");
  void* frames[kMaxFrames];
  const int count = backtrace(frames, kMaxFrames);
  backtrace_symbols_fd(frames, count, fd);

  // The client and INFO read the serving thread's structures, which go on changing while
  // another thread (the AOF's fsync, jemalloc's) reports its own crash.
  if (!pthread_equal(pthread_self(), g_serving_thread)) {
    WriteAll("\n(The crash is not on the serving thread: no client or INFO.)\n");
    WriteEndBanner();
    DieBy(signal_number);
  }
  const CommandContext* running = g_running;
  if (running != nullptr) {
    WriteAll("\n------ CURRENT CLIENT INFO ------\n");
    WriteAll(std::string_view(g_client_text,
                              FormatCurrentClient(running->client, running->command, running->argv,
                                                  g_client_text, sizeof(g_client_text))));
  }

  WriteAll("\n------ INFO OUTPUT ------\n");
  WriteInfo();
  WriteEndBanner();
  DieBy(signal_number);
}

}  // namespace

size_t FormatCurrentClient(const Client& client, const Command& command,
                           const std::vector<std::string_view>& argv, char* out, size_t size) {
  TextBuffer text(out, size);
  // Fields of CLIENT LIST's line, as Redis's report shows the client.
  text.Field("id", static_cast<long long>(client.id));
  text.Field(" addr", client.address);
  text.Field(" fd", client.fd);
  text.Field(" name", client.name);
  text.Field(" db", client.db);
  text.Field(" cmd", command.name);
  text.Text("\nargc: ");
  text.Number(static_cast<long long>(argv.size()));
  text.Char('\n');
  const size_t shown = std::min(argv.size(), kReportArguments);
  bool secret[kReportArguments] = {};
  MarkSecretArguments(command, argv, secret, shown);
  for (size_t i = 0; i < shown; ++i) {
    text.Text("argv[");
    text.Number(static_cast<long long>(i));
    text.Text("]: ");
    if (secret[i]) {
      text.Text("(redacted)");
    } else {
      text.Quoted(argv[i].substr(0, kReportArgumentBytes));
      if (argv[i].size() > kReportArgumentBytes) {
        text.Text("... (");
        text.Number(static_cast<long long>(argv[i].size() - kReportArgumentBytes));
        text.Text(" more bytes)");
      }
    }
    text.Char('\n');
  }
  if (argv.size() > shown) {
    text.Text("... (");
    text.Number(static_cast<long long>(argv.size() - shown));
    text.Text(" more arguments)\n");
  }
  return text.size();
}

void InstallCrashHandler(Server* server) {
  g_server = server;
  g_serving_thread = pthread_self();
  void* warm_up[1];
  backtrace(warm_up, 1);  // invariant 1
  // Invariant 4. The stack is never freed: the handler may run until the process ends.
  void* stack = mmap(nullptr, kAlternateStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack != MAP_FAILED) {
    stack_t alternate{};
    alternate.ss_sp = stack;
    alternate.ss_size = kAlternateStackBytes;
    sigaltstack(&alternate, nullptr);
  }
  ArmCrashHandler(server->config.crash_log_enabled);
}

void ArmCrashHandler(bool armed) {
  struct sigaction action {};
  if (armed) {
    action.sa_sigaction = OnFatalSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  } else {
    action.sa_handler = SIG_DFL;
  }
  sigemptyset(&action.sa_mask);
  for (int signal_number : kFatalSignals) sigaction(signal_number, &action, nullptr);
}

const CommandContext* SetRunningCommand(const CommandContext* ctx) {
  const CommandContext* previous = g_running;
  g_running = ctx;
  return previous;
}

void Panic(std::string_view message, const char* file, int line) {
  LogWarning("------------------------------------------------");
  LogWarning("!!! Software Failure. Press left mouse button to continue");
  LogWarning("Guru Meditation: " + std::string(message) + " #" + file + ":" + std::to_string(line));
  const size_t size = std::min(message.size(), sizeof(g_panic_message) - 1);
  std::memcpy(g_panic_message, message.data(), size);
  g_panic_message[size] = '\0';
  g_assert_file = file;
  g_assert_line = line;
  g_panicked = true;
  abort();
}

void FailAssertion(const char* expression, const char* file, int line) {
  g_assert_expression = expression;
  g_assert_file = file;
  g_assert_line = line;
  abort();
}

}  // namespace goblin
