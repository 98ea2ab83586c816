// The crash report's CURRENT CLIENT INFO lines: the client, the argument count, each argument
// quoted and clipped, passwords never shown (tests/integration/test_crash_report.py crashes a
// real server; no command carrying a password can be made to crash, so redaction is here).
#include "server/crash_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "server/client.h"
#include "server/command_table.h"

namespace goblin {
namespace {

std::string Format(std::string_view name, const std::vector<std::string_view>& argv,
                   size_t size = 1 << 16) {
  Client client(7, 9);
  client.address = "127.0.0.1:5000";
  client.db = 3;
  Command command;
  command.name = std::string(name);
  std::string out(size, '\0');
  out.resize(FormatCurrentClient(client, command, argv, out.data(), out.size()));
  return out;
}

TEST(CrashReportTest, ClientLineAndQuotedArguments) {
  EXPECT_EQ(Format("set", {"SET", "k", "a\"b\\c\r\n\x80"}),
            "id=7 addr=127.0.0.1:5000 fd=9 name= db=3 cmd=set\n"
            "argc: 3\n"
            "argv[0]: \"SET\"\n"
            "argv[1]: \"k\"\n"
            "argv[2]: \"a\\\"b\\\\c\\x0d\\x0a\\x80\"\n");
}

TEST(CrashReportTest, LongArgumentsAreClipped) {
  const std::string long_value(kReportArgumentBytes + 5, 'v');
  const std::string text = Format("set", {"SET", "k", long_value});
  EXPECT_NE(
      text.find("argv[2]: \"" + std::string(kReportArgumentBytes, 'v') + "\"... (5 more bytes)\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find(long_value), std::string::npos);
}

TEST(CrashReportTest, ManyArgumentsAreCounted) {
  std::vector<std::string> words;
  for (size_t i = 0; i < kReportArguments + 3; ++i) words.push_back("w" + std::to_string(i));
  std::vector<std::string_view> argv(words.begin(), words.end());
  const std::string text = Format("del", argv);
  EXPECT_NE(text.find("argc: " + std::to_string(kReportArguments + 3) + "\n"), std::string::npos);
  EXPECT_NE(text.find("argv[" + std::to_string(kReportArguments - 1) + "]"), std::string::npos);
  EXPECT_EQ(text.find("argv[" + std::to_string(kReportArguments) + "]"), std::string::npos);
  EXPECT_NE(text.find("... (3 more arguments)\n"), std::string::npos) << text;
}

TEST(CrashReportTest, SecretsAreRedacted) {
  struct Case {
    std::string_view command;
    std::vector<std::string_view> argv;
    std::vector<size_t> secret;
  };
  const Case cases[] = {
      {"auth", {"AUTH", "hunter2"}, {1}},
      {"auth", {"AUTH", "alice", "hunter2"}, {1, 2}},
      {"hello", {"HELLO", "3", "AUTH", "alice", "hunter2", "SETNAME", "n"}, {3, 4}},
      {"migrate", {"MIGRATE", "h", "1", "", "0", "5", "COPY", "AUTH", "hunter2", "KEYS", "k"}, {8}},
      {"migrate", {"MIGRATE", "h", "1", "k", "0", "5", "AUTH2", "alice", "hunter2"}, {7, 8}},
      {"config|set", {"CONFIG", "SET", "maxmemory", "1mb", "MasterAuth", "hunter2"}, {5}},
      {"config|set", {"CONFIG", "SET", "requirepass", "hunter2"}, {3}},
      {"config|set", {"CONFIG", "SET", "masteruser", "alice"}, {3}},
  };
  for (const Case& c : cases) {
    const std::string text = Format(c.command, c.argv);
    for (size_t i = 0; i < c.argv.size(); ++i) {
      const std::string shown = "argv[" + std::to_string(i) + "]: ";
      const bool secret = std::find(c.secret.begin(), c.secret.end(), i) != c.secret.end();
      EXPECT_NE(text.find(shown + (secret ? "(redacted)" : "\"" + std::string(c.argv[i]) + "\"")),
                std::string::npos)
          << c.command << " argument " << i << ":\n"
          << text;
    }
    EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  }
}

TEST(CrashReportTest, StopsAtTheBufferEnd) {
  const std::string full = Format("set", {"SET", "key", "value"});
  const std::string cut = Format("set", {"SET", "key", "value"}, 20);
  EXPECT_EQ(cut, full.substr(0, 20));
}

}  // namespace
}  // namespace goblin
