#include "server/effects.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace goblin {
namespace {

// Each delivered unit, its effects written as "db:WORD WORD ..."; a replication-like consumer
// with for_replicas.
struct Recorder : EffectConsumer {
  explicit Recorder(bool for_replicas = false) : for_replicas(for_replicas) {}
  bool TakesEffectsForReplicas() const override { return for_replicas; }
  bool for_replicas;
  std::vector<std::vector<std::string>> units;
  void ConsumeEffects(std::span<const Effect> effects) override {
    std::vector<std::string>& unit = units.emplace_back();
    for (const Effect& effect : effects) {
      std::string text = std::to_string(effect.db) + ":";
      for (const std::string& word : effect.argv) text += (text.back() == ':' ? "" : " ") + word;
      unit.push_back(text);
    }
  }
};

using Words = std::vector<std::string_view>;

class EffectStreamTest : public testing::Test {
 protected:
  EffectStreamTest() { stream.AddConsumer(&recorder); }

  // Runs one command: replaced_by (if any) through Replace, then EndCommand.
  void Command(int db, Words argv, bool changed, std::vector<Words> replaced_by = {}) {
    stream.BeginCommand();
    for (const Words& words : replaced_by) stream.Replace(db, words);
    stream.EndCommand(db, argv, changed);
  }

