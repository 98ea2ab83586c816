// write_tail_latency: the latency of each single write while one structure grows.
//
// Sends N (default 1,000,000) individual commands that each add one new element
// to one key -- ZADD (default), HSET or SADD -- or, with --cmd set, one new key to
// the keyspace with SET.  Each command is sent alone and its reply awaited
// before the next (no pipelining), and the round trip of every command is timed
// with CLOCK_MONOTONIC.  Reports p50/p90/p99/p99.9/p99.99/max in microseconds,
// the count over 1 ms and 10 ms, and the slowest commands with the element
// count at which they happened (a stop-the-world resize shows up there).
//
// Elements follow DESIGN.md's workloads: members user:%08d over a seeded random
// permutation, zset scores uniform in [0, 1e6) with 6 decimals, hash fields
// field:%010d with 16-byte values, string keys key:%08d with 16-byte values.
//
// Plain POSIX sockets and the C++ standard library; no other dependency.
// Build (see bench/README.md):
//   g++ -std=c++20 -O2 -Wall -Wextra -o build/write_tail_latency bench/write_tail_latency.cc
// Run:
//   build/write_tail_latency /tmp/goblin.sock            (a Unix socket: an argument with a '/')
//   build/write_tail_latency 127.0.0.1:6379 -n 2000000 --cmd hset

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

[[noreturn]] void die(const char* fmt, const char* a = "", const char* b = "") {
  std::fprintf(stderr, "write_tail_latency: ");
  std::fprintf(stderr, fmt, a, b);
  std::fprintf(stderr, "\n");
  std::exit(1);
}

