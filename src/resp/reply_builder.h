// Writes replies into a client's output buffer in RESP2 or RESP3.
//
// Each method appends one complete reply (or the header of an aggregate, whose elements the
// caller then appends). Shapes that RESP2 lacks degrade the way Redis degrades them: maps
// become flat arrays, sets become arrays, doubles become bulk strings, booleans integers,
// verbatim strings bulk strings, and both nulls become `$-1` / `*-1`.
//
// A limit on the buffer's size stops a reply that has grown past what its client may hold
// (the server sets it around each command from the client's output limits): from the byte
// that reaches the limit on, every method appends nothing, since the client will be closed
// unanswered, and loops that build long replies ask over_limit() to stop early.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "resp/output_buffer.h"

namespace goblin {

class ReplyBuilder {
 public:
  explicit ReplyBuilder(OutputBuffer* out) : out_(out) {}

  int protocol() const { return protocol_; }
  void set_protocol(int version) { protocol_ = version; }
  bool resp3() const { return protocol_ >= 3; }

  void Ok() { Raw("+OK\r\n"); }
  void Simple(std::string_view text);
  // REQUIRES: text begins with an error code ("ERR ...", "WRONGTYPE ..."). CR and LF in it
  // become spaces.
  void Error(std::string_view text);
  void Integer(int64_t value);
  void Bulk(std::string_view bytes);
  void Null();       // a missing bulk string: $-1 / _
  void NullArray();  // a missing aggregate: *-1 / _
  void Array(size_t count);
  void Map(size_t pairs);
  void Set(size_t count);
  void Push(size_t count);  // RESP3 only; RESP2 clients get an array
  void Double(double value);
  void Bool(bool value);
  // INFO and friends: =len\r\ntxt:... in RESP3; format is three characters.
  void Verbatim(std::string_view text, std::string_view format = "txt");
  void BigNumber(std::string_view digits);  // (digits in RESP3, a bulk string in RESP2
  void Raw(std::string_view bytes) {
    if (!over_limit()) out_->append(bytes);
  }

  // The buffer size at which replies stop (the maximum: never).
  size_t limit() const { return limit_; }
  void set_limit(size_t bytes) { limit_ = bytes; }
  // Whether the buffer has reached the limit: the reply being built will not be sent.
  bool over_limit() const { return out_->size() >= limit_; }
  // How many more bytes fit before the limit.
  size_t room() const { return over_limit() ? 0 : limit_ - out_->size(); }

  OutputBuffer* buffer() { return out_; }
  // Replies go to out from now on (a replica's replies are set aside from its stream).
  void set_buffer(OutputBuffer* out) { out_ = out; }

 private:
  void Header(char type, int64_t count);

  OutputBuffer* out_;
  int protocol_ = 2;
  size_t limit_ = std::numeric_limits<size_t>::max();
};

}  // namespace goblin
