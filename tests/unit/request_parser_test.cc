// RequestParser against the bytes redis-server 7.0 accepts and rejects. Every error text and
// every accept/wait decision here was read from a real redis-server answering the same bytes
// on a socket.
#include "resp/request_parser.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {
namespace {

using namespace std::string_literals;
using Status = RequestParser::Status;
using Args = std::vector<std::string>;

constexpr size_t kUntouched = 12345;

// One Parse() call over `data`, with the arguments copied out.
struct Result {
  Status status;
  Args args;
  size_t consumed = kUntouched;
  std::string error;
  size_t bytes_needed = 0;
};

Result ParseOnce(RequestParser& parser, std::string_view data,
                 const ProtocolLimits& limits = ProtocolLimits()) {
  std::vector<std::string_view> views{"stale"};
  Result result;
  result.status = parser.Parse(data, limits, &views, &result.consumed);
  for (std::string_view v : views) result.args.emplace_back(v);
  if (result.status == Status::kError) result.error = parser.error();
  if (result.status == Status::kIncomplete) result.bytes_needed = parser.bytes_needed();
  return result;
}

Result ParseOnce(std::string_view data, const ProtocolLimits& limits = ProtocolLimits()) {
  RequestParser parser;
  return ParseOnce(parser, data, limits);
}

std::string Multibulk(const Args& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string Show(std::string_view data) {
  return testing::PrintToString(std::string(data.substr(0, 60)));
}

void ExpectRequest(std::string_view data, const Args& args, size_t consumed,
                   const ProtocolLimits& limits = ProtocolLimits()) {
  SCOPED_TRACE("parsing " + Show(data));
  Result r = ParseOnce(data, limits);
  ASSERT_EQ(r.status, Status::kRequest) << r.error;
  EXPECT_EQ(r.args, args);
  EXPECT_EQ(r.consumed, consumed);
}

void ExpectError(std::string_view data, const std::string& message,
                 const ProtocolLimits& limits = ProtocolLimits()) {
  SCOPED_TRACE("parsing " + Show(data));
  Result r = ParseOnce(data, limits);
  ASSERT_EQ(r.status, Status::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: " + message);
  EXPECT_EQ(r.consumed, kUntouched);
}

void ExpectIncomplete(std::string_view data, const ProtocolLimits& limits = ProtocolLimits()) {
  SCOPED_TRACE("parsing " + Show(data));
  Result r = ParseOnce(data, limits);
  EXPECT_EQ(r.status, Status::kIncomplete) << r.error;
  EXPECT_EQ(r.consumed, kUntouched);
}

ProtocolLimits Unauthenticated() {
  ProtocolLimits limits;
  limits.authenticated = false;
  return limits;
}

// ---- multibulk ----

TEST(RequestParserTest, MultibulkRequest) {
  ExpectRequest("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", {"GET", "k"}, 20);
  ExpectRequest("*1\r\n$4\r\nPING\r\n", {"PING"}, 14);
  ExpectRequest("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n", {"SET", "", ""}, 25);
}

TEST(RequestParserTest, MultibulkArgumentsPointIntoTheCallersBuffer) {
  std::string data = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(data, ProtocolLimits(), &args, &consumed), Status::kRequest);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].data(), data.data() + 8);
  EXPECT_EQ(args[1].data(), data.data() + 18);
  EXPECT_EQ(args[1], "hello");
}

TEST(RequestParserTest, BinaryBulkPayloads) {
  // The length decides, not the bytes: CR, LF and NUL inside a bulk are data.
  const std::string payload = "a\r\n\0b\r\n\xff\0"s;
  ExpectRequest(Multibulk({"ECHO", payload}), {"ECHO", payload},
                Multibulk({"ECHO", payload}).size());
  ExpectRequest("*1\r\n$5\r\na\r\n\0b\r\n"s, {"a\r\n\0b"s}, 15);
  ExpectRequest("*2\r\n$3\r\n*1\r\r\n$2\r\n$3\r\n"s, {"*1\r", "$3"}, 21);
}

