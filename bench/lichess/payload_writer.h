// The payload writer shared by pgn2events and synth: events (date TAB player TAB rating),
// inline ZADD commands, or RESP, with an ECHO lichess-date:YYYY-MM-DD marker after each date.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace lichess {

enum class Format { Events, Cmd, Resp };

class Writer {
public:
    Writer(FILE* out, Format fmt, std::string key) : out_(out), fmt_(fmt), key_(std::move(key)) {
        buf_.reserve(1 << 20);
    }
    ~Writer() { flush(); }
    // date: "YYYY-MM-DD"
    void event(std::string_view date, std::string_view player, int rating) {
        char num[16];
        int nl = std::snprintf(num, sizeof num, "%d", rating);
        std::string_view r(num, static_cast<size_t>(nl));
        switch (fmt_) {
        case Format::Events:
            put(date); put("\t"); put(player); put("\t"); put(r); put("\n");
            break;
        case Format::Cmd:
            put("ZADD "); put(key_); put(" "); put(r); put(" "); put_inline_arg(player); put("\n");
            break;
        case Format::Resp:
            put("*4\r\n$4\r\nZADD\r\n"); bulk(key_); bulk(r); bulk(player);
            break;
        }
        if (buf_.size() > (1 << 20)) flush();
    }
    void marker(std::string_view date) {
        std::string m = "lichess-date:" + std::string(date);
        if (fmt_ == Format::Cmd) { put("ECHO "); put(m); put("\n"); }
        else if (fmt_ == Format::Resp) { put("*2\r\n$4\r\nECHO\r\n"); bulk(m); }
    }
    void flush() {
        if (!buf_.empty()) {
            if (std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) {
                std::perror("write");
                std::exit(1);
            }
            buf_.clear();
        }
    }

private:
    void put(std::string_view s) { buf_.append(s.data(), s.size()); }
    void bulk(std::string_view s) {
        char hdr[24];
        int n = std::snprintf(hdr, sizeof hdr, "$%zu\r\n", s.size());
        buf_.append(hdr, static_cast<size_t>(n));
        put(s); put("\r\n");
    }
    // redis-cli splits lines with sdssplitargs: quote anything outside the Lichess name alphabet.
    void put_inline_arg(std::string_view s) {
        bool plain = !s.empty();
        for (unsigned char c : s)
            if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.')) plain = false;
        if (plain) { put(s); return; }
        put("\"");
        for (unsigned char c : s) {
            char esc[8];
            if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = static_cast<char>(c); buf_.append(esc, 2); }
            else if (c < 32 || c >= 127) { int n = std::snprintf(esc, sizeof esc, "\\x%02x", c); buf_.append(esc, n); }
            else buf_.push_back(static_cast<char>(c));
        }
        put("\"");
    }
    FILE* out_;
    Format fmt_;
    std::string key_;
    std::string buf_;
};

}  // namespace lichess
