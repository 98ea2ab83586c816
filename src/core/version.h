// Versions reported to clients. Client libraries pick features from redis_version, so it names
// the Redis release whose behaviour Goblin follows; goblin_version is Goblin's own.
#pragma once

namespace goblin {

inline constexpr const char* kGoblinVersion = "0.1.0";
inline constexpr const char* kRedisVersion = "7.2.4";
inline constexpr int kRedisVersionNum = 0x070204;  // redis.REDIS_VERSION_NUM in scripts

}  // namespace goblin