TEST(RequestParserTest, TheTwoBytesAfterALengthOrABulkAreSkippedUnread) {
  // Redis never checks that a bulk ends in CRLF, nor that a CR is followed by LF: it skips two
  // bytes. `*1\r\n$4\r\nPINGxx` followed by another PING answers +PONG twice.
  ExpectRequest("*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", {"PING"}, 14);
  ExpectRequest("*1\r\n$4\rXPING\r\n", {"PING"}, 14);
  ExpectRequest("*1\rX$4\r\nPING\r\n", {"PING"}, 14);
}

TEST(RequestParserTest, EmptyAndNegativeMultibulkAreEmptyRequests) {
  // Redis resets the client and goes on: `*-1\r\nPING\r\n` answers +PONG.
  ExpectRequest("*0\r\n", {}, 4);
  ExpectRequest("*-1\r\n", {}, 5);
  ExpectRequest("*-5\r\nPING\r\n", {}, 5);
  RequestParser parser;
  std::string data = "*-1\r\nPING\r\n";
  Result first = ParseOnce(parser, data);
  ASSERT_EQ(first.status, Status::kRequest);
  EXPECT_TRUE(first.args.empty());
  Result second = ParseOnce(parser, std::string_view(data).substr(first.consumed));
  ASSERT_EQ(second.status, Status::kRequest);
  EXPECT_EQ(second.args, Args{"PING"});
}

TEST(RequestParserTest, PipelinedRequestsBackToBack) {
  const std::vector<Args> requests = {
      {"SET", "key", "value"}, {"GET", "key"}, {"PING"}, {"DEL", "a", "b", "c"}, {"ECHO", ""}};
  std::string data;
  for (const Args& r : requests) data += Multibulk(r);
  data += "PING\r\n";        // an inline request mixed in
  data += "*1\r\n$4\r\nPI";  // and a partial one at the end
  RequestParser parser;
  size_t offset = 0;
  for (const Args& expected : requests) {
    Result r = ParseOnce(parser, std::string_view(data).substr(offset));
    ASSERT_EQ(r.status, Status::kRequest);
    EXPECT_EQ(r.args, expected);
    EXPECT_EQ(r.consumed, Multibulk(expected).size());
    offset += r.consumed;
  }
  Result inline_request = ParseOnce(parser, std::string_view(data).substr(offset));
  ASSERT_EQ(inline_request.status, Status::kRequest);
  EXPECT_EQ(inline_request.args, Args{"PING"});
  EXPECT_EQ(inline_request.consumed, 6u);
  offset += inline_request.consumed;
  Result tail = ParseOnce(parser, std::string_view(data).substr(offset));
  EXPECT_EQ(tail.status, Status::kIncomplete);
  EXPECT_EQ(tail.bytes_needed, 14u);  // the size of `*1\r\n$4\r\nPING\r\n`
}

TEST(RequestParserTest, EmptyInputIsIncomplete) { ExpectIncomplete(""); }

// Every proper prefix of a request is incomplete; the whole request parses to the same
// arguments whatever follows it.
void ExpectSplitAtEveryByte(const std::string& request, const Args& args) {
  SCOPED_TRACE("request " + Show(request));
  for (size_t n = 0; n < request.size(); ++n) {
    ExpectIncomplete(std::string_view(request).substr(0, n));
  }
  ExpectRequest(request, args, request.size());
  ExpectRequest(request + "*1\r\n$4\r\nPING\r\n", args, request.size());
  ExpectRequest(request + "GET", args, request.size());
}

