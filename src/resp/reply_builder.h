// Writes replies into a client's output buffer in RESP2 or RESP3.
//
// Each method appends one complete reply (or the header of an aggregate, whose elements the
// caller then appends). Shapes that RESP2 lacks degrade the way Redis degrades them: maps
// become flat arrays, sets become arrays, doubles become bulk strings, booleans integers,
// verbatim strings bulk strings, and both nulls become `$-1` / `*-1`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

class ReplyBuilder {
 public:
  explicit ReplyBuilder(std::string* out) : out_(out) {}

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
  void Raw(std::string_view bytes) { out_->append(bytes); }

  std::string* buffer() { return out_; }
  // Replies go to out from now on (a replica's replies are set aside from its stream).
  void set_buffer(std::string* out) { out_ = out; }

 private:
  void Header(char type, int64_t count);

  std::string* out_;
  int protocol_ = 2;
};

}  // namespace goblin
