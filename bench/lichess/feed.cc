// feed: replays a ZADD payload into a server over its Unix socket and samples the server's memory
// at every date boundary (the client side of bench/lichess/feed_payload_uds.sh).
//
//   feed --socket PATH [--pid PID] [--mode reply|pipelined] [--window N] [--csv OUT.csv]
//        [--payload FILE]
//
// The payload is what synth and pgn2events write with `--format resp` or `--format cmd`: commands
// (RESP arrays, or inline lines split like redis-cli splits them), with `ECHO lichess-date:DATE`
// after the last command of each date. It is read from FILE or stdin in large reads and never held
// whole, so `synth ... --format resp -o - | feed ...` needs no disk.
//
// Modes:
//  1. reply: write one command, read its whole reply, then the next (an application making one
//     synchronous call per update).
//  2. pipelined: up to --window commands (default 1024) are sent and not yet answered; the socket
//     is polled for both directions, so neither side can stall on a full socket buffer.
// In both modes the marker is the last command sent before its reply arrives: when it does, every
// earlier reply has arrived too, and the connection is idle while the memory is sampled.
//
// A sample is `INFO memory` on the same connection (used_memory, used_memory_rss) and
// /proc/PID/statm (resident pages times the page size: the OS RSS). --csv gets a header, a `start`
// row sampled before the first command, and one row per date:
//   date,elapsed_s,commands,inserts,errors,used_memory,used_memory_rss,os_rss
// `commands` counts the payload's commands without the markers, `inserts` the `:1` replies,
// `errors` the error replies. Time spent sampling is added up apart, and stdout gets one line:
//   elapsed_s=E feed_s=E-S sample_s=S commands=C inserts=I errors=X start=UM,RSS,OS final=UM,RSS,OS
//   read_wait_s=W server_cpu_s=T (the server process's user + system CPU seconds meanwhile)
// (on one line; W is the time spent waiting for payload bytes, which matters when a generator
// feeds stdin; the clock starts when the first payload bytes are there). The first 20 error
// replies go to stderr.
//
// Exit status: 0 when the payload was fed to its end (error replies included), 1 on a lost
// connection, a protocol error or a malformed payload, 2 on bad arguments.
//
// Build: see bench/lichess/Makefile, or  g++ -std=c++20 -O2 -o feed feed.cc
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kMarkerPrefix = "lichess-date:";
constexpr size_t kKeptErrors = 20;
constexpr long long kMaxArguments = 1 << 20;
constexpr long long kMaxBulk = 512ll << 20;

[[noreturn]] __attribute__((format(printf, 1, 2))) void Fail(const char* format, ...) {
  std::fputs("feed: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::exit(1);
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 32);
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 32);
    if (x != y) return false;
  }
  return true;
}

// ---- RESP framing ------------------------------------------------------------------------------

// Result of parsing at the front of a buffer: a size in bytes, or one of these.
constexpr long kIncomplete = 0;
constexpr long kMalformed = -1;

// Parses the line `<prefix-char><integer>\r\n` at [p, end). Returns the line's size, kIncomplete
// or kMalformed.
long ParseNumberLine(const char* p, const char* end, long long* value) {
  const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
  if (nl == nullptr) return end - p > 32 ? kMalformed : kIncomplete;
  if (nl - p < 3 || nl[-1] != '\r') return kMalformed;
  const char* q = p + 1;
  const char* digits_end = nl - 1;
  bool negative = *q == '-';
  if (negative) ++q;
  if (q == digits_end || digits_end - q > 18) return kMalformed;
  long long v = 0;
  for (; q < digits_end; ++q) {
    if (*q < '0' || *q > '9') return kMalformed;
    v = v * 10 + (*q - '0');
  }
  *value = negative ? -v : v;
  return nl + 1 - p;
}

// One reply from the server. `text` points into the connection's buffer.
struct Reply {
  char kind = 0;          // '+', '-', ':', '$' or '*'
  long long integer = 0;  // ':' the value; '$' and '*' the length, -1 for a null
  std::string_view text;  // '+' and '-' the line, '$' the body
};

