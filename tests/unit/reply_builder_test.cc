// ReplyBuilder's exact bytes in RESP2 and RESP3, as redis-server writes them (checked against
// redis-server 7.0 with and without HELLO 3; double texts follow Redis 7.2's d2string).
#include "resp/reply_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace goblin {
namespace {

using namespace std::string_literals;

constexpr double kInf = std::numeric_limits<double>::infinity();

class ReplyBuilderTest : public testing::TestWithParam<int> {
 protected:
  ReplyBuilderTest() : builder_(&out_) { builder_.set_protocol(GetParam()); }
  bool resp3() const { return GetParam() == 3; }
  // The bytes written since the last call.
  std::string Take() {
    std::string bytes = out_.ToString();
    out_.clear();
    return bytes;
  }

  OutputBuffer out_;
  ReplyBuilder builder_;
};

INSTANTIATE_TEST_SUITE_P(Protocols, ReplyBuilderTest, testing::Values(2, 3),
                         [](const testing::TestParamInfo<int>& info) {
                           return "RESP" + std::to_string(info.param);
                         });

TEST_P(ReplyBuilderTest, ProtocolAccessors) {
  EXPECT_EQ(builder_.protocol(), GetParam());
  EXPECT_EQ(builder_.resp3(), resp3());
  EXPECT_EQ(builder_.buffer(), &out_);
}

TEST_P(ReplyBuilderTest, SimpleStringsAndErrorsAreTheSameInBothProtocols) {
  builder_.Ok();
  EXPECT_EQ(Take(), "+OK\r\n");
  builder_.Simple("PONG");
  EXPECT_EQ(Take(), "+PONG\r\n");
  builder_.Simple("");
  EXPECT_EQ(Take(), "+\r\n");
  builder_.Error("ERR unknown command 'x'");
  EXPECT_EQ(Take(), "-ERR unknown command 'x'\r\n");
  builder_.Error("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Take(), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

TEST_P(ReplyBuilderTest, Integers) {
  builder_.Integer(0);
  EXPECT_EQ(Take(), ":0\r\n");
  builder_.Integer(-5);
  EXPECT_EQ(Take(), ":-5\r\n");
  builder_.Integer(INT64_MAX);
  EXPECT_EQ(Take(), ":9223372036854775807\r\n");
  builder_.Integer(INT64_MIN);
  EXPECT_EQ(Take(), ":-9223372036854775808\r\n");
}

TEST_P(ReplyBuilderTest, BulkStrings) {
  builder_.Bulk("abc");
  EXPECT_EQ(Take(), "$3\r\nabc\r\n");
  builder_.Bulk("");
  EXPECT_EQ(Take(), "$0\r\n\r\n");
  builder_.Bulk("a\r\n\0b"s);
  EXPECT_EQ(Take(), "$5\r\na\r\n\0b\r\n"s);
  const std::string big(100000, 'z');
  builder_.Bulk(big);
  EXPECT_EQ(Take(), "$100000\r\n" + big + "\r\n");
}

TEST_P(ReplyBuilderTest, Nulls) {
  builder_.Null();
  EXPECT_EQ(Take(), resp3() ? "_\r\n" : "$-1\r\n");
  builder_.NullArray();
  EXPECT_EQ(Take(), resp3() ? "_\r\n" : "*-1\r\n");
}

TEST_P(ReplyBuilderTest, AggregateHeaders) {
  builder_.Array(0);
  EXPECT_EQ(Take(), "*0\r\n");
  builder_.Array(3);
  EXPECT_EQ(Take(), "*3\r\n");
  // A map is counted in pairs in RESP3 and flattened to 2n elements in RESP2.
  builder_.Map(2);
  EXPECT_EQ(Take(), resp3() ? "%2\r\n" : "*4\r\n");
  builder_.Map(0);
  EXPECT_EQ(Take(), resp3() ? "%0\r\n" : "*0\r\n");
  builder_.Set(3);
  EXPECT_EQ(Take(), resp3() ? "~3\r\n" : "*3\r\n");
  builder_.Push(2);
  EXPECT_EQ(Take(), resp3() ? ">2\r\n" : "*2\r\n");
}

TEST_P(ReplyBuilderTest, WholeHgetallReply) {
  builder_.Map(1);
  builder_.Bulk("f");
  builder_.Bulk("v");
  EXPECT_EQ(Take(), resp3() ? "%1\r\n$1\r\nf\r\n$1\r\nv\r\n" : "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
}

TEST_P(ReplyBuilderTest, Doubles) {
  // RESP3 has a double type; RESP2 gets the same text as a bulk string.
  const std::pair<double, std::string> cases[] = {
      {1.5, "1.5"},
      {-1.5, "-1.5"},
      {kInf, "inf"},
      {-kInf, "-inf"},
      {-0.0, "-0"},
      {0.0, "0"},
      {1e300, "1e+300"},
      {3.0, "3"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1e-7, "1e-7"},
      {123456.789012, "123456.789012"},
  };
  for (const auto& [value, text] : cases) {
    builder_.Double(value);
    const std::string expected =
        resp3() ? "," + text + "\r\n" : "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
    EXPECT_EQ(Take(), expected) << text;
  }
}

TEST_P(ReplyBuilderTest, Booleans) {
  builder_.Bool(true);
  EXPECT_EQ(Take(), resp3() ? "#t\r\n" : ":1\r\n");
  builder_.Bool(false);
  EXPECT_EQ(Take(), resp3() ? "#f\r\n" : ":0\r\n");
}

TEST_P(ReplyBuilderTest, Verbatim) {
  // INFO in RESP3: `=<len>\r\ntxt:<text>\r\n`, the length counting the "txt:" prefix.
  builder_.Verbatim("# Server\r\nredis_version:7.2.0\r\n");
  const std::string text = "# Server\r\nredis_version:7.2.0\r\n";
  EXPECT_EQ(Take(), resp3() ? "=" + std::to_string(text.size() + 4) + "\r\ntxt:" + text + "\r\n"
                            : "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n");
  builder_.Verbatim("");
  EXPECT_EQ(Take(), resp3() ? "=4\r\ntxt:\r\n" : "$0\r\n\r\n");
}

TEST_P(ReplyBuilderTest, RepliesAppendToWhatIsAlreadyThere) {
  out_.append("+QUEUED\r\n");
  builder_.Integer(7);
  builder_.Raw("+raw\r\n");
  EXPECT_EQ(Take(), "+QUEUED\r\n:7\r\n+raw\r\n");
}

TEST_P(ReplyBuilderTest, NothingIsAppendedOnceTheLimitIsReached) {
  EXPECT_FALSE(builder_.over_limit());
  out_.append("+QUEUED\r\n");  // 9 bytes already there count toward the limit
  builder_.set_limit(20);
  EXPECT_EQ(builder_.room(), 11u);
  builder_.Array(2);
  builder_.Bulk("value");  // reaches 24 bytes: appended whole, then the limit holds
  EXPECT_TRUE(builder_.over_limit());
  EXPECT_EQ(builder_.room(), 0u);
  builder_.Bulk("more");
  builder_.Integer(1);
  builder_.Simple("OK");
  builder_.Error("ERR no");
  builder_.Double(1.5);
  builder_.Bool(true);
  builder_.Null();
  builder_.Map(1);
  builder_.Verbatim("text");
  builder_.BigNumber("123");
  builder_.Raw("+raw\r\n");
  EXPECT_EQ(Take(), "+QUEUED\r\n*2\r\n$5\r\nvalue\r\n");
  // Below the limit again (the buffer was written out): replies are appended.
  builder_.Integer(7);
  EXPECT_EQ(Take(), ":7\r\n");
  builder_.set_limit(std::numeric_limits<size_t>::max());
  EXPECT_FALSE(builder_.over_limit());
}

TEST(ReplyBuilderProtocolTest, DefaultsToResp2AndSwitches) {
  OutputBuffer out;
  ReplyBuilder builder(&out);
  EXPECT_EQ(builder.protocol(), 2);
  EXPECT_FALSE(builder.resp3());
  builder.Null();
  builder.set_protocol(3);
  EXPECT_TRUE(builder.resp3());
  builder.Null();
  builder.set_protocol(2);
  builder.Null();
  EXPECT_EQ(out.ToString(), "$-1\r\n_\r\n$-1\r\n");
}

}  // namespace
}  // namespace goblin
