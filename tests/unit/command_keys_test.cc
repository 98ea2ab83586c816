// The keys the registered rows find in a call, derived from their key specs: the positions
// dispatch, tracking and COMMAND GETKEYS use, with each key's flags, and the legacy first key,
// last key and step COMMAND INFO reports.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "commands/families.h"
#include "server/command_table.h"

namespace goblin {
namespace {

class CommandKeysTest : public ::testing::Test {
 protected:
  CommandKeysTest() { RegisterAllCommands(&table_); }

  // "position:FLAG|FLAG ..." for each key of the call, or "invalid" when the call contradicts
  // its specs.
  std::string Keys(std::vector<std::string_view> argv) const {
    const Command* command = table_.Find(argv[0]);
    EXPECT_NE(command, nullptr) << argv[0];
    if (command == nullptr) return "";
    if (command->HasSubcommands()) command = command->FindSubcommand(argv[1]);
    EXPECT_NE(command, nullptr) << argv[1];
    if (command == nullptr) return "";
    const std::optional<std::vector<KeyReference>> keys = command->Keys(argv);
    if (!keys) return "invalid";
    std::string text;
    for (const KeyReference& key : *keys) {
      if (!text.empty()) text += " ";
      text += std::to_string(key.position) + ":";
      bool first = true;
      for (std::string_view name : KeySpecFlagNames(key.flags)) {
        if (!first) text += "|";
        text += name;
        first = false;
      }
    }
    return text;
  }

  std::string Legacy(std::string_view name) const {
    const Command* command = table_.FindFullName(name);
    EXPECT_NE(command, nullptr) << name;
    if (command == nullptr) return "";
    return std::to_string(command->first_key) + " " + std::to_string(command->last_key) + " " +
           std::to_string(command->key_step) + (command->flags & kCmdMovableKeys ? " movable" : "");
  }

