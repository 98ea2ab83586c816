// pgn2events: Lichess PGN dumps -> dated rating events / ZADD payloads.
//
// Reads .pgn, .pgn.zst (libzstd when built with -DPGN_WITH_LIBZSTD, else a `zstd -dc` pipe) or
// "-" (stdin, plain PGN) in the order given. Each game's UTCDate / White / Black / WhiteElo /
// BlackElo header tags become up to two events (White first, then Black); a missing, "?" or
// non-numeric rating (or a missing/"?" name) drops that one observation, not the game. Games whose
// UTCDate is outside [--from, --to] (inclusive) or has no usable UTCDate are skipped.
//
// Output formats (--format), shared with bench/lichess/synth:
//   events  (default) one line per event: YYYY-MM-DD<TAB>player<TAB>rating
//   cmd     inline commands for `redis-cli` reply-per-command mode:
//             ZADD leaderboard <rating> <player>
//           and after the last command of each date:  ECHO lichess-date:YYYY-MM-DD
//   resp    the same commands and markers as RESP arrays (for `redis-cli --pipe`)
// A date marker is written when the date moves forward; a game dated earlier than the current
// date (dumps are only nearly sorted) stays in the current date's block and is counted in the
// statistics printed on stderr.
//
// Build: see bench/lichess/Makefile, or
//   g++ -std=c++20 -O2 -DPGN_WITH_LIBZSTD -o pgn2events pgn2events.cc -lzstd
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "payload_writer.h"

#ifdef PGN_WITH_LIBZSTD
#include <zstd.h>
#endif

namespace {

// ---- output: payload_writer.h ----------------------------------------------------------------
using lichess::Format;
using lichess::Writer;

// ---- input -----------------------------------------------------------------------------------
class Source {
public:
    virtual ~Source() = default;
    // Returns bytes read into buf (0 at end of input).
    virtual size_t read(char* buf, size_t cap) = 0;
};

class FileSource : public Source {
public:
    explicit FileSource(FILE* f, bool is_pipe = false) : f_(f), pipe_(is_pipe) {}
    ~FileSource() override {
        if (!f_ || f_ == stdin) return;
        if (pipe_) {
            int st = pclose(f_);
            if (st != 0) { std::fprintf(stderr, "pgn2events: zstd -dc failed (status %d)\n", st); std::exit(1); }
        } else {
            std::fclose(f_);
        }
    }
    size_t read(char* buf, size_t cap) override {
        size_t n = std::fread(buf, 1, cap, f_);
        if (n == 0 && std::ferror(f_)) { std::perror("read"); std::exit(1); }
        return n;
    }

private:
    FILE* f_;
    bool pipe_;
};

#ifdef PGN_WITH_LIBZSTD
class ZstdSource : public Source {
public:
    ZstdSource(FILE* f, std::string name) : f_(f), name_(std::move(name)) {
        ds_ = ZSTD_createDStream();
        ZSTD_initDStream(ds_);
        inbuf_.resize(ZSTD_DStreamInSize());
        in_ = {inbuf_.data(), 0, 0};
    }
    ~ZstdSource() override {
        ZSTD_freeDStream(ds_);
        std::fclose(f_);
    }
    size_t read(char* buf, size_t cap) override {
        ZSTD_outBuffer out{buf, cap, 0};
        while (out.pos == 0) {
            if (in_.pos == in_.size) {
                size_t n = std::fread(inbuf_.data(), 1, inbuf_.size(), f_);
                if (n == 0) {
                    if (std::ferror(f_)) { std::perror(name_.c_str()); std::exit(1); }
                    if (last_ret_ != 0) {
                        std::fprintf(stderr, "pgn2events: %s: truncated zstd stream\n", name_.c_str());
                        std::exit(1);
                    }
                    return 0;
                }
                in_ = {inbuf_.data(), n, 0};
            }
            last_ret_ = ZSTD_decompressStream(ds_, &out, &in_);
            if (ZSTD_isError(last_ret_)) {
                std::fprintf(stderr, "pgn2events: %s: %s\n", name_.c_str(), ZSTD_getErrorName(last_ret_));
                std::exit(1);
            }
        }
        return out.pos;
    }

private:
    FILE* f_;
    std::string name_;
    ZSTD_DStream* ds_;
    std::vector<char> inbuf_;
    ZSTD_inBuffer in_;
    size_t last_ret_ = 0;
};
#endif

bool ends_with(std::string_view s, std::string_view suf) {
    return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

[[maybe_unused]] std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

Source* open_source(const std::string& path) {
    if (path == "-") return new FileSource(stdin);
    if (ends_with(path, ".zst")) {
#ifdef PGN_WITH_LIBZSTD
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) { std::perror(path.c_str()); std::exit(1); }
        return new ZstdSource(f, path);
#else
        FILE* chk = std::fopen(path.c_str(), "rb");
        if (!chk) { std::perror(path.c_str()); std::exit(1); }
        std::fclose(chk);
        std::string cmd = "zstd -dc -- " + shell_quote(path);
        FILE* p = popen(cmd.c_str(), "r");
        if (!p) { std::perror("popen zstd"); std::exit(1); }
        return new FileSource(p, true);
#endif
    }
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { std::perror(path.c_str()); std::exit(1); }
    return new FileSource(f);
}

// ---- PGN parsing -----------------------------------------------------------------------------
struct Stats {
    uint64_t games = 0, in_range = 0, out_of_range = 0, no_date = 0, events = 0, dropped = 0,
             out_of_order = 0, dates = 0;
};

// "2013.01.01" -> "2013-01-01"; false if not a full date.
bool normalize_date(std::string_view v, std::string& out) {
    if (v.size() != 10) return false;
    for (size_t i = 0; i < 10; ++i) {
        if (i == 4 || i == 7) {
            if (v[i] != '.' && v[i] != '-') return false;
        } else if (v[i] < '0' || v[i] > '9') {
            return false;
        }
    }
    out.assign(v.data(), 10);
    out[4] = '-';
    out[7] = '-';
    return true;
}

// A rating is a run of 1-7 ASCII digits; anything else ("?", "", "1500?") drops the observation.
bool parse_rating(std::string_view v, int& r) {
    if (v.empty() || v.size() > 7) return false;
    int x = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return false;
        x = x * 10 + (c - '0');
    }
    r = x;
    return true;
}

