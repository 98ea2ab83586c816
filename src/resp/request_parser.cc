#include "resp/request_parser.h"

#include <algorithm>
#include <cstring>

#include "core/string_number.h"

namespace goblin {
namespace {

// Finds "\r" from `from`; Redis frames header lines by '\r' and skips the '\n' after it.
size_t FindCr(std::string_view data, size_t from) { return data.find('\r', from); }

// Redis's limits for a client that has not authenticated yet.
constexpr int64_t kMaxUnauthenticatedArgs = 10;
constexpr int64_t kMaxUnauthenticatedBulk = 16384;

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  const size_t n = line.size();
  // Blanks between arguments and after a closing quote are isspace(); an unquoted argument
  // ends only at one of the four characters sdssplitargs switches on.
  auto is_space = [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
  };
  auto ends_unquoted = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (true) {
    while (i < n && is_space(line[i])) ++i;
    if (i >= n) return true;
    std::string current;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;  // unterminated quotes
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && HexDigitValue(line[i + 2]) >= 0 &&
            HexDigitValue(line[i + 3]) >= 0) {
          current.push_back(
              static_cast<char>(HexDigitValue(line[i + 2]) * 16 + HexDigitValue(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          char e = line[++i];
          switch (e) {
            case 'n':
              current.push_back('\n');
              break;
            case 'r':
              current.push_back('\r');
              break;
            case 't':
              current.push_back('\t');
              break;
            case 'b':
              current.push_back('\b');
              break;
            case 'a':
              current.push_back('\a');
              break;
            default:
              current.push_back(e);
              break;
          }
        } else if (c == '"') {
          // The closing quote must be followed by a space or the end of the line.
          if (i + 1 < n && !is_space(line[i + 1])) return false;
          done = true;
        } else {
          current.push_back(c);
        }
      } else if (in_single) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          ++i;
          current.push_back('\'');
        } else if (c == '\'') {
          if (i + 1 < n && !is_space(line[i + 1])) return false;
          done = true;
        } else {
          current.push_back(c);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (ends_unquoted(c)) {
          done = true;
        } else if (c == '"') {
          in_double = true;
        } else if (c == '\'') {
          in_single = true;
        } else {
          current.push_back(c);
        }
      }
      if (i < n) ++i;
    }
    out->push_back(std::move(current));
  }
}

RequestParser::Status RequestParser::Fail(std::string message) {
  error_ = "ERR Protocol error: " + std::move(message);
  return Status::kError;
}

RequestParser::Status RequestParser::Parse(std::string_view data, const ProtocolLimits& limits,
                                           std::vector<std::string_view>* args, size_t* consumed) {
  args->clear();
  bytes_needed_ = 0;
  if (data.empty()) return Status::kIncomplete;
  if (data[0] == '*') return ParseMultibulk(data, limits, args, consumed);
  return ParseInline(data, args, consumed);
}

RequestParser::Status RequestParser::ParseInline(std::string_view data,
                                                 std::vector<std::string_view>* args,
                                                 size_t* consumed) {
  size_t newline = data.find('\n');
  if (newline == std::string_view::npos) {
    if (data.size() > kMaxInlineSize) return Fail("too big inline request");
    return Status::kIncomplete;
  }
  std::string_view line = data.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!SplitInlineArgs(line, &inline_args_)) return Fail("unbalanced quotes in request");
  for (const std::string& arg : inline_args_) args->emplace_back(arg);
  *consumed = newline + 1;
  return Status::kRequest;
}

RequestParser::Status RequestParser::ParseMultibulk(std::string_view data,
                                                    const ProtocolLimits& limits,
                                                    std::vector<std::string_view>* args,
                                                    size_t* consumed) {
  size_t cr = FindCr(data, 1);
  if (cr == std::string_view::npos) {
    if (data.size() > kMaxInlineSize) return Fail("too big mbulk count string");
    return Status::kIncomplete;
  }
  if (cr + 1 >= data.size()) return Status::kIncomplete;  // the '\n' has not arrived yet
  int64_t count;
  std::string_view count_text = data.substr(1, cr - 1);
  if (!ParseInt64(count_text, &count) || count > limits.max_multibulk_len) {
    return Fail("invalid multibulk length");
  }
  if (!limits.authenticated && count > kMaxUnauthenticatedArgs) {
    return Fail("unauthenticated multibulk length");
  }
  size_t pos = cr + 2;
  if (count <= 0) {
    *consumed = pos;
    return Status::kRequest;
  }
  // Reserve lazily: a hostile `*1000000000` must not allocate before its bulks arrive.
  args->reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  for (int64_t i = 0; i < count; ++i) {
    if (pos >= data.size()) return Status::kIncomplete;
    cr = FindCr(data, pos);
    if (cr == std::string_view::npos) {
      if (data.size() - pos > kMaxInlineSize) return Fail("too big bulk count string");
      return Status::kIncomplete;
    }
    if (cr + 1 >= data.size()) return Status::kIncomplete;  // as Redis: wait for the '\n'
    if (data[pos] != '$') {
      return Fail(std::string("expected '$', got '") + data[pos] + "'");
    }
    int64_t len;
    if (!ParseInt64(data.substr(pos + 1, cr - pos - 1), &len) || len < 0 ||
        len > limits.max_bulk_len) {
      return Fail("invalid bulk length");
    }
    if (!limits.authenticated && len > kMaxUnauthenticatedBulk) {
      return Fail("unauthenticated bulk length");
    }
    size_t body = cr + 2;
    size_t end = body + static_cast<size_t>(len) + 2;
    if (end > data.size()) {
      bytes_needed_ = end;
      return Status::kIncomplete;
    }
    args->emplace_back(data.data() + body, static_cast<size_t>(len));
    pos = end;
  }
  *consumed = pos;
  return Status::kRequest;
}

namespace {

constexpr size_t kPeekMaxArguments = 64;

// Reads "<type><digits>\r\n" at data[*pos]; advances *pos past it.
bool PeekLength(std::string_view data, char type, size_t* pos, size_t* length) {
  if (*pos >= data.size() || data[*pos] != type) return false;
  size_t at = *pos + 1;
  size_t value = 0;
  const size_t digits_end = std::min(data.size(), at + 18);  // no overflow, and bounded
  const size_t start = at;
  while (at < digits_end && data[at] >= '0' && data[at] <= '9') {
    value = value * 10 + static_cast<size_t>(data[at] - '0');
    ++at;
  }
  // As Parse(): the line ends at its '\r', and the byte after it is skipped unread.
  if (at == start || at + 1 >= data.size() || data[at] != '\r') return false;
  *pos = at + 2;
  *length = value;
  return true;
}

}  // namespace

size_t PeekRequests(std::string_view data, std::span<PeekedRequest> out) {
  size_t found = 0;
  size_t pos = 0;
  while (found < out.size()) {
    size_t count;
    // A request of many arguments is not the pipeline of small ones prefetching is for, and
    // walking it (again at each read while it arrives) would cost more than it saves.
    if (!PeekLength(data, '*', &pos, &count) || count == 0 || count > kPeekMaxArguments) break;
    PeekedRequest request;
    bool complete = true;
    for (size_t arg = 0; arg < count; ++arg) {
      size_t length;
      if (!PeekLength(data, '$', &pos, &length) || length > data.size() - pos ||
          data.size() - pos - length < 2) {
        complete = false;
        break;
      }
      if (arg == 0) request.name = data.substr(pos, length);
      if (arg == 1) request.first = data.substr(pos, length);
      pos += length + 2;
    }
    if (!complete) break;
    out[found++] = request;
  }
  return found;
}

}  // namespace goblin