TEST(RequestParserTest, RequestSplitAtEveryByteBoundary) {
  ExpectSplitAtEveryByte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n", {"SET", "k", "value"});
  ExpectSplitAtEveryByte("*1\r\n$0\r\n\r\n", {""});
  ExpectSplitAtEveryByte("*2\r\n$11\r\nbin\r\n\0\xff\r\nxy\r\n$2\r\n\r\n\r\n"s,
                         {"bin\r\n\0\xff\r\nxy"s, "\r\n"});
  ExpectSplitAtEveryByte("*1\r\n$100\r\n" + std::string(100, 'v') + "\r\n",
                         {std::string(100, 'v')});
  ExpectSplitAtEveryByte("SET k \"a b\"\r\n", {"SET", "k", "a b"});
  ExpectSplitAtEveryByte("PING\n", {"PING"});
}

TEST(RequestParserTest, BytesNeededForABigBulkArrivingInPieces) {
  const std::string big(100000, 'x');
  const std::string request = Multibulk({"SET", "key", big});
  const size_t header = request.size() - big.size() - 2;  // up to the payload
  RequestParser parser;
  // Before the length is known, nothing can be promised.
  Result r = ParseOnce(parser, std::string_view(request).substr(0, header - 3));
  ASSERT_EQ(r.status, Status::kIncomplete);
  EXPECT_EQ(r.bytes_needed, 0u);
  // Once `$100000\r\n` is in, the whole request's size is known, however little payload came.
  for (size_t have : {header, header + 1, header + 4096, header + 65536, request.size() - 1}) {
    r = ParseOnce(parser, std::string_view(request).substr(0, have));
    ASSERT_EQ(r.status, Status::kIncomplete) << have;
    EXPECT_EQ(r.bytes_needed, request.size()) << have;
  }
  r = ParseOnce(parser, request);
  ASSERT_EQ(r.status, Status::kRequest);
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_EQ(r.args[2], big);
  EXPECT_EQ(r.consumed, request.size());
}

// ---- multibulk errors ----

TEST(RequestParserTest, InvalidMultibulkLength) {
  for (std::string_view data :
       {"*abc\r\n", "*\r\n", "* 1\r\n", "*01\r\n", "*+1\r\n", "*1x\r\n", "*2147483648\r\n",
        "*99999999999\r\n", "*99999999999999999999\r\n", "*-0\r\n"}) {
    ExpectError(data, "invalid multibulk length");
  }
  // Redis 7 takes any count up to INT_MAX and waits for the arguments.
  ExpectIncomplete("*2147483647\r\n");
  ExpectIncomplete("*1073741825\r\n");
  ProtocolLimits small;
  small.max_multibulk_len = 5;
  ExpectIncomplete("*5\r\n", small);
  ExpectError("*6\r\n", "invalid multibulk length", small);
}

TEST(RequestParserTest, ExpectedDollar) {
  ExpectError("*1\r\nx3\r\nfoo\r\n", "expected '$', got 'x'");
  ExpectError("*2\r\n$3\r\nGET\r\n:1\r\n", "expected '$', got ':'");
  ExpectError("*1\r\n*1\r\n", "expected '$', got '*'");
  // Redis waits for the whole line (its '\n' too) before judging it.
  ExpectIncomplete("*1\r\nx3");
  ExpectIncomplete("*1\r\nx\r");
}

TEST(RequestParserTest, InvalidBulkLength) {
  for (std::string_view data : {"*1\r\n$-1\r\n", "*1\r\n$abc\r\n", "*1\r\n$+4\r\nPING\r\n",
                                "*1\r\n$04\r\nPING\r\n", "*1\r\n$\r\n", "*1\r\n$ 4\r\nPING\r\n",
                                "*1\r\n$536870913\r\n", "*1\r\n$99999999999999999999\r\n"}) {
    ExpectError(data, "invalid bulk length");
  }
  // proto-max-bulk-len (512 MB by default) itself is accepted.
  Result r = ParseOnce("*1\r\n$536870912\r\n");
  ASSERT_EQ(r.status, Status::kIncomplete);
  EXPECT_EQ(r.bytes_needed, 16u + 536870912u + 2u);
  ProtocolLimits small;
  small.max_bulk_len = 10;
  ExpectRequest("*1\r\n$10\r\n0123456789\r\n", {"0123456789"}, 21, small);
  ExpectError("*1\r\n$11\r\n", "invalid bulk length", small);
}