class Converter {
public:
    Converter(Writer& w, std::string from, std::string to) : w_(w), from_(std::move(from)), to_(std::move(to)) {}

    void line(std::string_view l) {
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        if (!l.empty() && l.front() == '[') {
            if (!in_headers_) {  // a new header block: the previous game (if any) is complete
                finish_game();
                in_headers_ = true;
                have_game_ = true;
            }
            tag(l);
            return;
        }
        // Blank line or movetext: the header block (if any) is complete.
        if (in_headers_) {
            in_headers_ = false;
        }
    }
    void finish() {
        finish_game();
        if (!cur_date_.empty()) w_.marker(cur_date_);
    }
    const Stats& stats() const { return st_; }

private:
    void tag(std::string_view l) {
        // [Name "Value"]
        size_t sp = l.find(' ');
        if (sp == std::string_view::npos) return;
        std::string_view name = l.substr(1, sp - 1);
        size_t q1 = l.find('"', sp);
        size_t q2 = l.rfind('"');
        if (q1 == std::string_view::npos || q2 == q1) return;
        std::string_view raw = l.substr(q1 + 1, q2 - q1 - 1);
        std::string* dst = nullptr;
        if (name == "UTCDate") dst = &date_;
        else if (name == "White") dst = &white_;
        else if (name == "Black") dst = &black_;
        else if (name == "WhiteElo") dst = &white_elo_;
        else if (name == "BlackElo") dst = &black_elo_;
        else return;
        dst->clear();
        for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
            dst->push_back(raw[i]);
        }
    }
    void finish_game() {
        if (!have_game_) return;
        have_game_ = false;
        st_.games++;
        std::string date;
        bool ok = normalize_date(date_, date);
        if (!ok) {
            st_.no_date++;
        } else if ((!from_.empty() && date < from_) || (!to_.empty() && date > to_)) {
            st_.out_of_range++;
        } else {
            st_.in_range++;
            if (cur_date_.empty()) {
                cur_date_ = date;
                st_.dates++;
            } else if (date > cur_date_) {
                w_.marker(cur_date_);
                cur_date_ = date;
                st_.dates++;
            } else if (date < cur_date_) {
                st_.out_of_order++;
            }
            observe(date, white_, white_elo_);
            observe(date, black_, black_elo_);
        }
        date_.clear(); white_.clear(); black_.clear(); white_elo_.clear(); black_elo_.clear();
    }
    void observe(const std::string& date, const std::string& player, const std::string& elo) {
        int r;
        if (player.empty() || player == "?" || !parse_rating(elo, r)) {
            st_.dropped++;
            return;
        }
        st_.events++;
        w_.event(date, player, r);
    }

    Writer& w_;
    std::string from_, to_;
    std::string cur_date_;
    std::string date_, white_, black_, white_elo_, black_elo_;
    bool in_headers_ = false;
    bool have_game_ = false;
    Stats st_;
};

