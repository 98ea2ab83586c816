// Redis's ACL categories: the bit set each command row carries (Command::acl_categories) and
// the one table of their names, in the order Redis lists them (COMMAND INFO, ACL CAT).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

namespace goblin {

enum AclCategory : uint32_t {
  kAclKeyspace = 1 << 0,
  kAclRead = 1 << 1,
  kAclWrite = 1 << 2,
  kAclSet = 1 << 3,
  kAclSortedSet = 1 << 4,
  kAclList = 1 << 5,
  kAclHash = 1 << 6,
  kAclString = 1 << 7,
  kAclBitmap = 1 << 8,
  kAclHyperLogLog = 1 << 9,
  kAclGeo = 1 << 10,
  kAclStream = 1 << 11,
  kAclPubsub = 1 << 12,
  kAclAdmin = 1 << 13,
  kAclFast = 1 << 14,
  kAclSlow = 1 << 15,
  kAclBlocking = 1 << 16,
  kAclDangerous = 1 << 17,
  kAclConnection = 1 << 18,
  kAclTransaction = 1 << 19,
  kAclScripting = 1 << 20,
};

inline constexpr std::pair<AclCategory, std::string_view> kAclCategoryNames[] = {
    {kAclKeyspace, "keyspace"},
    {kAclRead, "read"},
    {kAclWrite, "write"},
    {kAclSet, "set"},
    {kAclSortedSet, "sortedset"},
    {kAclList, "list"},
    {kAclHash, "hash"},
    {kAclString, "string"},
    {kAclBitmap, "bitmap"},
    {kAclHyperLogLog, "hyperloglog"},
    {kAclGeo, "geo"},
    {kAclStream, "stream"},
    {kAclPubsub, "pubsub"},
    {kAclAdmin, "admin"},
    {kAclFast, "fast"},
    {kAclSlow, "slow"},
    {kAclBlocking, "blocking"},
    {kAclDangerous, "dangerous"},
    {kAclConnection, "connection"},
    {kAclTransaction, "transaction"},
    {kAclScripting, "scripting"}};

// The category named `name` (case-insensitive, without the '@'), or 0 for none.
uint32_t AclCategoryByName(std::string_view name);

}  // namespace goblin
