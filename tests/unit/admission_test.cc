// Command admission (server/dispatch.cc) in-process: which refusal a call gets when several
// apply, in Redis's order, what EXEC is judged by, and that the commands EXEC runs are not
// judged again. The refusals that need a second process (a master, a busy script) are compared
// with redis-server in tests/differential/test_admission_order.py.
#include <gtest/gtest.h>

#include <string>

#include "in_process_server.h"
#include "server/errors.h"

namespace goblin {
namespace {

std::string ErrorReply(std::string_view text) { return "-" + std::string(text) + "\r\n"; }

const std::string kOk = "+OK\r\n";
const std::string kQueued = "+QUEUED\r\n";
const std::string kNotInTransaction = ErrorReply("ERR Command not allowed inside a transaction");
const std::string kOutOfMemory = ErrorReply(errors::kOutOfMemory);

Config WithPassword() {
  Config config = InProcessServer::Defaults();
  config.requirepass = "secret";
  return config;
}

TEST(AdmissionTest, AnUnknownCommandIsRefusedBeforeAuthentication) {
  InProcessServer goblin(WithPassword());
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"NOSUCH", "a"}),
            ErrorReply("ERR unknown command 'NOSUCH', with args beginning with: 'a' "));
  EXPECT_EQ(goblin.Call(client, {"CONFIG", "NOSUCH"}),
            ErrorReply("ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP."));
}

TEST(AdmissionTest, ArityIsCheckedBeforeAuthentication) {
  InProcessServer goblin(WithPassword());
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"GET"}), ErrorReply(errors::WrongArity("get")));
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), ErrorReply(errors::kNoAuth));
}

TEST(AdmissionTest, AProtectedCommandIsRefusedBeforeAuthentication) {
  InProcessServer goblin(WithPassword());
  Client& client = goblin.Connect();
  const std::string refused = ErrorReply(
      "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.");
  EXPECT_EQ(goblin.Call(client, {"DEBUG", "SLEEP", "0"}), refused);
  EXPECT_EQ(goblin.Call(client, {"AUTH", "secret"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"DEBUG", "SLEEP", "0"}), refused);
  goblin.server().config.enable_debug_command = "local";
  EXPECT_EQ(goblin.Call(client, {"DEBUG", "SLEEP", "0"}), refused);
  client.unix_socket = true;
  EXPECT_EQ(goblin.Call(client, {"DEBUG", "SLEEP", "0"}), kOk);
}

TEST(AdmissionTest, AuthenticationIsCheckedBeforeMemory) {
  InProcessServer goblin(WithPassword());
  goblin.server().config.maxmemory = 1;
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), ErrorReply(errors::kNoAuth));
  EXPECT_EQ(goblin.Call(client, {"AUTH", "secret"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), kOutOfMemory);
}

TEST(AdmissionTest, ACommandMultiMayNotHoldIsRefusedBeforeMemory) {
  InProcessServer goblin;
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  goblin.server().config.maxmemory = 1;
  // Inside MULTI everything but EXEC, DISCARD, QUIT and RESET is refused for memory; SAVE may
  // not be queued at all, and that is said first.
  EXPECT_EQ(goblin.Call(client, {"SAVE"}), kNotInTransaction);
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), kOutOfMemory);
  EXPECT_EQ(goblin.Call(client, {"EXEC"}),
            ErrorReply("EXECABORT Transaction discarded because of previous errors."));
}

TEST(AdmissionTest, ExecIsJudgedByTheFlagsOfItsQueue) {
  InProcessServer goblin;
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), kQueued);
  goblin.server().config.maxmemory = 1;
  EXPECT_EQ(goblin.Call(client, {"EXEC"}),
            ErrorReply("EXECABORT Transaction discarded because of: " +
                       std::string(errors::kOutOfMemory)));
  EXPECT_FALSE(client.in_multi);
  EXPECT_EQ(goblin.Call(client, {"EXISTS", "k"}), ":0\r\n");

  // A queue of reads may run over the limit.
  goblin.server().config.maxmemory = 0;
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), kQueued);
  goblin.server().config.maxmemory = 1;
  EXPECT_EQ(goblin.Call(client, {"EXEC"}), "*1\r\n$-1\r\n");
}

