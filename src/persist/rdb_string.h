// Redis's RDB encodings of lengths and strings, shared by the RDB file format and the DUMP
// payloads of FUNCTION DUMP (and DUMP/RESTORE).
//
//   length:  00xxxxxx                     6-bit length
//            01xxxxxx xxxxxxxx            14-bit length, big-endian
//            10000000 + 4 bytes           32-bit length, big-endian
//            10000001 + 8 bytes           64-bit length, big-endian
//   string:  length + bytes, or a special encoding 11xxxxxx:
//            C0 int8, C1 int16 (LE), C2 int32 (LE)  an integer written as its decimal text
//            C3 compressed-length, length, LZF data
//
// Trailer of a DUMP payload: the RDB version (2 bytes, little-endian), then the CRC-64 of
// everything before it (8 bytes, little-endian).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

// The RDB version Goblin writes into payloads: 10, which every Redis 7 reads.
inline constexpr uint16_t kRdbVersionWritten = 10;
// The newest RDB version read (Redis 7.2's).
inline constexpr uint16_t kRdbVersionRead = 11;

void RdbAppendLength(std::string* out, uint64_t length);
void RdbAppendString(std::string* out, std::string_view bytes);
// Reads one length (not a special encoding) at data[*pos]; false when truncated.
bool RdbReadLength(std::string_view data, size_t* pos, uint64_t* length);
// Reads one string in any encoding; false when truncated or corrupt.
bool RdbReadString(std::string_view data, size_t* pos, std::string* out);

// Appends the trailer (version and CRC-64) that ends a DUMP payload.
void RdbAppendPayloadTrailer(std::string* payload);
// Checks a payload's trailer: a version Goblin reads and a matching CRC-64. *body is the
// payload without it.
bool RdbCheckPayload(std::string_view payload, std::string_view* body);

}  // namespace goblin
