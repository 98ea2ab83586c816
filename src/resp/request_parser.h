// Splits a client's input bytes into requests: RESP multibulk (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`)
// or inline (`GET k\n`, telnet style), with Redis's limits and error texts.
//
// Invariants:
//  1. Parse() never reads past the bytes it is given and never keeps a pointer into them: the
//     argument views it returns point into the caller's buffer (multibulk) or into the parser's
//     own storage (inline), and stay valid until the next Parse() call or buffer change.
//  2. A request is consumed whole or not at all; an incomplete request reports how many bytes
//     it needs at least (when known), so huge bulks arriving in pieces are not re-scanned.
//  3. After kError the connection is beyond repair: the caller replies with error() and closes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

struct ProtocolLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  int64_t max_multibulk_len = 2147483647;      // Redis 7 accepts `*<n>` up to INT_MAX
  // Before AUTH succeeds Redis accepts at most 10 arguments of at most 16384 bytes each
  // ("unauthenticated multibulk length" / "unauthenticated bulk length"), so an
  // unauthenticated peer cannot make the server buffer gigabytes.
  bool authenticated = true;
};

class RequestParser {
 public:
  enum class Status { kRequest, kIncomplete, kError };

  // Longest inline request and longest `*<n>` / `$<n>` header line accepted (Redis: 64 KB).
  static constexpr size_t kMaxInlineSize = 64 * 1024;

  // Parses one request from the front of data. On kRequest fills *args (possibly empty: an
  // empty inline line or `*0`, which the caller skips) and *consumed.
  Status Parse(std::string_view data, const ProtocolLimits& limits,
               std::vector<std::string_view>* args, size_t* consumed);

  // The Redis error text of the last kError, without the leading '-' (e.g. "ERR Protocol
  // error: invalid bulk length").
  const std::string& error() const { return error_; }

  // After kIncomplete: the buffer must hold at least this many bytes before a new attempt can
  // succeed (0 when unknown).
  size_t bytes_needed() const { return bytes_needed_; }

 private:
  Status ParseInline(std::string_view data, std::vector<std::string_view>* args, size_t* consumed);
  Status ParseMultibulk(std::string_view data, const ProtocolLimits& limits,
                        std::vector<std::string_view>* args, size_t* consumed);
  Status Fail(std::string message);

  std::string error_;
  size_t bytes_needed_ = 0;
  std::vector<std::string> inline_args_;
};

// The name and first argument of a request read ahead, for prefetching its key.
struct PeekedRequest {
  std::string_view name;
  std::string_view first;  // empty when the request has no argument after its name
};

// Reads ahead over the complete multibulk requests at the front of data, up to out.size() of
// them, and returns how many it found. It stops at the first inline, incomplete or malformed
// request, or one of more than 64 arguments: what it reports only guides prefetching, and Parse()
// stays the authority on every byte. The views point into data.
size_t PeekRequests(std::string_view data, std::span<PeekedRequest> out);

// Splits an inline request line into arguments the way Redis's sdssplitargs does (inline
// requests, redis.conf lines): blanks (isspace) separate arguments, but inside an unquoted
// argument only ' ', \t, \r and \n end it (a \v or \f stays part of it); "double quotes" take
// \n \r \t \b \a \xHH and \<any> (that character itself); 'single quotes' take only \'.
// Returns false on unbalanced quotes or a closing quote followed by a non-blank.
bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out);

}  // namespace goblin