TEST(AdmissionTest, ADiscardedQueueLeavesNoFlagsBehind) {
  InProcessServer goblin;
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), kQueued);
  EXPECT_EQ(goblin.Call(client, {"DISCARD"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), kQueued);
  goblin.server().config.maxmemory = 1;
  EXPECT_EQ(goblin.Call(client, {"EXEC"}), "*1\r\n$-1\r\n");
}

TEST(AdmissionTest, TheCommandsExecRunsAreNotJudgedAgain) {
  InProcessServer goblin;
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(client, {"SUBSCRIBE", "news"}), kQueued);
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), kQueued);
  // The subscription made by the transaction does not refuse the GET queued after it.
  EXPECT_EQ(goblin.Call(client, {"EXEC"}),
            "*2\r\n*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n$1\r\nv\r\n");
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}),
            ErrorReply("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                       "QUIT / RESET are allowed in this context"));
}

TEST(AdmissionTest, AMonitorMayNotTouchTheKeyspaceNorPublish) {
  InProcessServer goblin;
  Client& monitor = goblin.Connect();
  EXPECT_EQ(goblin.Call(monitor, {"MONITOR"}), kOk);
  const std::string refused = ErrorReply("ERR Replica can't interact with the keyspace");
  EXPECT_EQ(goblin.Call(monitor, {"GET", "k"}), refused);
  EXPECT_EQ(goblin.Call(monitor, {"SET", "k", "v"}), refused);
  EXPECT_EQ(goblin.Call(monitor, {"PUBLISH", "news", "hello"}), refused);
  // A monitor may still ping (and is fed its own command).
  EXPECT_TRUE(goblin.Call(monitor, {"PING"}).starts_with("+PONG\r\n"));
}

TEST(AdmissionTest, RefusedCallsAreCountedAsRejected) {
  InProcessServer goblin(WithPassword());
  Client& client = goblin.Connect();
  goblin.Call(client, {"GET", "k"});
  goblin.Call(client, {"GET", "k"});
  const Command* get = goblin.server().commands.Find("get");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->stats.rejected_calls, 2u);
  EXPECT_EQ(get->stats.calls, 0u);
}

TEST(AdmissionTest, APauseOfWritesHoldsWritesAndExecOfAQueueWithOne) {
  InProcessServer goblin;
  Client& queuer = goblin.Connect();
  EXPECT_EQ(goblin.Call(queuer, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(queuer, {"INCR", "n"}), kQueued);

  goblin.server().PauseClients(goblin.server().NowMs() + 3600 * 1000, /*all=*/false);
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"GET", "k"}), "$-1\r\n");
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), "");
  EXPECT_TRUE(client.paused);
  // The pause comes before MULTI's queue: a write waits even to be queued.
  Client& late = goblin.Connect();
  EXPECT_EQ(goblin.Call(late, {"MULTI"}), kOk);
  EXPECT_EQ(goblin.Call(late, {"INCR", "n"}), "");
  EXPECT_TRUE(late.paused);
  // EXEC waits for the write it holds.
  EXPECT_EQ(goblin.Call(queuer, {"EXEC"}), "");
  EXPECT_TRUE(queuer.paused);
}

// The effects a command leaves for the append-only file and the replicas are those Redis
// propagates: a relative expiry becomes absolute, INCRBYFLOAT a SET of the result.
TEST(AdmissionTest, AnAdmittedWriteRecordsItsEffects) {
  InProcessServer goblin;
  RecordedEffects effects(&goblin.server().effects);
  Client& client = goblin.Connect();
  EXPECT_EQ(goblin.Call(client, {"INCRBYFLOAT", "f", "1.5"}), "$3\r\n1.5\r\n");
  EXPECT_EQ(effects.Take(), std::vector<std::string>{"SET f 1.5 KEEPTTL"});
  EXPECT_EQ(goblin.Call(client, {"GET", "f"}), "$3\r\n1.5\r\n");
  EXPECT_TRUE(effects.Take().empty());
  // A refused write records nothing.
  goblin.server().config.maxmemory = 1;
  EXPECT_EQ(goblin.Call(client, {"SET", "k", "v"}), kOutOfMemory);
  EXPECT_TRUE(effects.Take().empty());
}

}  // namespace
}  // namespace goblin