// Parses one complete RESP2 reply at [p, end). Returns its size, kIncomplete or kMalformed.
long ParseReply(const char* p, const char* end, Reply* reply, int depth = 0) {
  if (p == end) return kIncomplete;
  reply->kind = *p;
  reply->text = {};
  switch (*p) {
    case '+':
    case '-': {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (nl == nullptr) return kIncomplete;
      if (nl == p + 1 || nl[-1] != '\r') return kMalformed;
      reply->text = std::string_view(p + 1, static_cast<size_t>(nl - 1 - (p + 1)));
      return nl + 1 - p;
    }
    case ':':
      return ParseNumberLine(p, end, &reply->integer);
    case '$': {
      long header = ParseNumberLine(p, end, &reply->integer);
      if (header <= 0) return header;
      if (reply->integer == -1) return header;
      if (reply->integer < 0 || reply->integer > kMaxBulk) return kMalformed;
      long size = header + static_cast<long>(reply->integer) + 2;
      if (end - p < size) return kIncomplete;
      if (p[size - 2] != '\r' || p[size - 1] != '\n') return kMalformed;
      reply->text = std::string_view(p + header, static_cast<size_t>(reply->integer));
      return size;
    }
    case '*': {
      long long count;
      long size = ParseNumberLine(p, end, &count);
      if (size <= 0) return size;
      if (count < -1 || count > kMaxArguments || depth > 32) return kMalformed;
      for (long long i = 0; i < count; ++i) {
        Reply element;
        long n = ParseReply(p + size, end, &element, depth + 1);
        if (n <= 0) return n;
        size += n;
      }
      reply->kind = '*';
      reply->integer = count;
      return size;
    }
    default:
      return kMalformed;
  }
}

void AppendBulk(std::string* out, std::string_view arg) {
  *out += '$';
  *out += std::to_string(arg.size());
  *out += "\r\n";
  out->append(arg);
  *out += "\r\n";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits an inline command line as redis-cli does (sdssplitargs): blanks separate arguments,
// "double quotes" take \" \\ \n \r \t \b \a \xHH escapes, 'single quotes' take \'. Returns false
// on unbalanced quotes.
bool SplitInline(std::string_view line, std::vector<std::string>* args) {
  args->clear();
  size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v'; };
  for (;;) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i == line.size()) return true;
    std::string arg;
    bool in_double = false, in_single = false;
    for (;;) {
      if (i == line.size()) {
        if (in_double || in_single) return false;
        break;
      }
      char c = line[i];
      if (in_double) {
        if (c == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          arg += static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3]));
          i += 4;
          continue;
        }
        if (c == '\\' && i + 1 < line.size()) {
          char e = line[i + 1];
          arg += e == 'n'   ? '\n'
                 : e == 'r' ? '\r'
                 : e == 't' ? '\t'
                 : e == 'b' ? '\b'
                 : e == 'a' ? '\a'
                            : e;
          i += 2;
          continue;
        }
        if (c == '"') {
          // A closing quote must end the argument.
          if (i + 1 < line.size() && !blank(line[i + 1])) return false;
          ++i;
          break;
        }
        arg += c;
        ++i;
      } else if (in_single) {
        if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
          arg += '\'';
          i += 2;
          continue;
        }
        if (c == '\'') {
          if (i + 1 < line.size() && !blank(line[i + 1])) return false;
          ++i;
          break;
        }
        arg += c;
        ++i;
      } else {
        if (blank(c)) break;
        if (c == '"')
          in_double = true;
        else if (c == '\'')
          in_single = true;
        else
          arg += c;
        ++i;
      }
    }
    args->push_back(std::move(arg));
  }
}

// ---- the payload -------------------------------------------------------------------------------

