// leaderboard_check PAYLOAD EXPORT: checks a server's final leaderboard against the payload
// itself, with no second server.
//
// A sorted set fed `ZADD <key> <score> <member>` in order ends holding each member's last score,
// ordered by (score, member bytes): that is the whole expected result. This tool replays a
// `--format resp` payload into a hash map (member -> last score), sorts it, and compares it line
// by line with EXPORT, the output of `redis-cli ZRANGE <key> <start> <stop> WITHSCORES` in rank
// order (member and score on alternate lines, as feed_payload_uds.sh writes goblin.zrange).
// Scores compare as numbers (servers print them in their own shortest form). Prints
//   leaderboard check: EXPORT MATCHES the payload (N members)
// or the first difference, and exits 0 only on a match. ECHO markers are skipped; any other
// command than ZADD with one score/member pair stops it (exit 2).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void Fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "leaderboard_check: %s%s\n", what, detail);
  std::exit(2);
}

// Buffered RESP reader over a FILE: yields one command's arguments at a time.
class RespReader {
 public:
  explicit RespReader(FILE* f) : f_(f), buffer_(kChunk) {}

  bool Next(std::vector<std::string_view>* args) {
    args->clear();
    std::string_view line;
    if (!Line(&line)) return false;
    if (line.empty() || line[0] != '*') Fail("payload: expected a RESP array");
    const long count = std::strtol(std::string(line.substr(1)).c_str(), nullptr, 10);
    scratch_.clear();
    std::vector<std::pair<size_t, size_t>> spans;
    for (long i = 0; i < count; ++i) {
      if (!Line(&line) || line.empty() || line[0] != '$') Fail("payload: expected a bulk string");
      const size_t n = std::strtoul(std::string(line.substr(1)).c_str(), nullptr, 10);
      std::string_view bytes;
      if (!Bytes(n + 2, &bytes)) Fail("payload: truncated bulk string");
      spans.emplace_back(scratch_.size(), n);
      scratch_.append(bytes.substr(0, n));
    }
    for (const auto& [at, n] : spans) args->push_back(std::string_view(scratch_).substr(at, n));
    return true;
  }

 private:
  static constexpr size_t kChunk = 8 << 20;

  bool Fill() {
    if (start_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    const size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, f_);
    end_ += got;
    return got > 0;
  }

  bool Line(std::string_view* out) {
    for (;;) {
      const char* base = buffer_.data() + start_;
      const void* cr = std::memchr(base, '\r', end_ - start_);
      if (cr != nullptr && static_cast<const char*>(cr) + 1 < buffer_.data() + end_) {
        const size_t n = static_cast<const char*>(cr) - base;
        line_.assign(base, n);
        start_ += n + 2;
        *out = line_;
        return true;
      }
      if (!Fill()) {
        if (start_ != end_) Fail("payload: truncated line");
        return false;
      }
    }
  }

  bool Bytes(size_t n, std::string_view* out) {
    while (end_ - start_ < n) {
      if (!Fill()) return false;
    }
    *out = std::string_view(buffer_.data() + start_, n);
    start_ += n;
    return true;
  }

  FILE* f_;
  std::vector<char> buffer_;
  size_t start_ = 0, end_ = 0;
  std::string line_, scratch_;
};

bool ReadExportLine(FILE* f, std::string* out) {
  out->clear();
  int c;
  while ((c = std::fgetc(f)) != EOF && c != '\n') out->push_back(static_cast<char>(c));
  return c != EOF || !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: leaderboard_check PAYLOAD.resp EXPORT.zrange\n");
    return 2;
  }
  FILE* payload = std::fopen(argv[1], "rb");
  if (payload == nullptr) Fail("cannot open ", argv[1]);
  std::unordered_map<std::string, double> last;
  RespReader reader(payload);
  std::vector<std::string_view> args;
  unsigned long long commands = 0;
  while (reader.Next(&args)) {
    if (args.size() == 2 && (args[0] == "ECHO" || args[0] == "echo")) continue;
    if (args.size() != 4 || (args[0] != "ZADD" && args[0] != "zadd")) {
      Fail("payload: not a ZADD key score member command");
    }
    char* end = nullptr;
    const std::string score(args[2]);
    const double value = std::strtod(score.c_str(), &end);
    if (end == score.c_str()) Fail("payload: bad score ", score.c_str());
    last[std::string(args[3])] = value;
    ++commands;
  }
  std::fclose(payload);
  std::vector<std::pair<double, std::string>> expected;
  expected.reserve(last.size());
  for (auto& [member, score] : last) expected.emplace_back(score, member);
  last = {};
  std::sort(expected.begin(), expected.end());

  FILE* exported = std::fopen(argv[2], "rb");
  if (exported == nullptr) Fail("cannot open ", argv[2]);
  std::string member, score;
  size_t rank = 0;
  while (ReadExportLine(exported, &member)) {
    if (!ReadExportLine(exported, &score)) Fail("export: a member without a score");
    if (rank >= expected.size()) {
      std::printf("leaderboard check: %s DIFFERS: more than the %zu members the payload makes\n",
                  argv[2], expected.size());
      return 1;
    }
    const auto& [want_score, want_member] = expected[rank];
    if (member != want_member || std::strtod(score.c_str(), nullptr) != want_score) {
      std::printf("leaderboard check: %s DIFFERS at rank %zu: %s %s, the payload makes %s %.17g\n",
                  argv[2], rank, member.c_str(), score.c_str(), want_member.c_str(), want_score);
      return 1;
    }
    ++rank;
  }
  std::fclose(exported);
  if (rank != expected.size()) {
    std::printf("leaderboard check: %s DIFFERS: %zu members, the payload makes %zu\n", argv[2],
                rank, expected.size());
    return 1;
  }
  std::printf("leaderboard check: %s MATCHES the payload (%zu members, %llu ZADDs)\n", argv[2],
              rank, commands);
  return 0;
}
