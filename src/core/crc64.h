// CRC-64 as Redis computes it for RDB files and DUMP payloads (the Jones polynomial,
// reflected, initial value 0, no final xor): crc64(0, "123456789") = 0xe9c6d914c4b8d9ca.
#pragma once

#include <cstdint>
#include <string_view>

namespace goblin {

// Continues crc over data (start with 0).
uint64_t Crc64(uint64_t crc, std::string_view data);

}  // namespace goblin
