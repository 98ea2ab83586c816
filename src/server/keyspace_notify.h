// Keyspace notifications: the event classes of `notify-keyspace-events` and their text form.
//
// A change a command makes is announced, when its class is enabled, on two Pub/Sub channels:
// `__keyspace@<db>__:<key>` carries the event name, `__keyevent@<db>__:<event>` the key (K and
// E choose which). Server::NotifyKeyspaceEvent publishes; commands call it through
// commands/command_util.h's Notify, the keyspace through KeyspaceEvents (expired, keymiss, new).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace goblin {

// Redis's NOTIFY_* bits.
enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1 << 0,  // K
  kNotifyKeyevent = 1 << 1,  // E
  kNotifyGeneric = 1 << 2,   // g: DEL, EXPIRE, RENAME, ...
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZset = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m
  kNotifyLoaded = 1 << 12,   // (modules only)
  kNotifyModule = 1 << 13,   // d
  kNotifyNew = 1 << 14,      // n
  // A: every data class (not m and n, which must be named).
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// The flags of a `notify-keyspace-events` value, or nullopt for a character that names no class.
std::optional<uint32_t> ParseNotifyClasses(std::string_view text);
// The value as CONFIG GET shows it: "A" for every data class (n is then not shown, as in
// Redis), else the classes in Redis's order, then K, E and m.
std::string FormatNotifyClasses(uint32_t flags);

}  // namespace goblin
