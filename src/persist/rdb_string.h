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
// A function record: kOpFunction2 (rdb_format.h), then the library's code as a string.
//
// Trailer of a DUMP payload: the RDB version (2 bytes, little-endian), then the CRC-64 of
// everything before it (8 bytes, little-endian).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

// The RDB version Goblin writes into payloads and files: 10, which every Redis 7 reads, unless
// a hash has field deadlines, which only 12 (Redis 7.4's) can say.
inline constexpr uint16_t kRdbVersionWritten = 10;
inline constexpr uint16_t kRdbVersionFieldExpiry = 12;
// The newest RDB version read (Redis 7.4's).
inline constexpr uint16_t kRdbVersionRead = 12;

void RdbAppendLength(std::string* out, uint64_t length);
// A string as length + bytes, verbatim.
void RdbAppendString(std::string* out, std::string_view bytes);
// A string as Redis's RDB writer stores it: canonical integer text (ParseInt64) of at most 11
// characters that fits 32 bits as C0/C1/C2; else, with compress (rdbcompression), LZF when the
// string is over 20 bytes and LZF saves at least 4 of them; else verbatim.
void RdbAppendEncodedString(std::string* out, std::string_view bytes, bool compress);
// One function library's record (RDB_OPCODE_FUNCTION2 and its code), in an RDB file or a
// FUNCTION DUMP payload.
void RdbAppendFunction(std::string* out, std::string_view code, bool compress);
// Reads one length (not a special encoding) at data[*pos]; false when truncated.
bool RdbReadLength(std::string_view data, size_t* pos, uint64_t* length);
// Reads one string in any encoding; false when truncated or corrupt.
bool RdbReadString(std::string_view data, size_t* pos, std::string* out);
// The same without a copy where it can: *out views data for a verbatim string, or *scratch
// (replaced) for an integer or LZF one.
bool RdbReadStringView(std::string_view data, size_t* pos, std::string* scratch,
                       std::string_view* out);

// Appends the trailer (version and CRC-64) that ends a DUMP payload.
void RdbAppendPayloadTrailer(std::string* payload, uint16_t version = kRdbVersionWritten);
// Checks a payload's trailer: a version Goblin reads and, with verify_checksum, a matching
// CRC-64 (DEBUG SET-SKIP-CHECKSUM-VALIDATION turns that off). *body is the payload without it.
bool RdbCheckPayload(std::string_view payload, std::string_view* body, bool verify_checksum = true);

}  // namespace goblin