int connect_to(const std::string& target) {
  if (target.find('/') != std::string::npos) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (target.size() >= sizeof(addr.sun_path)) die("socket path too long: %s", target.c_str());
    std::memcpy(addr.sun_path, target.data(), target.size());
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
      die("cannot connect to %s: %s", target.c_str(), std::strerror(errno));
    return fd;
  }
  auto colon = target.rfind(':');
  if (colon == std::string::npos) die("target must be a Unix socket path or host:port, got %s", target.c_str());
  std::string host = target.substr(0, colon), port = target.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    die("cannot resolve %s: %s", target.c_str(), ::gai_strerror(rc));
  int fd = -1;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) die("cannot connect to %s: %s", target.c_str(), std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// A blocking connection with just enough RESP to read one whole reply.
class Conn {
 public:
  explicit Conn(int fd) : fd_(fd) {}

  void send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        die("write: %s", std::strerror(errno));
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  // Reads one reply.  Returns false for an error reply, whose text goes to *error.
  bool reply(std::string* error) {
    bool ok = true;
    read_value(error, &ok);
    return ok;
  }

 private:
  void fill() {
    if (pos_ > 0 && pos_ == buf_.size()) {
      buf_.clear();
      pos_ = 0;
    } else if (pos_ > (1u << 20)) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char tmp[65536];
    for (;;) {
      ssize_t n = ::read(fd_, tmp, sizeof(tmp));
      if (n > 0) {
        buf_.append(tmp, static_cast<size_t>(n));
        return;
      }
      if (n == 0) die("the server closed the connection");
      if (errno != EINTR) die("read: %s", std::strerror(errno));
    }
  }

  std::string_view line() {
    for (;;) {
      auto end = buf_.find("\r\n", pos_);
      if (end != std::string::npos) {
        std::string_view l(buf_.data() + pos_, end - pos_);
        pos_ = end + 2;
        return l;
      }
      fill();
    }
  }

  void read_value(std::string* error, bool* ok) {
    std::string_view l = line();
    if (l.empty()) die("empty reply line");
    char type = l[0];
    long long n = 0;
    switch (type) {
      case '-':
      case '!':
        *ok = false;
        if (error) error->assign(l.substr(1));
        if (type == '-') return;
        [[fallthrough]];
      case '$':
      case '=':
        n = std::strtoll(std::string(l.substr(1)).c_str(), nullptr, 10);
        if (n < 0) return;
        while (buf_.size() - pos_ < static_cast<size_t>(n) + 2) fill();
        if (type == '!' && error) error->assign(buf_.data() + pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n) + 2;
        return;
      case '*':
      case '~':
      case '>':
      case '%':
        n = std::strtoll(std::string(l.substr(1)).c_str(), nullptr, 10);
        if (type == '%') n *= 2;
        for (long long i = 0; i < n; i++) read_value(error, ok);
        return;
      default:  // + : _ , # ( one-line replies
        return;
    }
  }

  int fd_;
  std::string buf_;
  size_t pos_ = 0;
};

// splitmix64: a small seeded generator, the same sequence on every machine.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

void append_bulk(std::string* out, std::string_view s) {
  char head[32];
  int n = std::snprintf(head, sizeof(head), "$%zu\r\n", s.size());
  out->append(head, static_cast<size_t>(n));
  out->append(s);
  out->append("\r\n");
}

std::string encode(const std::vector<std::string_view>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (auto a : args) append_bulk(&out, a);
  return out;
}

void usage() {
  std::fprintf(stderr,
               "usage: write_tail_latency TARGET [-n N] [--cmd zadd|hset|sadd|set] [--key KEY]\n"
               "                          [--seed S] [--keep] [--dump FILE] [--top K]\n"
               "  TARGET   a Unix socket path (contains '/') or host:port\n"
               "  -n N     commands to send, each adding one new element (default 1000000)\n"
               "  --cmd    zadd (default), hset, sadd: grow one key; set: grow the keyspace\n"
               "  --key    the key grown (default bench:latency:<cmd>)\n"
               "  --keep   do not DEL the key first\n"
               "  --dump   write every latency in microseconds, one per line, in send order\n"
               "  --top K  list the K slowest commands (default 10)\n");
  std::exit(2);
}

double pct(const std::vector<uint64_t>& sorted, double p) {
  // nearest rank: the smallest value with at least p of the samples at or below it
  size_t rank = static_cast<size_t>(p * static_cast<double>(sorted.size()) + 0.999999999);
  if (rank < 1) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, cmd = "zadd", key, dump;
  uint64_t n = 1000000, seed = 20240229;
  size_t top = 10;
  bool keep = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "-n") n = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--cmd") cmd = value();
    else if (a == "--key") key = value();
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--dump") dump = value();
    else if (a == "--top") top = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--keep") keep = true;
    else if (a == "-h" || a == "--help") usage();
    else if (!a.empty() && a[0] == '-') usage();
    else if (target.empty()) target = a;
    else usage();
  }
  if (target.empty() || n == 0) usage();
  std::transform(cmd.begin(), cmd.end(), cmd.begin(), [](unsigned char c) { return std::tolower(c); });
  if (cmd != "zadd" && cmd != "hset" && cmd != "sadd" && cmd != "set") usage();
  if (key.empty()) key = "bench:latency:" + cmd;

  Conn conn(connect_to(target));
  std::string err;
  conn.send(encode({"PING"}));
  if (!conn.reply(&err)) die("PING failed: %s", err.c_str());
  if (cmd != "set" && !keep) {
    conn.send(encode({"DEL", key}));
    if (!conn.reply(&err)) die("DEL %s failed: %s", key.c_str(), err.c_str());
  }

  // The elements, over a seeded random permutation of 0..n-1.
  Rng rng{seed};
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  for (uint64_t i = n - 1; i > 0; i--) std::swap(order[i], order[rng.below(i + 1)]);

  std::vector<uint64_t> ns(n);
  std::string command, upper = cmd;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  char a[64], b[64];
  auto t_start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; i++) {
    uint32_t e = order[i];
    if (cmd == "zadd") {
      uint64_t micro = rng.below(1000000000000ULL);  // [0, 1e6) with 6 decimals
      std::snprintf(a, sizeof(a), "%" PRIu64 ".%06" PRIu64, micro / 1000000, micro % 1000000);
      std::snprintf(b, sizeof(b), "user:%08u", e);
      command = encode({upper, key, a, b});
    } else if (cmd == "hset") {
      std::snprintf(a, sizeof(a), "field:%010u", e);
      std::snprintf(b, sizeof(b), "%016" PRIx64, rng.next());
      command = encode({upper, key, a, b});
    } else if (cmd == "sadd") {
      std::snprintf(a, sizeof(a), "user:%08u", e);
      command = encode({upper, key, a});
    } else {
      std::snprintf(a, sizeof(a), "key:%08u", e);
      std::snprintf(b, sizeof(b), "%016" PRIx64, rng.next());
      command = encode({upper, a, b});
    }
    auto t0 = std::chrono::steady_clock::now();
    conn.send(command);
    bool ok = conn.reply(&err);
    auto t1 = std::chrono::steady_clock::now();
    if (!ok) {
      std::fprintf(stderr, "write_tail_latency: %s #%" PRIu64 " failed: %s\n", upper.c_str(), i, err.c_str());
      // an unknown command is "not supported yet", not a crash: exit 3 so scripts can print n/a
      std::string lower = err;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      return lower.find("unknown command") != std::string::npos ? 3 : 1;
    }
    ns[i] = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

  if (!dump.empty()) {
    FILE* f = std::fopen(dump.c_str(), "w");
    if (!f) die("cannot write %s: %s", dump.c_str(), std::strerror(errno));
    for (uint64_t v : ns) std::fprintf(f, "%.3f\n", static_cast<double>(v) / 1000.0);
    std::fclose(f);
  }

  std::vector<uint64_t> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  long double sum = 0;
  uint64_t over1ms = 0, over10ms = 0;
  for (uint64_t v : ns) {
    sum += v;
    over1ms += v > 1000000;
    over10ms += v > 10000000;
  }
  std::string where = cmd == "set" ? "keyspace" : key;
  std::printf("%s x %" PRIu64 " growing %s on %s: %.2f s, %.0f commands/s\n", upper.c_str(), n, where.c_str(),
              target.c_str(), total_s, static_cast<double>(n) / total_s);
  std::printf("latency us: mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  p99.99 %.2f  max %.2f\n",
              static_cast<double>(sum / n) / 1000.0, pct(sorted, 0.50), pct(sorted, 0.90), pct(sorted, 0.99),
              pct(sorted, 0.999), pct(sorted, 0.9999), static_cast<double>(sorted.back()) / 1000.0);
  std::printf("over 1 ms: %" PRIu64 "  over 10 ms: %" PRIu64 "\n", over1ms, over10ms);
  std::vector<uint64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  top = std::min<size_t>(top, n);
  std::partial_sort(idx.begin(), idx.begin() + static_cast<long>(top), idx.end(),
                    [&](uint64_t x, uint64_t y) { return ns[x] > ns[y]; });
  if (top > 0) {
    std::printf("slowest (us@command index, = elements already added):");
    for (size_t k = 0; k < top; k++) std::printf(" %.0f@%" PRIu64, static_cast<double>(ns[idx[k]]) / 1000.0, idx[k]);
    std::printf("\n");
  }
  return 0;
}