// Streams the commands of a payload from a file descriptor. Memory: one read buffer (8 MB, more
// only if a single command is larger).
class PayloadReader {
 public:
  explicit PayloadReader(int fd) : fd_(fd), buffer_(kReadSize) {}
  PayloadReader(const PayloadReader&) = delete;
  PayloadReader& operator=(const PayloadReader&) = delete;

  // Sets *command to the next command as RESP bytes and *marker_date to its date if it is a date
  // marker (else empty); both stay valid until the next call. Returns false at the end of the
  // payload. Exits on a malformed or truncated payload.
  bool Next(std::string_view* command, std::string_view* marker_date) {
    for (;;) {
      const char* p = buffer_.data() + begin_;
      const char* end = buffer_.data() + end_;
      long n = kIncomplete;
      if (p < end) {
        n = *p == '*' ? ParseCommand(p, end, command, marker_date)
                      : ParseInlineCommand(p, end, command, marker_date);
      }
      if (n == kMalformed) {
        Fail("malformed payload at byte %llu", static_cast<unsigned long long>(offset_));
      }
      if (n == kIncomplete) {
        if (Fill()) continue;
        if (begin_ == end_) return false;
        if (buffer_[begin_] == '*') {
          Fail("payload ends inside a command (byte %llu)",
               static_cast<unsigned long long>(offset_));
        }
        eof_line_ = true;  // an inline last line without its newline
        continue;
      }
      begin_ += static_cast<size_t>(n);
      offset_ += static_cast<uint64_t>(n);
      if (command->empty()) continue;  // a blank line
      return true;
    }
  }

  // Waits for the first bytes, so that a generator's start-up time (synth on stdin computes its
  // players first) stays out of the timings, which start after this.
  void WaitForInput() {
    if (begin_ == end_) Fill();
    read_wait_seconds_ = 0;
  }

  // Time spent in read() for the payload since WaitForInput.
  double read_wait_seconds() const { return read_wait_seconds_; }

 private:
  static constexpr size_t kReadSize = 8 << 20;

  // Reads more bytes after the unread ones (moved to the front; the buffer doubles when a single
  // command fills it). Returns false at the end of the input.
  bool Fill() {
    if (eof_) return false;
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    double started = Now();
    ssize_t n;
    do {
      n = read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    } while (n < 0 && errno == EINTR);
    read_wait_seconds_ += Now() - started;
    if (n < 0) Fail("reading the payload: %s", std::strerror(errno));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<size_t>(n);
    return true;
  }

  // A RESP command at [p, end): passed on as it is.
  long ParseCommand(const char* p, const char* end, std::string_view* command,
                    std::string_view* marker_date) {
    long long count;
    long size = ParseNumberLine(p, end, &count);
    if (size <= 0) return size;
    if (count < 1 || count > kMaxArguments) return kMalformed;
    std::string_view first, second;
    for (long long i = 0; i < count; ++i) {
      long long length;
      if (end - p <= size) return kIncomplete;
      if (p[size] != '$') return kMalformed;
      long header = ParseNumberLine(p + size, end, &length);
      if (header <= 0) return header;
      if (length < 0 || length > kMaxBulk) return kMalformed;
      if (end - p < size + header + length + 2) return kIncomplete;
      const char* body = p + size + header;
      if (body[length] != '\r' || body[length + 1] != '\n') return kMalformed;
      if (i == 0) first = std::string_view(body, static_cast<size_t>(length));
      if (i == 1) second = std::string_view(body, static_cast<size_t>(length));
      size += header + static_cast<long>(length) + 2;
    }
    *command = std::string_view(p, static_cast<size_t>(size));
    *marker_date = MarkerDate(count, first, second);
    return size;
  }