  CommandTable table_;
};

TEST_F(CommandKeysTest, FixedPositions) {
  EXPECT_EQ(Keys({"get", "k"}), "1:RO|access");
  EXPECT_EQ(Keys({"mset", "a", "1", "b", "2"}), "1:OW|update 3:OW|update");
  EXPECT_EQ(Keys({"del", "a", "b"}), "1:RM|delete 2:RM|delete");
  EXPECT_EQ(Keys({"rename", "a", "b"}), "1:RW|access|delete 2:OW|update");
  EXPECT_EQ(Keys({"blpop", "a", "b", "0"}), "1:RW|access|delete 2:RW|access|delete");
  EXPECT_EQ(Keys({"object", "encoding", "k"}), "2:RO");
  EXPECT_EQ(Keys({"memory", "usage", "k"}), "2:RO");
  EXPECT_EQ(Keys({"set", "k", "v"}), "1:OW|update");
  EXPECT_EQ(Keys({"set", "k", "v", "get"}), "1:RW|access|update");
  EXPECT_EQ(Keys({"ping"}), "");
}

TEST_F(CommandKeysTest, CountedKeys) {
  EXPECT_EQ(Keys({"zunion", "2", "a", "b", "weights", "1", "2"}), "2:RO|access 3:RO|access");
  EXPECT_EQ(Keys({"zunionstore", "d", "2", "a", "b"}), "1:OW|update 3:RO|access 4:RO|access");
  EXPECT_EQ(Keys({"zintercard", "2", "a", "b", "limit", "1"}), "2:RO|access 3:RO|access");
  EXPECT_EQ(Keys({"lmpop", "2", "a", "b", "left"}), "2:RW|access|delete 3:RW|access|delete");
  EXPECT_EQ(Keys({"blmpop", "0", "2", "a", "b", "left", "count", "3"}),
            "3:RW|access|delete 4:RW|access|delete");
  EXPECT_EQ(Keys({"eval", "return 1", "2", "a", "b", "c"}),
            "3:RW|access|update 4:RW|access|update");
  EXPECT_EQ(Keys({"eval", "return 1", "0"}), "");
  EXPECT_EQ(Keys({"zunion", "x", "a"}), "invalid");
  EXPECT_EQ(Keys({"zunion", "5", "a"}), "invalid");
  EXPECT_EQ(Keys({"zunion", "0", "a"}), "invalid");  // only a script may name no key
  EXPECT_EQ(Keys({"eval", "x", "5", "a"}), "invalid");
}

TEST_F(CommandKeysTest, KeysAfterAKeyword) {
  EXPECT_EQ(Keys({"xread", "count", "2", "streams", "s1", "s2", "0", "0"}),
            "4:RO|access 5:RO|access");
  EXPECT_EQ(Keys({"xreadgroup", "group", "g", "c", "streams", "s1", "s2", ">", ">"}),
            "5:RO|access 6:RO|access");
  EXPECT_EQ(Keys({"xread", "streams", "a"}), "invalid");
  EXPECT_EQ(Keys({"migrate", "h", "1", "k", "0", "10"}), "3:RW|access|delete");
  EXPECT_EQ(Keys({"migrate", "h", "1", "", "0", "10", "auth", "p", "keys", "a", "b"}),
            "9:RW|access|delete|incomplete 10:RW|access|delete|incomplete");
}

TEST_F(CommandKeysTest, KeysOnlyTheCommandsParserFinds) {
  EXPECT_EQ(Keys({"georadius", "k", "0", "0", "1", "km", "store", "d"}), "1:RO|access 7:OW|update");
  EXPECT_EQ(Keys({"georadiusbymember", "k", "m", "1", "km", "storedist", "d"}),
            "1:RO|access 6:OW|update");
  EXPECT_EQ(Keys({"sort", "k", "store", "d"}), "1:RO|access 3:OW|update");
  EXPECT_EQ(Keys({"sort", "k", "by", "x"}), "1:RO|access");
}

TEST_F(CommandKeysTest, ShardChannelsAreNoKeys) {
  EXPECT_EQ(Keys({"spublish", "channel", "message"}), "");
  EXPECT_FALSE(table_.Find("spublish")->HasKeys());
}

TEST_F(CommandKeysTest, LegacyRangeDerivedFromSpecs) {
  EXPECT_EQ(Legacy("get"), "1 1 1");
  EXPECT_EQ(Legacy("mset"), "1 -1 2");
  EXPECT_EQ(Legacy("rename"), "1 2 1");
  EXPECT_EQ(Legacy("blpop"), "1 -2 1");
  EXPECT_EQ(Legacy("zunionstore"), "1 1 1 movable");
  EXPECT_EQ(Legacy("zunion"), "0 0 0 movable");
  EXPECT_EQ(Legacy("xread"), "0 0 0 movable");
  EXPECT_EQ(Legacy("sort"), "1 1 1 movable");
  EXPECT_EQ(Legacy("migrate"), "3 3 1 movable");
  EXPECT_EQ(Legacy("georadius"), "1 1 1 movable");
  EXPECT_EQ(Legacy("object|encoding"), "2 2 1");
  EXPECT_EQ(Legacy("memory|usage"), "2 2 1");
  EXPECT_EQ(Legacy("ping"), "0 0 0");
}

TEST_F(CommandKeysTest, AclCategoriesOnTheRows) {
  const Command* get = table_.Find("get");
  EXPECT_EQ(get->acl_categories, kAclRead | kAclString | kAclFast);
  const Command* sort = table_.Find("sort");
  EXPECT_EQ(sort->acl_categories,
            kAclWrite | kAclSet | kAclSortedSet | kAclList | kAclSlow | kAclDangerous);
  // A script's readonly flag does not make it @read.
  EXPECT_FALSE(table_.Find("eval_ro")->acl_categories & kAclRead);
  EXPECT_EQ(table_.Find("config")->acl_categories, kAclSlow);
  EXPECT_EQ(AclCategoryByName("SortedSet"), kAclSortedSet);
  EXPECT_EQ(AclCategoryByName("nonexistent"), 0u);
}

}  // namespace
}  // namespace goblin
