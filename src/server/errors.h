// Error replies shared by the dispatcher, the command families and persistence, with Redis's
// exact texts. A reply text is written once here and never retyped in a command; a text that
// only one command can give and that names that command's own options may stay beside it.
#pragma once

#include <string>
#include <string_view>

namespace goblin::errors {

// An error text that holds user input kept on one line (a reply line cannot hold CR or LF), as
// Redis's addReplyErrorSdsSafe does.
inline std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

// User text quoted in an error, as Redis's printf-style "%s" shows it: up to its first NUL.
inline std::string Quote(std::string_view text) {
  return std::string(text.substr(0, text.find('\0')));
}

// --- Dispatch: names and arity ------------------------------------------------------------

// command_name is the full lowercase name: "get", "config|get".
inline std::string WrongArity(std::string_view command_name) {
  return "ERR wrong number of arguments for '" + std::string(command_name) + "' command";
}

// The dispatcher's reply to a subcommand the container does not have. The subcommand is shown
// up to 128 bytes, as Redis's "%.128s" shows it; container is the upper-case name ("CONFIG").
inline std::string UnknownSubcommand(std::string_view subcommand, std::string_view container) {
  return "ERR unknown subcommand '" + std::string(subcommand.substr(0, 128)) + "'. Try " +
         std::string(container) + " HELP.";
}

// A container's reply when a known subcommand gets arguments it cannot take (Redis's
// addReplySubcommandSyntaxError). container is the upper-case name ("CLIENT").
inline std::string UnknownSubcommandOrArity(std::string_view subcommand,
                                            std::string_view container) {
  return "ERR unknown subcommand or wrong number of arguments for '" + Quote(subcommand) +
         "'. Try " + std::string(container) + " HELP.";
}

// --- Types ------------------------------------------------------------------------------------

inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kHashValueNotInteger = "ERR hash value is not an integer";
inline constexpr std::string_view kHashValueNotFloat = "ERR hash value is not a float";
inline constexpr std::string_view kWeightNotFloat = "ERR weight value is not a float";
inline constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr std::string_view kMinMaxNotLexRange = "ERR min or max not valid string range item";
inline constexpr std::string_view kBitOffsetNotInteger =
    "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kBitNotInteger = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kProtocolNotInteger =
    "ERR Protocol version is not an integer or out of range";
inline constexpr std::string_view kInvalidCursor = "ERR invalid cursor";
// A string that fails Redis's HyperLogLog header checks, and one whose registers do not decode.
inline constexpr std::string_view kNotHyperLogLog =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kCorruptHyperLogLog = "INVALIDOBJ Corrupted HLL object detected";

// --- Ranges -----------------------------------------------------------------------------------

inline constexpr std::string_view kOutOfRange = "ERR value is out of range";
inline constexpr std::string_view kPositive = "ERR value is out of range, must be positive";
// An argument stored in a C int (database indexes and the like).
inline constexpr std::string_view kOutOfInt32Range =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
// A count whose sign is an option (HRANDFIELD, SRANDMEMBER, ZRANDMEMBER): -INT64_MIN has no
// int64 value, so the range is symmetric.
inline constexpr std::string_view kOutOfCountRange =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kDecrementOverflow = "ERR decrement would overflow";
inline constexpr std::string_view kNotFloatOrInf = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kNanOrInfinity = "ERR value is NaN or Infinity";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kOffsetOutOfRange = "ERR offset is out of range";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kNumkeysNotPositive = "ERR numkeys should be greater than 0";
inline constexpr std::string_view kTooManyKeys =
    "ERR Number of keys can't be greater than number of args";
inline constexpr std::string_view kCountNotPositive = "ERR count should be greater than 0";
// GEOSEARCH's and XAUTOCLAIM's COUNT.
inline constexpr std::string_view kCountMustBePositive = "ERR COUNT must be > 0";
// REPLCONF rdb-only's and WAITAOF's numlocal.
inline constexpr std::string_view kNotZeroOrOne =
    "ERR value is out of range, value must between 0 and 1";
inline constexpr std::string_view kNegativeLimit = "ERR LIMIT can't be negative";

// command_name as in WrongArity.
inline std::string InvalidExpire(std::string_view command_name) {
  return "ERR invalid expire time in '" + std::string(command_name) + "' command";
}
inline std::string NoInputKeys(std::string_view command_name) {
  return "ERR at least 1 input key is needed for '" + std::string(command_name) + "' command";
}

// Blocking timeouts (BLPOP, BZPOPMIN, ...) and CLIENT PAUSE's.
inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr std::string_view kTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kTimeoutOutOfRange = "ERR timeout is out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";

// WAITAOF (Redis 7.2).
inline constexpr std::string_view kWaitAofWithoutLog =
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";
inline constexpr std::string_view kWaitAofOnReplica =
    "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
    "replicas are just local and are not propagated.";

// --- Everything else ----------------------------------------------------------------------

inline constexpr std::string_view kSyntax = "ERR syntax error";
// DEBUG or MODULE refused by enable-debug-command or enable-module-command.
inline std::string ProtectedCommandRefused(std::string_view command, std::string_view option) {
  return "ERR " + std::string(command) + " command not allowed. If the " + std::string(option) +
         " option is set to \"local\", you can run it from a local connection, otherwise you "
         "need to set this option in the configuration file, and then restart the server.";
}
// SHUTDOWN's reply, and that of every client waiting for a shutdown that is cancelled.
inline constexpr std::string_view kShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs.";
inline constexpr std::string_view kStreamIdTooSmall =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
inline constexpr std::string_view kBadPayload = "ERR DUMP payload version or checksum are wrong";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kOutOfMemory =
    "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kLoading = "LOADING Redis is loading the dataset in memory";
inline constexpr std::string_view kBgsaveInProgress = "ERR Background save already in progress";
inline constexpr std::string_view kNoReplicas = "NOREPLICAS Not enough good replicas to write.";
inline constexpr std::string_view kReadOnlyReplica =
    "READONLY You can't write against a read only replica.";
inline constexpr std::string_view kMasterDown =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
inline constexpr std::string_view kNoKeyArguments = "ERR The command has no key arguments";
inline constexpr std::string_view kInvalidClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";
// CONFIG SET's reply when a value is refused or cannot be put into effect.
inline std::string ConfigSetFailed(std::string_view option, std::string_view reason) {
  return "ERR CONFIG SET failed (possibly related to argument '" + std::string(option) + "') - " +
         std::string(reason);
}
inline std::string UnknownClientType(std::string_view type) {
  return "ERR Unknown client type '" + Quote(type) + "'";
}

}  // namespace goblin::errors
