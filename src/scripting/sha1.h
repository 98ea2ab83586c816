// SHA1 in lower-case hex: script names (EVALSHA) and redis.sha1hex.
#pragma once

#include <string>
#include <string_view>

namespace goblin {

std::string Sha1Hex(std::string_view data);

}  // namespace goblin