  Recorder recorder;
  EffectStream stream;
};

TEST_F(EffectStreamTest, AChangingCommandIsItsOwnEffect) {
  Command(0, {"SET", "k", "v"}, true);
  ASSERT_EQ(recorder.units.size(), 1u);
  EXPECT_EQ(recorder.units[0], std::vector<std::string>{"0:SET k v"});
}

TEST_F(EffectStreamTest, ACommandThatChangedNothingHasNoEffect) {
  Command(0, {"DEL", "missing"}, false);
  Command(0, {"SET", "k", "v", "EX", "10"}, false, {{"SET", "k", "v", "PXAT", "99"}});
  EXPECT_TRUE(recorder.units.empty());
}

TEST_F(EffectStreamTest, AReplacementStandsForTheCommand) {
  Command(5, {"SET", "k", "v", "EX", "10"}, true, {{"SET", "k", "v", "PXAT", "99"}});
  ASSERT_EQ(recorder.units.size(), 1u);
  EXPECT_EQ(recorder.units[0], std::vector<std::string>{"5:SET k v PXAT 99"});
}

TEST_F(EffectStreamTest, SeveralEffectsOfOneCommandAreWrappedInMultiExec) {
  stream.BeginCommand();
  stream.Add(2, {"DEL", "expired"});
  stream.Replace(2, {"SREM", "s", "a"});
  stream.Replace(2, {"SREM", "s", "b"});
  stream.EndCommand(2, Words{"SPOP", "s", "2"}, true);
  ASSERT_EQ(recorder.units.size(), 1u);
  EXPECT_EQ(recorder.units[0], (std::vector<std::string>{"2:MULTI", "2:DEL expired", "2:SREM s a",
                                                         "2:SREM s b", "2:EXEC"}));
}

TEST_F(EffectStreamTest, ATransactionWithOneEffectDeliversItBare) {
  // Redis 7 wraps a unit in MULTI/EXEC only when it holds more than one change.
  stream.BeginCommand();  // EXEC
  Command(1, {"GET", "k"}, false);
  Command(1, {"SET", "k", "v"}, true);
  EXPECT_TRUE(recorder.units.empty()) << "delivered before EXEC returned";
  stream.EndCommand(1, Words{"EXEC"}, false);
  ASSERT_EQ(recorder.units.size(), 1u);
  EXPECT_EQ(recorder.units[0], std::vector<std::string>{"1:SET k v"});
}

void Publish(EffectStream& stream, int db) {
  stream.BeginCommand();
  stream.ReplicateUnchanged();
  stream.EndCommand(db, Words{"PUBLISH", "ch", "m"}, false);
}

TEST_F(EffectStreamTest, AnEffectForTheReplicasIsGatheredOnlyWhileReplicationListens) {
  Publish(stream, 4);
  EXPECT_TRUE(recorder.units.empty());
  Recorder replication(true);
  stream.AddConsumer(&replication);
  stream.AddConsumer(&replication);  // counted once
  Publish(stream, 4);
  ASSERT_EQ(replication.units.size(), 1u);
  EXPECT_EQ(replication.units[0], std::vector<std::string>{"4:PUBLISH ch m"});
  EXPECT_EQ(recorder.units, replication.units) << "every consumer gets the unit; each may skip";
  stream.RemoveConsumer(&replication);
  stream.RemoveConsumer(&replication);
  Publish(stream, 4);
  EXPECT_EQ(recorder.units.size(), 1u);
}

TEST_F(EffectStreamTest, AnEffectForTheReplicasKeepsItsPlaceInATransaction) {
  Recorder replication(true);
  stream.AddConsumer(&replication);
  struct Marks : EffectConsumer {
    std::vector<bool> marks;
    void ConsumeEffects(std::span<const Effect> effects) override {
      for (const Effect& effect : effects) marks.push_back(effect.targets == kToReplicas);
    }
  } marks;
  stream.AddConsumer(&marks);
  stream.BeginCommand();  // EXEC
  Command(0, {"SET", "k", "v"}, true);
  Publish(stream, 0);
  Command(0, {"SET", "k", "w"}, true);
  stream.EndCommand(0, Words{"EXEC"}, false);
  EXPECT_EQ(
      recorder.units.back(),
      (std::vector<std::string>{"0:MULTI", "0:SET k v", "0:PUBLISH ch m", "0:SET k w", "0:EXEC"}));
  EXPECT_EQ(marks.marks, (std::vector<bool>{false, false, true, false, false}));
  // The next command is not marked any more.
  Command(0, {"SET", "k", "x"}, true);
  EXPECT_EQ(marks.marks.back(), false);
}

TEST_F(EffectStreamTest, TargetsChooseTheConsumersOfCommandsEffects) {
  Recorder replication(true);
  stream.AddConsumer(&replication);
  std::vector<uint8_t> targets;
  struct Targets : EffectConsumer {
    std::vector<uint8_t>* out;
    void ConsumeEffects(std::span<const Effect> effects) override {
      for (const Effect& effect : effects) out->push_back(effect.targets);
    }
  } seen;
  seen.out = &targets;
  stream.AddConsumer(&seen);
  // The log alone: a PUBLISH (for the replicas) has nowhere to go.
  stream.set_targets(kToLog);
  Command(0, {"SET", "k", "v"}, true);
  Publish(stream, 0);
  stream.set_targets(kToReplicas);
  Command(0, {"SET", "k", "w"}, true);
  Publish(stream, 0);
  stream.set_targets(0);
  Command(0, {"SET", "k", "x"}, true);
  Publish(stream, 0);
  // Changes outside a command's own effect go everywhere.
  stream.Add(0, {"DEL", "expired"});
  stream.set_targets(kToAll);
  EXPECT_EQ(targets, (std::vector<uint8_t>{kToLog, kToReplicas, kToReplicas, kToAll}));
}

TEST_F(EffectStreamTest, AnEmptyTransactionDeliversNothing) {
  stream.BeginCommand();
  stream.EndCommand(0, Words{"EXEC"}, false);
  EXPECT_TRUE(recorder.units.empty());
}

TEST_F(EffectStreamTest, AChangeOutsideACommandIsDeliveredAtOnce) {
  stream.Add(3, {"DEL", "evicted"});
  ASSERT_EQ(recorder.units.size(), 1u);
  EXPECT_EQ(recorder.units[0], std::vector<std::string>{"3:DEL evicted"});
}

TEST_F(EffectStreamTest, NothingIsGatheredWithoutAConsumer) {
  stream.RemoveConsumer(&recorder);
  EXPECT_FALSE(stream.active());
  Command(0, {"SET", "k", "v"}, true);
  stream.Add(0, {"DEL", "k"});
  stream.AddConsumer(&recorder);
  Command(0, {"SET", "a", "b"}, true);
  ASSERT_EQ(recorder.units.size(), 1u)
      << "effects from before the consumer came leaked into its unit";
  EXPECT_EQ(recorder.units[0], std::vector<std::string>{"0:SET a b"});
}

TEST_F(EffectStreamTest, EveryConsumerGetsEveryUnitInTheOrderTheyWereAdded) {
  Recorder second;
  std::vector<std::string> order;
  struct Tagger : EffectConsumer {
    Tagger(std::vector<std::string>* order, std::string tag) : order(order), tag(std::move(tag)) {}
    std::vector<std::string>* order;
    std::string tag;
    void ConsumeEffects(std::span<const Effect>) override { order->push_back(tag); }
  };
  Tagger first_tag(&order, "first");
  Tagger second_tag(&order, "second");
  stream.AddConsumer(&second);
  stream.AddConsumer(&first_tag);
  stream.AddConsumer(&second_tag);
  stream.AddConsumer(&second);  // already listening: still one delivery
  Command(1, {"SET", "k", "v"}, true);
  stream.Add(2, {"DEL", "gone"});
  EXPECT_EQ(recorder.units, second.units);
  ASSERT_EQ(second.units.size(), 2u);
  EXPECT_EQ(second.units[1], std::vector<std::string>{"2:DEL gone"});
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "first", "second"}));
  stream.RemoveConsumer(&recorder);
  EXPECT_TRUE(stream.active());
  Command(0, {"SET", "a", "b"}, true);
  EXPECT_EQ(recorder.units.size(), 2u);
  EXPECT_EQ(second.units.size(), 3u);
}

}  // namespace
}  // namespace goblin