TEST(RequestParserTest, IncompleteMultibulk) {
  ExpectIncomplete("*3\r\n$3\r\nSET");
  ExpectIncomplete("*3\r\n$3\r\nSET\r\n");
  ExpectIncomplete("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n");
  ExpectIncomplete("*3");
  ExpectIncomplete("*3\r");
}

TEST(RequestParserTest, UnauthenticatedLimits) {
  const ProtocolLimits unauthenticated = Unauthenticated();
  ExpectError("*11\r\n", "unauthenticated multibulk length", unauthenticated);
  ExpectIncomplete("*10\r\n", unauthenticated);
  ExpectError("*10\r\n$16385\r\n", "unauthenticated bulk length", unauthenticated);
  ExpectError("*1\r\n$100000\r\n", "unauthenticated bulk length", unauthenticated);
  ExpectIncomplete("*1\r\n$16384\r\n", unauthenticated);
  ExpectRequest("*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n", {"AUTH", "pw"}, 22, unauthenticated);
  // The general checks come first.
  ExpectError("*abc\r\n", "invalid multibulk length", unauthenticated);
  ExpectError("*2147483648\r\n", "invalid multibulk length", unauthenticated);
  ExpectError("*1\r\n$-1\r\n", "invalid bulk length", unauthenticated);
  ExpectError("*1\r\n$536870913\r\n", "invalid bulk length", unauthenticated);
  // An authenticated client has no such limits.
  ExpectIncomplete("*11\r\n");
  ExpectIncomplete("*1\r\n$16385\r\n");
}

TEST(RequestParserTest, HeaderLineLongerThan64KBWithoutCR) {
  // Redis rejects once more than 64 KB (65536 bytes) sit in the buffer without a CR.
  const std::string count = "*" + std::string(65535, '1');
  ExpectIncomplete(count);
  ExpectError(count + "1", "too big mbulk count string");
  const std::string bulk = "*1\r\n$" + std::string(65535, '1');  // 65536 bytes after "*1\r\n"
  ExpectIncomplete(bulk);
  ExpectError(bulk + "1", "too big bulk count string");
  ExpectError("*3\r\n$3\r\nSET\r\n$" + std::string(70000, '9'), "too big bulk count string");
}

// ---- inline ----

TEST(RequestParserTest, InlineRequests) {
  ExpectRequest("PING\r\n", {"PING"}, 6);
  ExpectRequest("PING\n", {"PING"}, 5);
  ExpectRequest("SET key value\r\n", {"SET", "key", "value"}, 15);
  ExpectRequest("   ECHO\t\t  x  \n", {"ECHO", "x"}, 15);
  ExpectRequest("a\rb\n", {"a", "b"}, 4);
  // A vertical tab or form feed separates arguments only between them (isspace), never
  // inside an unquoted one: `ECHO a\vb` echoes "a\vb".
  ExpectRequest("ECHO a\vb\r\n", {"ECHO", "a\vb"}, 10);
  ExpectRequest("ECHO a\fb\r\n", {"ECHO", "a\fb"}, 10);
  ExpectRequest("\vECHO\f\va\n", {"ECHO\f\va"}, 9);
  ExpectRequest("\vECHO \f\va\n", {"ECHO", "a"}, 10);
}

TEST(RequestParserTest, InlineArgumentsOutliveTheInputBuffer) {
  RequestParser parser;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  std::string data = "SET k \"v w\"\r\n";
  ASSERT_EQ(parser.Parse(data, ProtocolLimits(), &args, &consumed), Status::kRequest);
  data.assign(data.size(), '#');
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "SET");
  EXPECT_EQ(args[2], "v w");
}

TEST(RequestParserTest, InlineEmptyLinesAreEmptyRequests) {
  ExpectRequest("\r\n", {}, 2);
  ExpectRequest("\n", {}, 1);
  ExpectRequest("\t \r\n", {}, 4);
  ExpectRequest("\nPING\r\n", {}, 1);
}