bool valid_date_arg(const std::string& s) {
    std::string tmp;
    return normalize_date(s, tmp) && tmp == s;
}

[[noreturn]] void usage(int code) {
    std::fprintf(code ? stderr : stdout,
                 "usage: pgn2events [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format events|cmd|resp]\n"
                 "                  [--key leaderboard] [-o OUT] [--quiet] FILE.pgn[.zst]|- ...\n"
                 "Files are read in the order given (give monthly dumps oldest first).\n");
    std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    std::string from, to, key = "leaderboard", out_path;
    Format fmt = Format::Events;
    bool quiet = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&]() -> std::string {
            if (i + 1 >= argc) usage(2);
            return argv[++i];
        };
        if (a == "--from") from = need();
        else if (a == "--to") to = need();
        else if (a == "--key") key = need();
        else if (a == "-o" || a == "--output") out_path = need();
        else if (a == "--quiet") quiet = true;
        else if (a == "--format") {
            std::string f = need();
            if (f == "events") fmt = Format::Events;
            else if (f == "cmd") fmt = Format::Cmd;
            else if (f == "resp") fmt = Format::Resp;
            else { std::fprintf(stderr, "pgn2events: unknown format '%s'\n", f.c_str()); return 2; }
        } else if (a == "-h" || a == "--help") usage(0);
        else if (a.size() > 1 && a[0] == '-' && a != "-") { std::fprintf(stderr, "pgn2events: unknown option %s\n", a.c_str()); usage(2); }
        else files.push_back(a);
    }
    if (files.empty()) usage(2);
    if ((!from.empty() && !valid_date_arg(from)) || (!to.empty() && !valid_date_arg(to))) {
        std::fprintf(stderr, "pgn2events: dates are YYYY-MM-DD\n");
        return 2;
    }
    FILE* out = stdout;
    if (!out_path.empty() && out_path != "-") {
        out = std::fopen(out_path.c_str(), "wb");
        if (!out) { std::perror(out_path.c_str()); return 1; }
    }
    Stats st;
    {
        Writer w(out, fmt, key);
        Converter conv(w, from, to);
        std::vector<char> buf(1 << 20);
        std::string carry;
        for (const auto& path : files) {
            Source* src = open_source(path);
            size_t n;
            while ((n = src->read(buf.data(), buf.size())) > 0) {
                const char* p = buf.data();
                const char* end = p + n;
                while (p < end) {
                    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
                    if (!nl) { carry.append(p, end - p); break; }
                    if (!carry.empty()) {
                        carry.append(p, nl - p);
                        conv.line(carry);
                        carry.clear();
                    } else {
                        conv.line(std::string_view(p, nl - p));
                    }
                    p = nl + 1;
                }
            }
            if (!carry.empty()) { conv.line(carry); carry.clear(); }
            conv.line("");  // a file ends its last header block
            delete src;
        }
        conv.finish();
        st = conv.stats();
    }
    if (std::fflush(out) != 0) { std::perror("flush"); return 1; }
    if (out != stdout) std::fclose(out);
    if (!quiet)
        std::fprintf(stderr,
                     "pgn2events: games=%llu in_range=%llu out_of_range=%llu no_date=%llu events=%llu "
                     "dropped_observations=%llu out_of_order_games=%llu dates=%llu\n",
                     (unsigned long long)st.games, (unsigned long long)st.in_range,
                     (unsigned long long)st.out_of_range, (unsigned long long)st.no_date,
                     (unsigned long long)st.events, (unsigned long long)st.dropped,
                     (unsigned long long)st.out_of_order, (unsigned long long)st.dates);
    return 0;
}
