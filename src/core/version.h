// Versions reported to clients. Client libraries pick features from redis_version, so it names
// the newest Redis release whose whole standalone command set Goblin serves: 7.4 (hash field
// expiry, HSCAN NOVALUES, CLIENT KILL MAXAGE, XREAD +, os.clock in scripts). The additions of
// Redis 8.x that Goblin also serves are listed in docs/COMMANDS.md; a client gating on 8.x does
// not use them, which costs it nothing, where claiming 8.x would promise what is not served.
// The patch level is not a statement about security fixes: goblin_version is Goblin's own.
#pragma once

namespace goblin {

inline constexpr const char* kGoblinVersion = "0.1.0";
inline constexpr const char* kRedisVersion = "7.4.0";
inline constexpr int kRedisVersionNum = 0x070400;  // redis.REDIS_VERSION_NUM in scripts

}  // namespace goblin