TEST(RequestParserTest, InlineDoubleQuotes) {
  ExpectRequest("ECHO \"a b\"\r\n", {"ECHO", "a b"}, 12);
  ExpectRequest("ECHO \"\"\r\n", {"ECHO", ""}, 9);
  ExpectRequest("ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\"\n", {"ECHO", "\n\r\t\b\a\\\""}, 22);
  ExpectRequest("ECHO \"\\x41\\x4g\\n\"\r\n", {"ECHO", "Ax4g\n"}, 19);
  ExpectRequest("ECHO \"\\x00\\xfF\\X41\"\r\n",
                {"ECHO",
                 "\0\xff"
                 "X41"s},
                21);
  ExpectRequest("ECHO \"\\q\"\r\n", {"ECHO", "q"}, 11);
  // A quote inside an unquoted argument opens a quoted part of the same argument.
  ExpectRequest("ECHO a\"b c\"\r\n", {"ECHO", "ab c"}, 13);
  // After the closing quote any blank separates, a \v included.
  ExpectRequest("ECHO \"a\"\vb\r\n", {"ECHO", "a", "b"}, 12);
  ExpectRequest("ECHO \"a\" \"b\"\r\n", {"ECHO", "a", "b"}, 14);
}

TEST(RequestParserTest, InlineSingleQuotes) {
  ExpectRequest("ECHO 'it\\'s'\r\n", {"ECHO", "it's"}, 14);
  ExpectRequest("ECHO 'a\\b'\r\n", {"ECHO", "a\\b"}, 12);
  ExpectRequest("ECHO 'a \"b\"'\r\n", {"ECHO", "a \"b\""}, 14);
  ExpectRequest("ECHO ''\r\n", {"ECHO", ""}, 9);
  ExpectRequest("ECHO 'a'\tx\r\n", {"ECHO", "a", "x"}, 12);
}

TEST(RequestParserTest, InlineUnbalancedQuotes) {
  for (std::string_view data : {"\"a\r\n", "ECHO \"a\r\n", "ECHO 'a\r\n", "\"a\"b\r\n", "'a'b\r\n",
                                "ECHO a\"b c\"d\r\n", "ECHO \"ab\\\"\r\n", "ECHO \"a\\\r\n"}) {
    ExpectError(data, "unbalanced quotes in request");
  }
}

TEST(RequestParserTest, InlineLineOver64KBWithoutNewline) {
  ExpectIncomplete(std::string(65536, 'a'));
  ExpectError(std::string(65537, 'a'), "too big inline request");
  ExpectError("ECHO " + std::string(66560, 'a'), "too big inline request");
  // A long line that does end is fine.
  const std::string arg(100000, 'a');
  ExpectRequest("ECHO " + arg + "\r\n", {"ECHO", arg}, arg.size() + 7);
}

