// The RESP request parser (resp/request_parser.h) on a client's bytes: RESP2 multibulk,
// inline commands, and whatever a hostile peer sends instead.
//
// Input: [flags][cut][stream]. flags bit 0 parses as an unauthenticated client (10 arguments
// of 16 KB at most), bit 1 with a small proto-max-bulk-len. Besides "no crash", each request
// is checked against the parser's invariants:
//  - a request's bytes cut short give kIncomplete (never an error, never a request), and
//    bytes_needed() never asks for more than the whole request;
//  - the request read from a prefix that holds it whole is the same request;
//  - PeekRequests reports only complete requests, and agrees with Parse on the name and first
//    argument of every one Parse accepts.
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "resp/request_parser.h"

namespace {

using goblin::PeekedRequest;
using goblin::ProtocolLimits;
using goblin::RequestParser;

struct Parsed {
  RequestParser::Status status;
  std::vector<std::string> args;  // copies: inline views die at the next Parse
  size_t consumed = 0;
};

Parsed ParseOne(RequestParser& parser, std::string_view data, const ProtocolLimits& limits) {
  std::vector<std::string_view> views;
  Parsed parsed;
  parsed.status = parser.Parse(data, limits, &views, &parsed.consumed);
  if (parsed.status == RequestParser::Status::kRequest) {
    FUZZ_CHECK(parsed.consumed > 0 && parsed.consumed <= data.size());
    parsed.args.assign(views.begin(), views.end());
  }
  return parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  goblin::fuzz::InputReader input(bytes, size);
  const uint8_t flags = input.Byte();
  const uint8_t cut = input.Byte();
  const std::string stream(input.Rest());
  ProtocolLimits limits;
  limits.authenticated = (flags & 1) == 0;
  if (flags & 2) limits.max_bulk_len = 64;

  PeekedRequest peeked[8];
  const size_t peek_count = goblin::PeekRequests(stream, peeked);

  RequestParser parser;
  RequestParser prefix_parser;
  std::string_view rest = stream;
  for (size_t index = 0; !rest.empty(); ++index) {
    const Parsed whole = ParseOne(parser, rest, limits);
    // PeekRequests knows no limits (Parse may still refuse what it reports), but it reports
    // complete requests only, and what Parse accepts it reads the same way.
    if (index < peek_count) {
      FUZZ_CHECK(whole.status != RequestParser::Status::kIncomplete);
      if (whole.status == RequestParser::Status::kRequest) {
        FUZZ_CHECK(!whole.args.empty());
        FUZZ_CHECK(peeked[index].name == whole.args[0]);
        FUZZ_CHECK(peeked[index].first == (whole.args.size() > 1 ? whole.args[1] : ""));
      }
    }
    if (whole.status == RequestParser::Status::kError) {
      FUZZ_CHECK(!parser.error().empty());
      break;
    }
    // A copy, so that the parser cannot lean on bytes past the cut.
    const size_t prefix_length = std::min<size_t>(rest.size(), cut);
    const std::string prefix(rest.substr(0, prefix_length));
    const Parsed part = ParseOne(prefix_parser, prefix, limits);
    if (whole.status == RequestParser::Status::kIncomplete) {
      FUZZ_CHECK(part.status == RequestParser::Status::kIncomplete);
      break;
    }
    if (prefix_length < whole.consumed) {
      FUZZ_CHECK(part.status == RequestParser::Status::kIncomplete);
      FUZZ_CHECK(prefix_parser.bytes_needed() <= whole.consumed);
    } else {
      FUZZ_CHECK(part.status == RequestParser::Status::kRequest);
      FUZZ_CHECK(part.consumed == whole.consumed && part.args == whole.args);
    }
    rest.remove_prefix(whole.consumed);
  }

  // The inline splitter alone, as redis.conf lines and manifests use it.
  std::vector<std::string> words;
  goblin::SplitInlineArgs(stream.substr(0, 4096), &words);
  return 0;
}