  // An inline command line at [p, end): re-encoded as RESP.
  long ParseInlineCommand(const char* p, const char* end, std::string_view* command,
                          std::string_view* marker_date) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (nl == nullptr && !eof_line_) return kIncomplete;
    const char* line_end = nl ? nl : end;
    long size = nl ? nl + 1 - p : end - p;
    eof_line_ = false;
    if (!SplitInline(std::string_view(p, static_cast<size_t>(line_end - p)), &arguments_)) {
      return kMalformed;
    }
    converted_.clear();
    *marker_date = {};
    if (!arguments_.empty()) {
      converted_ = "*" + std::to_string(arguments_.size()) + "\r\n";
      for (const std::string& a : arguments_) AppendBulk(&converted_, a);
      *marker_date = MarkerDate(static_cast<long long>(arguments_.size()), arguments_[0],
                                arguments_.size() > 1 ? arguments_[1] : std::string_view());
    }
    *command = converted_;
    return size;
  }

  static std::string_view MarkerDate(long long count, std::string_view first,
                                     std::string_view second) {
    if (count != 2 || !EqualsIgnoreCase(first, "ECHO") || !second.starts_with(kMarkerPrefix)) {
      return {};
    }
    return second.substr(kMarkerPrefix.size());
  }

  int fd_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;  // the unread bytes
  uint64_t offset_ = 0;         // payload offset of begin_
  bool eof_ = false;
  bool eof_line_ = false;  // take the rest of the input as one inline line
  std::vector<std::string> arguments_;
  std::string converted_;
  double read_wait_seconds_ = 0;
};

// ---- the connection ----------------------------------------------------------------------------

// A connection to the server's Unix socket. The socket stays blocking: reply mode and the memory
// samples (sent while nothing else is in flight) block in write and read; pipelined mode polls and
// passes MSG_DONTWAIT, so it never blocks on a full socket buffer in either direction.
class Connection {
 public:
  explicit Connection(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) Fail("socket path too long: %s", path.c_str());
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) Fail("socket: %s", std::strerror(errno));
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      Fail("connect %s: %s", path.c_str(), std::strerror(errno));
    }
    input_.resize(1 << 20);
  }
  ~Connection() { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends bytes, blocking until all are written. REQUIRES: nothing queued.
  void WriteAll(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Fail("connection lost while writing: %s", std::strerror(errno));
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  // Queues bytes for Pump to send.
  void Queue(std::string_view bytes) { output_.append(bytes); }

  // Waits until the socket can be read, or written while bytes are queued, then sends and
  // receives what it can without blocking.
  void Pump() {
    pollfd descriptor{fd_, static_cast<short>(POLLIN | (HasQueued() ? POLLOUT : 0)), 0};
    int ready;
    do {
      ready = poll(&descriptor, 1, -1);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) Fail("poll: %s", std::strerror(errno));
    if ((descriptor.revents & POLLOUT) && HasQueued()) SendQueued();
    if (descriptor.revents & (POLLIN | POLLHUP | POLLERR)) Receive(MSG_DONTWAIT);
  }

  // Takes the next complete reply out of the received bytes; false if none is complete. The
  // reply's text stays valid until the next receive.
  bool NextReply(Reply* reply) {
    long n = ParseReply(input_.data() + input_begin_, input_.data() + input_end_, reply);
    if (n == kMalformed) Fail("protocol error: malformed reply from the server");
    if (n == kIncomplete) return false;
    input_begin_ += static_cast<size_t>(n);
    return true;
  }

  // Blocks until the next reply is complete.
  void ReadReply(Reply* reply) {
    while (!NextReply(reply)) Receive(0);
  }

 private:
  bool HasQueued() const { return output_sent_ < output_.size(); }

  void SendQueued() {
    ssize_t n;
    do {
      n = send(fd_, output_.data() + output_sent_, output_.size() - output_sent_,
               MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      Fail("connection lost while writing: %s", std::strerror(errno));
    }
    if (n > 0) output_sent_ += static_cast<size_t>(n);
    if (output_sent_ == output_.size()) {
      output_.clear();
      output_sent_ = 0;
    } else if (output_sent_ > (1u << 20)) {
      output_.erase(0, output_sent_);
      output_sent_ = 0;
    }
  }

  // Reads what is available after the buffered bytes (flags 0: waits for at least one byte).
  void Receive(int flags) {
    if (input_begin_ == input_end_) {
      input_begin_ = input_end_ = 0;
    } else if (input_begin_ > 0 && input_end_ + 4096 > input_.size()) {
      std::memmove(input_.data(), input_.data() + input_begin_, input_end_ - input_begin_);
      input_end_ -= input_begin_;
      input_begin_ = 0;
    }
    if (input_.size() - input_end_ < 4096) input_.resize(input_.size() * 2);
    ssize_t n;
    do {
      n = recv(fd_, input_.data() + input_end_, input_.size() - input_end_, flags);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) Fail("connection lost while reading: %s", std::strerror(errno));
    if (n == 0) Fail("connection closed by the server");
    input_end_ += static_cast<size_t>(n);
  }

  int fd_ = -1;
  std::string output_;
  size_t output_sent_ = 0;
  std::vector<char> input_;
  size_t input_begin_ = 0, input_end_ = 0;  // the unparsed received bytes
};

// ---- memory samples ----------------------------------------------------------------------------

struct MemorySample {
  long long used_memory = 0, used_memory_rss = 0, os_rss = 0;
};

// The value of `name:value` in INFO text, or 0 when the field is absent.
long long InfoField(std::string_view info, std::string_view name) {
  size_t at = 0;
  while (at < info.size()) {
    size_t eol = info.find('\n', at);
    if (eol == std::string_view::npos) eol = info.size();
    std::string_view line = info.substr(at, eol - at);
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':') {
      return std::strtoll(std::string(line.substr(name.size() + 1)).c_str(), nullptr, 10);
    }
    at = eol + 1;
  }
  return 0;
}

std::string EncodeCommand(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) AppendBulk(&out, a);
  return out;
}