TEST(SplitInlineArgsTest, ClearsOutputAndSplits) {
  std::vector<std::string> out = {"old"};
  ASSERT_TRUE(SplitInlineArgs("  bind 127.0.0.1 \"::1\"  ", &out));
  EXPECT_EQ(out, (Args{"bind", "127.0.0.1", "::1"}));
  ASSERT_TRUE(SplitInlineArgs("", &out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(SplitInlineArgs("save \"900 1", &out));
  EXPECT_FALSE(SplitInlineArgs("dir '/tmp'x", &out));
}

// ---- PeekRequests ----------------------------------------------------------------------------

TEST(PeekRequestsTest, ReadsNameAndFirstArgumentOfEachCompleteRequest) {
  std::string data = Multibulk({"SET", "k1", "v"}) + Multibulk({"PING"}) +
                     Multibulk({"get", "a\r\nb"}) + Multibulk({"SET", "k2", "vvvv"}).substr(0, 20);
  std::array<PeekedRequest, 8> out;
  ASSERT_EQ(PeekRequests(data, out), 3u);
  EXPECT_EQ(out[0].name, "SET");
  EXPECT_EQ(out[0].first, "k1");
  EXPECT_EQ(out[1].name, "PING");
  EXPECT_EQ(out[1].first, "");
  EXPECT_EQ(out[2].name, "get");
  EXPECT_EQ(out[2].first, "a\r\nb");
}

TEST(PeekRequestsTest, StopsAtInlineMalformedOrEmptyRequestsAndAtTheWindow) {
  std::array<PeekedRequest, 2> two;
  const std::string get = Multibulk({"GET", "k"});
  EXPECT_EQ(PeekRequests(get + get + get, two), 2u);
  EXPECT_EQ(PeekRequests(get + "GET k\r\n" + get, two), 1u);
  EXPECT_EQ(PeekRequests(get + "*0\r\n" + get, two), 1u);
  EXPECT_EQ(PeekRequests(get + "*1\r\n$x\r\n", two), 1u);
  EXPECT_EQ(PeekRequests(get + "*1\r\n$3\r\nGET\r", two), 1u);    // the bulk's CRLF cut short
  EXPECT_EQ(PeekRequests("*99999999999999999999\r\n", two), 0u);  // too many digits
  EXPECT_EQ(PeekRequests("*1\r\n$999999999999\r\nGET\r\n", two), 0u);
  EXPECT_EQ(PeekRequests("", two), 0u);
  const std::string wide = Multibulk(Args(65, "a"));
  EXPECT_EQ(PeekRequests(get + wide + get, two), 1u);
  EXPECT_EQ(PeekRequests(Multibulk(Args(64, "a")) + get, two), 2u);
}

// Seeded model: random streams of requests, some cut short or corrupted. Every request peeked
// is one Parse() accepts at the same place, with the same name and first argument.
TEST(PeekRequestsTest, AgreesWithParseOnRandomStreams) {
  std::mt19937_64 rng(20261203);
  const std::vector<std::string> words = {"SET", "GET", "",    "k", "a\r\n", std::string(300, 'x'),
                                          "*3",  "$1",  "\r\n"};
  for (int round = 0; round < 2000; ++round) {
    std::string data;
    const int requests = static_cast<int>(rng() % 6);
    for (int r = 0; r < requests; ++r) {
      Args args(1 + rng() % 4);
      for (std::string& a : args) a = words[rng() % words.size()];
      data += Multibulk(args);
    }
    if (!data.empty() && rng() % 2 == 0) data.resize(rng() % data.size());
    if (!data.empty() && rng() % 4 == 0) data[rng() % data.size()] = static_cast<char>(rng());
    std::array<PeekedRequest, 4> out;
    const size_t peeked = PeekRequests(data, out);
    RequestParser parser;
    std::string_view rest = data;
    for (size_t i = 0; i < peeked; ++i) {
      std::vector<std::string_view> args;
      size_t consumed = 0;
      ASSERT_EQ(parser.Parse(rest, ProtocolLimits(), &args, &consumed), Status::kRequest)
          << "round " << round << " request " << i;
      ASSERT_GE(args.size(), 1u);
      EXPECT_EQ(out[i].name, args[0]);
      EXPECT_EQ(out[i].first, args.size() > 1 ? args[1] : std::string_view());
      rest.remove_prefix(consumed);
    }
    if (peeked < out.size()) {
      // Fewer than the window: the next request, if Parse accepts it, is one peek could not
      // read only because it is not multibulk or has no name.
      std::vector<std::string_view> args;
      size_t consumed = 0;
      if (parser.Parse(rest, ProtocolLimits(), &args, &consumed) == Status::kRequest &&
          !rest.empty() && rest[0] == '*') {
        EXPECT_TRUE(args.empty()) << "round " << round
                                  << ": a complete request not peeked: " << Show(rest);
      }
    }
  }
}

}  // namespace
}  // namespace goblin
