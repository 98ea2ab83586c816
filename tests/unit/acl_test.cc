// ACL users and selectors (server/acl/): rules as Redis 7.2 parses and describes them, the
// permission check, and a seeded model test of the command rules against a plain map.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "commands/families.h"
#include "server/acl/access_control.h"

namespace goblin::acl {
namespace {

const CommandTable& Table() {
  static const CommandTable* table = [] {
    auto* t = new CommandTable();
    RegisterAllCommands(t);
    return t;
  }();
  return *table;
}

RuleContext Context() { return {&Table(), 0}; }

User MakeUser(std::initializer_list<std::string_view> rules) {
  User user("alice", 0);
  for (std::string_view rule : rules) {
    EXPECT_EQ(user.Apply(rule, Context()), RuleError::kNone) << rule;
  }
  return user;
}

Denial Check(const User& user, std::vector<std::string_view> argv, size_t* position = nullptr) {
  const Command* command = Table().Find(argv[0]);
  if (command->HasSubcommands()) command = command->FindSubcommand(argv[1]);
  size_t at = 0;
  const Denial denial = user.Check(*command, argv, &at);
  if (position != nullptr) *position = at;
  return denial;
}

TEST(AclUser, NewUserIsOffWithNothing) {
  User user("bob", 0);
  EXPECT_EQ(user.Describe(), "off sanitize-payload resetchannels -@all");
  User with_channels("bob", Selector::kAllChannels);
  EXPECT_EQ(with_channels.Describe(), "off sanitize-payload &* -@all");
}

TEST(AclUser, DescribesRulesInRedisOrder) {
  User user = MakeUser({"on", ">pw", "~app:*", "%R~ro:*", "%W~wo:*", "%RW~both:*", "&news",
                        "+@read", "-get", "+get", "+select|0", "(~tmp:* +set)"});
  EXPECT_EQ(user.Describe(),
            "on sanitize-payload "
            "#30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 "
            "~app:* %R~ro:* %W~wo:* ~both:* resetchannels &news -@all +@read +get +select|0 "
            "(~tmp:* resetchannels -@all +set)");
}

TEST(AclUser, LaterRuleAboutACommandReplacesEarlierOnes) {
  User user = MakeUser({"+@all", "-config|get", "-config", "+client|id", "-client"});
  EXPECT_EQ(user.selectors()[0].DescribeCommands(), "+@all -config -client");
  User categories = MakeUser({"-@all", "+@read", "-@write", "+@read"});
  EXPECT_EQ(categories.selectors()[0].DescribeCommands(), "-@all -@write +@read");
  User cleared = MakeUser({"+get", "nocommands", "+set"});
  EXPECT_EQ(cleared.selectors()[0].DescribeCommands(), "-@all +set");
}

TEST(AclUser, PatternsMergeTheirPermissions) {
  User user = MakeUser({"%R~k", "%W~k", "~k"});
  EXPECT_EQ(user.selectors()[0].DescribeKeys(), "~k");
  User all = MakeUser({"~a", "allkeys"});
  EXPECT_EQ(all.selectors()[0].DescribeKeys(), "~*");
}

TEST(AclUser, MalformedRulesAreRefusedWithRedisReasons) {
  User user("bob", 0);
  const RuleContext context = Context();
  EXPECT_EQ(user.Apply("bogus", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("+nosuchcommand", context), RuleError::kUnknownCommand);
  EXPECT_EQ(user.Apply("-@nosuchcategory", context), RuleError::kUnknownCommand);
  EXPECT_EQ(user.Apply("+config|nosuch", context), RuleError::kUnknownCommand);
  EXPECT_EQ(user.Apply("+config|get|x", context), RuleError::kFirstArgOfSubcommand);
  EXPECT_EQ(user.Apply("+select|", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("#abc", context), RuleError::kBadHash);
  EXPECT_EQ(user.Apply("<never-set", context), RuleError::kNoSuchPassword);
  EXPECT_EQ(user.Apply("%X~k", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("%", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("%RR~k", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("%R", context), RuleError::kNone);  // an empty read pattern
  EXPECT_EQ(user.selectors()[0].DescribeKeys(), "%R~");
  EXPECT_EQ(user.Apply("~a b", context), RuleError::kSyntax);
  EXPECT_EQ(user.Apply("allkeys", context), RuleError::kNone);
  EXPECT_EQ(user.Apply("~more", context), RuleError::kKeyAfterAllKeys);
  EXPECT_EQ(user.Apply("allchannels", context), RuleError::kNone);
  EXPECT_EQ(user.Apply("&more", context), RuleError::kChannelAfterAll);
  EXPECT_EQ(user.Apply("(+get bogus)", context), RuleError::kSyntax);
  EXPECT_EQ(RuleErrorText(RuleError::kUnknownCommand), "Unknown command or category name in ACL");
}

TEST(AclUser, PasswordsAreKeptAsSha256Only) {
  User user = MakeUser({"on", ">secret"});
  ASSERT_EQ(user.passwords().size(), 1u);
  // sha256("secret")
  EXPECT_EQ(user.passwords()[0],
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b");
  EXPECT_TRUE(user.Accepts("secret"));
  EXPECT_FALSE(user.Accepts("Secret"));
  EXPECT_EQ(user.Apply("off", Context()), RuleError::kNone);
  EXPECT_FALSE(user.Accepts("secret"));  // a disabled user opens to no password
  User open = MakeUser({"on", "nopass"});
  EXPECT_TRUE(open.Accepts("anything"));
  EXPECT_EQ(open.Apply("resetpass", Context()), RuleError::kNone);
  EXPECT_FALSE(open.Accepts("anything"));
}

TEST(AclUser, ResetReturnsToANewUser) {
  User user = MakeUser({"on", ">pw", "~*", "&*", "+@all", "(+get ~x)", "skip-sanitize-payload"});
  EXPECT_EQ(user.Apply("reset", Context()), RuleError::kNone);
  EXPECT_EQ(user.Describe(), User("alice", 0).Describe());
}

TEST(AclCheck, KeysNeedThePermissionTheirSpecAsks) {
  User user = MakeUser({"+@all", "%R~r:*", "%W~w:*"});
  EXPECT_EQ(Check(user, {"get", "r:1"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"get", "w:1"}), Denial::kKey);
  EXPECT_EQ(Check(user, {"set", "w:1", "v"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"set", "r:1", "v"}), Denial::kKey);
  // COPY reads its source and writes its destination.
  EXPECT_EQ(Check(user, {"copy", "r:1", "w:1"}), Denial::kNone);
  size_t position = 0;
  EXPECT_EQ(Check(user, {"copy", "w:1", "r:1"}, &position), Denial::kKey);
  EXPECT_EQ(position, 1u);
  // EXISTS reads no value: any pattern lets it through.
  EXPECT_EQ(Check(user, {"exists", "w:1"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"mget", "r:1", "r:2", "x"}, &position), Denial::kKey);
  EXPECT_EQ(position, 3u);
}

TEST(AclCheck, ChannelsAndPatternSubscriptions) {
  User user = MakeUser({"+@all", "&news.*"});
  EXPECT_EQ(Check(user, {"publish", "news.sport", "hi"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"publish", "weather", "hi"}), Denial::kChannel);
  size_t position = 0;
  EXPECT_EQ(Check(user, {"subscribe", "news.a", "weather"}, &position), Denial::kChannel);
  EXPECT_EQ(position, 2u);
  // A pattern subscription must name an allowed pattern literally.
  EXPECT_EQ(Check(user, {"psubscribe", "news.*"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"psubscribe", "news.s*"}), Denial::kChannel);
  EXPECT_EQ(Check(user, {"unsubscribe", "weather"}), Denial::kNone);
}

TEST(AclCheck, FirstArgumentsAndSubcommands) {
  User user = MakeUser({"-@all", "+select|0", "+config|get"});
  EXPECT_EQ(Check(user, {"select", "0"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"select", "1"}), Denial::kCommand);
  EXPECT_EQ(Check(user, {"config", "get", "maxmemory"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"config", "set", "maxmemory", "1"}), Denial::kCommand);
  // AUTH and HELLO need no permission.
  EXPECT_EQ(Check(user, {"auth", "pw"}), Denial::kNone);
}

TEST(AclCheck, SelectorsAllowWhenOneAllowsAllAndReportTheWorstRefusal) {
  User user = MakeUser({"+get", "~a:*", "(+set ~b:*)"});
  EXPECT_EQ(Check(user, {"get", "a:1"}), Denial::kNone);
  EXPECT_EQ(Check(user, {"set", "b:1", "v"}), Denial::kNone);
  // The root denies the command, the selector the key: the key is reported.
  size_t position = 0;
  EXPECT_EQ(Check(user, {"set", "a:1", "v"}, &position), Denial::kKey);
  EXPECT_EQ(position, 1u);
  EXPECT_EQ(Check(user, {"del", "a:1"}), Denial::kCommand);
}

TEST(AclSelectors, SpreadArgumentsAreMerged) {
  std::vector<std::string> merged;
  size_t unmatched = 0;
  const std::vector<std::string_view> words = {"on", "(~a", "+get", "+set)", "(+del)"};
  ASSERT_TRUE(MergeSelectorArguments(words, &merged, &unmatched));
  EXPECT_EQ(merged, (std::vector<std::string>{"on", "(~a +get +set)", "(+del)"}));
  const std::vector<std::string_view> open = {"on", "(~a", "+get"};
  EXPECT_FALSE(MergeSelectorArguments(open, &merged, &unmatched));
  EXPECT_EQ(unmatched, 1u);
}

// Model: the set of allowed command rows, changed by each rule as the rules read in Redis's
// documentation (a command rule covers its subcommands; a category covers its rows and, for
// a container, all its subcommands).
struct Model {
  std::map<std::string, bool> allowed;

  Model() {
    for (const Command* command : Table().All()) {
      allowed[command->name] = false;
      for (const auto& sub : command->subcommands) allowed[sub->name] = false;
    }
  }
  void SetRow(const Command& command, bool allow) {
    allowed[command.name] = allow;
    for (const auto& sub : command.subcommands) allowed[sub->name] = allow;
  }
  void Apply(const std::string& rule) {
    const bool allow = rule[0] == '+';
    if (rule == "+@all" || rule == "-@all") {
      for (auto& [name, value] : allowed) value = allow;
    } else if (rule[1] == '@') {
      const uint32_t category = AclCategoryByName(rule.substr(2));
      for (const Command* command : Table().All()) {
        if (command->acl_categories & category) SetRow(*command, allow);
        for (const auto& sub : command->subcommands) {
          if (sub->acl_categories & category) SetRow(*sub, allow);
        }
      }
    } else {
      SetRow(*Table().FindFullName(rule.substr(1)), allow);
    }
  }
};

TEST(AclModel, CommandRulesMatchAPlainMapAndTheirDescriptionReplays) {
  const std::vector<std::string> names = {"get",         "set",           "config",
                                          "config|get",  "client",        "client|list",
                                          "client|kill", "del",           "zadd",
                                          "eval",        "script|flush",  "acl|setuser"};
  const std::vector<std::string> categories = {"read",  "write",     "admin",    "dangerous",
                                               "slow",  "fast",      "keyspace", "scripting",
                                               "connection", "string", "all"};
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    User user("model", 0);
    Model model;
    std::vector<std::string> rules;
    const int count = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < count; ++i) {
      const char sign = rng() % 2 ? '+' : '-';
      std::string rule = rng() % 2 ? std::string(1, sign) + names[rng() % names.size()]
                                   : std::string(1, sign) + "@" + categories[rng() % categories.size()];
      rules.push_back(rule);
      ASSERT_EQ(user.Apply(rule, Context()), RuleError::kNone) << rule;
      model.Apply(rule);
    }
    std::string trace;
    for (const std::string& rule : rules) trace += rule + " ";
    const Selector& root = user.selectors()[0];
    for (const auto& [name, allow] : model.allowed) {
      const Command* command = Table().FindFullName(name);
      ASSERT_EQ(root.AllowsCommandBit(command->acl_id), allow)
          << "seed " << seed << ": " << name << " after " << trace;
    }
    // The description, applied to a new user, gives the same permissions.
    User replayed("replay", 0);
    const std::string description = root.DescribeCommands();
    size_t start = 0;
    while (start < description.size()) {
      size_t end = description.find(' ', start);
      if (end == std::string::npos) end = description.size();
      ASSERT_EQ(replayed.Apply(description.substr(start, end - start), Context()),
                RuleError::kNone);
      start = end + 1;
    }
    EXPECT_EQ(replayed.selectors()[0].command_bits(), root.command_bits())
        << "seed " << seed << ": " << trace << "-> " << description;
  }
}

// Hostile rules: random bytes and near-rules never crash the parser, a refused rule leaves a
// staged copy's user unchanged through AccessControl, and whatever was accepted describes to
// rules that replay to the same user.
TEST(AclModel, HostileRulesAreRefusedOrReplayable) {
  const std::vector<std::string> pieces = {
      "~", "%", "R", "W", "&", "+", "-", "@", "|", "(", ")", "*", " ", "\t", std::string(1, '\0'),
      "get", "config", "config|get", "select|0", "@all", "@read", "allkeys", "on", "off", ">",
      "<", "#", "!", "nopass", "reset", "clearselectors", "resetkeys", "resetchannels", "\"",
      "'", "\xff", "0123456789abcdef"};
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    AccessControl access(Table());
    std::vector<std::string> rules;
    const int count = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < count; ++i) {
      std::string rule;
      const int parts = 1 + static_cast<int>(rng() % 4);
      for (int j = 0; j < parts; ++j) rule += pieces[rng() % pieces.size()];
      rules.push_back(rule);
    }
    const std::vector<std::string_view> views(rules.begin(), rules.end());
    const std::string error = access.SetUser("fuzz", views);
    const User* user = access.Find("fuzz");
    if (!error.empty()) {
      EXPECT_EQ(user, nullptr) << "seed " << seed << ": " << error;
      continue;
    }
    ASSERT_NE(user, nullptr);
    // The description is what ACL SAVE writes: it must load back to the same user.
    const std::string line = AccessControl::UserLine(*user);
    AccessControl reloaded(Table());
    std::vector<std::string> words;
    size_t start = 0;
    while (start <= line.size()) {
      const size_t end = std::min(line.find(' ', start), line.size());
      words.push_back(line.substr(start, end - start));
      start = end + 1;
    }
    const std::vector<std::string_view> replay(words.begin() + 2, words.end());
    ASSERT_EQ(reloaded.SetUser("fuzz", replay), "") << "seed " << seed << ": " << line;
    EXPECT_EQ(AccessControl::UserLine(*reloaded.Find("fuzz")), line) << "seed " << seed;
  }
}

TEST(AccessControl, SetUserIsAllOrNothing) {
  AccessControl access(Table());
  EXPECT_EQ(access.SetUser("bob", std::vector<std::string_view>{"on", ">pw", "+get"}), "");
  const std::string before = access.Find("bob")->Describe();
  EXPECT_EQ(access.SetUser("bob", std::vector<std::string_view>{"+set", "bogus"}),
            "Error in ACL SETUSER modifier 'bogus': Syntax error");
  EXPECT_EQ(access.Find("bob")->Describe(), before);
  EXPECT_EQ(access.SetUser("carol", std::vector<std::string_view>{"+nosuch"}),
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_EQ(access.Find("carol"), nullptr);
  EXPECT_EQ(access.SetUser("a b", std::vector<std::string_view>{}),
            "Usernames can't contain spaces or null characters");
  EXPECT_EQ(access.SetUser("bob", std::vector<std::string_view>{"(+get", "~x"}),
            "Unmatched parenthesis in acl selector starting at '(+get'.");
}

TEST(AccessControl, DefaultUserAndRequirepass) {
  AccessControl access(Table());
  EXPECT_EQ(AccessControl::UserLine(access.default_user()),
            "user default on nopass sanitize-payload ~* &* +@all");
  EXPECT_FALSE(access.DefaultNeedsAuth());
  access.SetDefaultPassword("pw");
  EXPECT_TRUE(access.DefaultNeedsAuth());
  EXPECT_EQ(access.Authenticate("default", "pw"), &access.default_user());
  EXPECT_EQ(access.Authenticate("default", "no"), nullptr);
  EXPECT_EQ(access.Authenticate("nobody", "pw"), nullptr);
  access.SetDefaultPassword("");
  EXPECT_FALSE(access.DefaultNeedsAuth());
  EXPECT_EQ(access.Remove("default"), nullptr);
}

TEST(AccessControl, LogGroupsRepeatsAndKeepsTheNewestFirst) {
  AccessControl access(Table());
  access.Log(Denial::kKey, LogContext::kTopLevel, "k", "bob", "id=1", 1000, 3);
  access.Log(Denial::kKey, LogContext::kTopLevel, "k", "bob", "id=2", 2000, 3);
  ASSERT_EQ(access.log().size(), 1u);
  EXPECT_EQ(access.log()[0].count, 2u);
  EXPECT_EQ(access.log()[0].client_info, "id=2");
  EXPECT_EQ(access.log()[0].created_ms, 1000);
  EXPECT_EQ(access.log()[0].updated_ms, 2000);
  // Over a minute later it is a new entry.
  access.Log(Denial::kKey, LogContext::kTopLevel, "k", "bob", "id=3", 70000, 3);
  access.Log(Denial::kAuth, LogContext::kMulti, "AUTH", "eve", "id=4", 70001, 3);
  access.Log(Denial::kCommand, LogContext::kLua, "set", "bob", "id=5", 70002, 3);
  ASSERT_EQ(access.log().size(), 3u);  // trimmed to the limit
  EXPECT_EQ(access.log()[0].object, "set");
  EXPECT_EQ(access.log()[0].entry_id, 3u);
  EXPECT_EQ(access.log()[2].entry_id, 1u);
  EXPECT_EQ(access.denied().key, 3u);
  EXPECT_EQ(access.denied().auth, 1u);
  EXPECT_EQ(access.denied().command, 1u);
}

std::string WriteFile(const std::string& text) {
  static int counter = 0;
  const std::string path = testing::TempDir() + "acl_test_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++) + ".acl";
  std::ofstream(path) << text;
  return path;
}

TEST(AccessControl, FileLoadReplacesEveryoneOrNothing) {
  AccessControl access(Table());
  ASSERT_EQ(access.SetUser("old", std::vector<std::string_view>{"on"}), "");
  User* default_before = &access.default_user();
  std::vector<std::unique_ptr<User>> dropped;
  const std::string bad = WriteFile("user a on +get\nuser b +nosuch\nbogus line\n");
  const std::string errors = access.LoadFile(bad, &dropped);
  EXPECT_EQ(errors, bad + ":2: Error in applying operation '+nosuch': Unknown command or "
                          "category name in ACL. " + bad +
                          ":3 should start with user keyword followed by the username. "
                          "WARNING: ACL errors detected, no change to the previously active "
                          "ACL rules was performed");
  EXPECT_NE(access.Find("old"), nullptr);
  EXPECT_TRUE(dropped.empty());

  const std::string good = WriteFile("user default on >pw ~* &* +@all\n\nuser a on +get ~a:*\n");
  EXPECT_EQ(access.LoadFile(good, &dropped), "");
  EXPECT_EQ(access.Find("old"), nullptr);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0]->name(), "old");
  EXPECT_EQ(&access.default_user(), default_before);
  EXPECT_TRUE(access.DefaultNeedsAuth());
  EXPECT_EQ(AccessControl::UserLine(*access.Find("a")),
            "user a on sanitize-payload ~a:* resetchannels -@all +get");

  // What SaveFile writes, LoadFile reads back to the same users.
  const std::string saved = WriteFile("");
  EXPECT_EQ(access.SaveFile(saved), "");
  std::ifstream in(saved);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  AccessControl reloaded(Table());
  EXPECT_EQ(reloaded.LoadFile(saved, &dropped), "");
  std::string again;
  for (const auto& [name, user] : reloaded.users()) again += AccessControl::UserLine(*user) + "\n";
  EXPECT_EQ(again, text);
  for (const std::string& path : {bad, good, saved}) std::remove(path.c_str());
}

TEST(AccessControl, StartupRefusesUserLinesWithAnAclFile) {
  AccessControl access(Table());
  const std::string error = access.LoadAtStartup({{"bob", "on"}}, "/nonexistent.acl");
  EXPECT_TRUE(error.starts_with("Configuring Redis with users defined in redis.conf and at the "
                                "same setting an ACL file path is invalid."))
      << error;
  AccessControl lines(Table());
  EXPECT_EQ(lines.LoadAtStartup({{"bob", "on", ">pw", "+get"}, {"default", "off"}}, ""), "");
  EXPECT_NE(lines.Authenticate("bob", "pw"), nullptr);
  EXPECT_TRUE(lines.DefaultNeedsAuth());
  AccessControl broken(Table());
  EXPECT_EQ(broken.LoadAtStartup({{"bob", "+nosuch"}}, ""),
            "Error loading ACL rule '+nosuch' for the user named 'bob': Unknown command or "
            "category name in ACL");
  AccessControl missing(Table());
  EXPECT_TRUE(missing.LoadAtStartup({}, "/nonexistent.acl")
                  .starts_with("Aborting Redis startup because of ACL errors: Error loading "
                               "ACLs, opening file '/nonexistent.acl'"));
}

}  // namespace
}  // namespace goblin::acl