// Runs one command on an idle connection and returns its INFO text.
std::string Info(Connection& connection, std::string_view section) {
  connection.WriteAll(EncodeCommand({"INFO", section}));
  Reply reply;
  connection.ReadReply(&reply);
  if (reply.kind != '$' || reply.integer < 0) {
    Fail("INFO %.*s did not reply with a bulk string (%c%.*s)", static_cast<int>(section.size()),
         section.data(), reply.kind, static_cast<int>(reply.text.size()), reply.text.data());
  }
  return std::string(reply.text);
}

long long ResidentBytes(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/statm", pid);
  FILE* f = std::fopen(path, "r");
  unsigned long long size = 0, resident = 0;
  bool ok = f != nullptr && std::fscanf(f, "%llu %llu", &size, &resident) == 2;
  if (f != nullptr) std::fclose(f);
  if (!ok) Fail("cannot read %s (has the server exited?)", path);
  return static_cast<long long>(resident) * sysconf(_SC_PAGESIZE);
}

// CPU seconds (user + system) the process has used: fields 14 and 15 of /proc/PID/stat.
double CpuSeconds(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE* f = std::fopen(path, "r");
  char buffer[1024] = {};
  const size_t n = f == nullptr ? 0 : std::fread(buffer, 1, sizeof buffer - 1, f);
  if (f != nullptr) std::fclose(f);
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const char* p = std::strrchr(buffer, ')');
  if (n == 0 || p == nullptr) Fail("cannot read %s (has the server exited?)", path);
  unsigned long long utime = 0, stime = 0;
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                  &stime) != 2) {
    Fail("cannot parse %s", path);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// ---- the feeder --------------------------------------------------------------------------------

struct Options {
  std::string socket, csv, payload = "-";
  long pid = 0;
  bool pipelined = false;
  uint64_t window = 1024;
};

// Feeds a payload, keeps the counts, and samples and records memory at every date marker.
class Feeder {
 public:
  Feeder(const Options& options, Connection& connection, PayloadReader& payload)
      : options_(options), connection_(connection), payload_(payload) {}
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

  // Samples the idle server, writes the CSV header and `start` row, and starts the clock.
  void Start() {
    if (!options_.csv.empty()) {
      csv_ = std::fopen(options_.csv.c_str(), "w");
      if (csv_ == nullptr) Fail("cannot write %s: %s", options_.csv.c_str(), std::strerror(errno));
      std::fputs("date,elapsed_s,commands,inserts,errors,used_memory,used_memory_rss,os_rss\n",
                 csv_);
    }
    start_ = Sample();
    WriteRow("start", 0, start_);
    started_ = Now();
    server_cpu_at_start_ = CpuSeconds(options_.pid);
  }

  void RunReplyPerCommand() {
    std::string_view command, date;
    Reply reply;
    while (payload_.Next(&command, &date)) {
      connection_.WriteAll(command);
      connection_.ReadReply(&reply);
      if (date.empty()) {
        Count(reply);
      } else {
        OnMarker(date, reply);
      }
    }
  }

  void RunPipelined() {
    uint64_t in_flight = 0;  // commands queued or sent whose replies have not arrived
    bool marker_queued = false, input_done = false;
    std::string marker_date;
    std::string_view command, date;
    Reply reply;
    for (;;) {
      // Nothing is queued behind a marker: its reply must find the connection otherwise idle.
      while (!marker_queued && !input_done && in_flight < options_.window) {
        if (!payload_.Next(&command, &date)) {
          input_done = true;
          break;
        }
        connection_.Queue(command);
        if (date.empty()) {
          ++in_flight;
        } else {
          marker_queued = true;
          marker_date.assign(date);
        }
      }
      if (in_flight == 0 && !marker_queued) break;  // input_done: every reply is in
      connection_.Pump();
      while (connection_.NextReply(&reply)) {
        if (in_flight > 0) {
          Count(reply);
          --in_flight;
        } else if (marker_queued) {
          marker_queued = false;
          OnMarker(marker_date, reply);
        } else {
          Fail("protocol error: a reply to no command");
        }
      }
    }
  }

  // Stops the clock, takes the final sample, prints the result line and the first errors.
  void Finish() {
    double elapsed = Now() - started_;
    MemorySample final_sample = Sample();
    if (csv_ != nullptr && std::fclose(csv_) != 0) Fail("writing %s failed", options_.csv.c_str());
    std::printf(
        "elapsed_s=%.6f feed_s=%.6f sample_s=%.6f commands=%llu inserts=%llu errors=%llu "
        "start=%lld,%lld,%lld final=%lld,%lld,%lld read_wait_s=%.6f server_cpu_s=%.2f\n",
        elapsed, elapsed - sample_seconds_, sample_seconds_,
        static_cast<unsigned long long>(commands_), static_cast<unsigned long long>(inserts_),
        static_cast<unsigned long long>(errors_), start_.used_memory, start_.used_memory_rss,
        start_.os_rss, final_sample.used_memory, final_sample.used_memory_rss, final_sample.os_rss,
        payload_.read_wait_seconds(), CpuSeconds(options_.pid) - server_cpu_at_start_);
    std::fflush(stdout);
    if (errors_ > 0) {
      std::fprintf(stderr, "feed: %llu error replies; the first %zu:\n",
                   static_cast<unsigned long long>(errors_), kept_errors_.size());
      for (const std::string& e : kept_errors_) std::fprintf(stderr, "  -%s\n", e.c_str());
    }
  }

 private:
  void Count(const Reply& reply) {
    ++commands_;
    if (reply.kind == ':' && reply.integer == 1) ++inserts_;
    if (reply.kind == '-') AddError(reply.text);
  }

  void AddError(std::string_view text) {
    ++errors_;
    if (kept_errors_.size() < kKeptErrors) kept_errors_.emplace_back(text);
  }

  // Every reply before the marker's has arrived and nothing is in flight: sample and record.
  void OnMarker(std::string_view date, const Reply& reply) {
    double now = Now();
    if (reply.kind == '-') {
      AddError(reply.text);
    } else if (reply.kind != '$' || reply.text.size() != kMarkerPrefix.size() + date.size() ||
               !reply.text.starts_with(kMarkerPrefix) || !reply.text.ends_with(date)) {
      Fail("protocol error: the reply to the marker for %.*s is not its echo",
           static_cast<int>(date.size()), date.data());
    }
    if (csv_ != nullptr) {
      std::string row_date(date);  // date may point into the buffer the sample reuses
      WriteRow(row_date, now - started_, Sample());
    }
    sample_seconds_ += Now() - now;
  }

  MemorySample Sample() {
    if (options_.pid == 0) options_.pid = InfoField(Info(connection_, "server"), "process_id");
    if (options_.pid <= 0) Fail("no --pid and INFO server gives no process_id");
    std::string info = Info(connection_, "memory");
    MemorySample s;
    s.used_memory = InfoField(info, "used_memory");
    s.used_memory_rss = InfoField(info, "used_memory_rss");
    s.os_rss = ResidentBytes(options_.pid);
    return s;
  }

  void WriteRow(const std::string& date, double elapsed, const MemorySample& s) {
    if (csv_ == nullptr) return;
    char seconds[32] = "0";
    if (elapsed > 0) std::snprintf(seconds, sizeof seconds, "%.6f", elapsed);
    std::fprintf(
        csv_, "%s,%s,%llu,%llu,%llu,%lld,%lld,%lld\n", date.c_str(), seconds,
        static_cast<unsigned long long>(commands_), static_cast<unsigned long long>(inserts_),
        static_cast<unsigned long long>(errors_), s.used_memory, s.used_memory_rss, s.os_rss);
    std::fflush(csv_);  // a long run's progress stays readable
  }

  Options options_;
  Connection& connection_;
  PayloadReader& payload_;
  FILE* csv_ = nullptr;
  MemorySample start_;
  double started_ = 0, sample_seconds_ = 0;
  double server_cpu_at_start_ = 0;  // CpuSeconds of the server when the clock started
  uint64_t commands_ = 0, inserts_ = 0, errors_ = 0;
  std::vector<std::string> kept_errors_;
};

[[noreturn]] void Usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: feed --socket PATH [--pid PID] [--mode reply|pipelined] [--window N]\n"
               "            [--csv OUT.csv] [--payload FILE]     (no --payload: stdin)\n");
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(2);
      return argv[++i];
    };
    auto number = [&]() -> long long {
      std::string v = value();
      char* end;
      errno = 0;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || errno || x <= 0) {
        std::fprintf(stderr, "feed: bad number for %s: %s\n", a.c_str(), v.c_str());
        std::exit(2);
      }
      return x;
    };
    if (a == "--socket") {
      options.socket = value();
    } else if (a == "--pid") {
      options.pid = static_cast<long>(number());
    } else if (a == "--mode") {
      std::string m = value();
      if (m != "reply" && m != "pipelined") {
        std::fprintf(stderr, "feed: unknown mode '%s' (reply, pipelined)\n", m.c_str());
        return 2;
      }
      options.pipelined = m == "pipelined";
    } else if (a == "--window") {
      options.window = static_cast<uint64_t>(number());
    } else if (a == "--csv") {
      options.csv = value();
    } else if (a == "--payload") {
      options.payload = value();
    } else if (a == "-h" || a == "--help") {
      Usage(0);
    } else {
      std::fprintf(stderr, "feed: unknown argument %s\n", a.c_str());
      Usage(2);
    }
  }
  if (options.socket.empty()) Usage(2);
  signal(SIGPIPE, SIG_IGN);

  int fd = 0;
  if (options.payload != "-") {
    fd = open(options.payload.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Fail("cannot open %s: %s", options.payload.c_str(), std::strerror(errno));
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  PayloadReader payload(fd);
  Connection connection(options.socket);
  Feeder feeder(options, connection, payload);
  payload.WaitForInput();
  feeder.Start();
  if (options.pipelined) {
    feeder.RunPipelined();
  } else {
    feeder.RunReplyPerCommand();
  }
  feeder.Finish();
  return 0;
}
