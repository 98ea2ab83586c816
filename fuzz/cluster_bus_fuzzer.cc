// The cluster bus's messages (resp/cluster_bus_message.h), as a peer on the bus port sends
// them: a link reads the 8-byte head, takes the announced length and decodes that many bytes.
// Every input is cut the same way here: messages one after the other until the bytes run out.
//
// Checked: nothing reads past the bytes given (the sanitizers), a length the head refuses is
// never decoded, and a message that decodes is encoded back to bytes that decode to the same
// message and encode to the same bytes again (Encode and Decode are inverses on what Decode
// accepts, the unknown extensions and a MODULE body aside, which Goblin drops).
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "resp/cluster_bus_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (input.size() >= 8) {
    std::string error;
    const std::optional<uint32_t> length = goblin::cluster::AnnouncedLength(input, &error);
    if (!length) return 0;  // the link is dropped
    FUZZ_CHECK(*length >= goblin::cluster::kHeaderBytes);
    if (*length > input.size()) return 0;  // the peer has not sent the rest
    const std::optional<goblin::cluster::BusMessage> message =
        goblin::cluster::Decode(input.substr(0, *length), &error);
    input.remove_prefix(*length);
    if (!message) continue;
    const std::string encoded = goblin::cluster::Encode(*message);
    const std::optional<goblin::cluster::BusMessage> again =
        goblin::cluster::Decode(encoded, &error);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(goblin::cluster::Encode(*again) == encoded);
  }
  return 0;
}
