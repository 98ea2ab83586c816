// The effects stream: every change the server makes to data, in the form a replay must see.
//
// A command's own effect is, by default, the command as it arrived (when it is a write and
// changed something). A handler whose arguments would not replay to the same state records
// what to log instead through its context (CommandContext::Propagate): SET ... EX becomes
// SET ... PXAT, INCRBYFLOAT a SET, SPOP an SREM of the members it drew. The keyspace adds the
// deletions it makes on its own (an expired key as DEL), the evictor its evictions. PUBLISH and
// SPUBLISH change no data but are effects for the replicas alone, which deliver the message to
// their own subscribers (a replay of the log must not deliver it again).
//
// Effects are gathered per unit: one top-level command, or a whole transaction run by EXEC
// (its queued commands are nested units that join the outer one). When the outermost command
// returns, the unit's effects go to the consumer in order, inside MULTI ... EXEC when the unit
// made more than one change (a transaction or script with a single write logs it bare, as
// Redis 7 does). The append-only file and replication
// (server/replication.h) consume it, each registered while it listens.
//
// Invariants:
//  1. Effects reach every consumer in the order they were made, a whole unit at a time, before
//     the reply of the unit's command is written (the server flushes the log first), each
//     consumer in the order it was added.
//  2. A write command that changed nothing has no effect of its own (its expiries still count).
//  3. Nothing is gathered while no consumer listens (active() is false): a server without an
//     append-only file or replication backlog pays one branch per command.
//  4. An effect's targets say which consumers take it; the unit's MULTI/EXEC go to all (Redis
//     logs a transaction of messages alone as an empty MULTI/EXEC). PUBLISH's effect is for the
//     replicas only and gathered only while a consumer that takes such effects listens
//     (replication, once it has a backlog: Redis propagates PUBLISH only then).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

// Where an effect goes: the append-only file, the replicas (redis.set_repl's REPL_AOF and
// REPL_REPLICA).
enum EffectTarget : uint8_t { kToLog = 1, kToReplicas = 2, kToAll = kToLog | kToReplicas };

struct Effect {
  int db = 0;
  std::vector<std::string> argv;
  uint8_t targets = kToAll;  // Invariant 4
};

class EffectConsumer {
 public:
  virtual ~EffectConsumer() = default;
  // One unit's effects in order, MULTI and EXEC included where the unit needs them.
  virtual void ConsumeEffects(std::span<const Effect> effects) = 0;
  // True for the consumer that feeds replicas: while one listens, effects for the replicas
  // only are gathered (Invariant 4).
  virtual bool TakesEffectsForReplicas() const { return false; }
};

class EffectStream {
 public:
  EffectStream() = default;
  EffectStream(const EffectStream&) = delete;
  EffectStream& operator=(const EffectStream&) = delete;

  // consumer listens from now on (adding one already listening changes nothing).
  void AddConsumer(EffectConsumer* consumer);
  // consumer stops listening; with none left nothing is gathered.
  void RemoveConsumer(EffectConsumer* consumer);
  bool active() const { return !consumers_.empty() && suspended_ == 0; }
  // Between Suspend and Resume (they nest) nothing is gathered: the append-only file replayed
  // inside DEBUG LOADAOF, whose commands must not be logged or replicated again (Redis
  // propagates nothing while it loads).
  void Suspend() { ++suspended_; }
  void Resume() { --suspended_; }

  // A command starts; a command started inside another (EXEC's queue) joins its unit.
  void BeginCommand();
  // The handler's replacement for the command's own effect; several calls record several
  // commands, in order. Ignored while not active().
  void Replace(int db, std::span<const std::string_view> argv);
  void Replace(int db, std::initializer_list<std::string_view> argv) {
    Replace(db, std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  // The command's own effect is what Replace records, nothing when it records nothing (a change
  // a replay need not repeat: XREADGROUP's history reads count deliveries, as Redis does not
  // propagate).
  void ReplaceWithNothing() {
    if (active() && depth_ > 0) frames_[depth_ - 1].replaced = true;
  }
  // The command's own effect, as it arrived, joins the unit although it changed nothing, marked
  // for the replicas only (PUBLISH), when a consumer takes such effects. Muting still drops it.
  void ReplicateUnchanged() {
    if (replica_consumers_ > 0 && depth_ > 0) frames_[depth_ - 1].for_replicas_only = true;
  }
  // The command's own effect joins the unit although it changed nothing (FLUSHDB of an empty
  // database, which Redis propagates all the same).
  void LogUnchanged() {
    if (active() && depth_ > 0) frames_[depth_ - 1].forced = true;
  }
  // When the running command is the outermost one, its unit is delivered without MULTI/EXEC
  // however many effects it made: SCAN and RANDOMKEY, whose lazy expiries of keys they happened
  // upon are unrelated deletions, as Redis 7.2 logs them (CMD_TOUCHES_ARBITRARY_KEYS). Run by
  // EXEC or a script, the command joins the outer unit as usual.
  void LeaveUnwrapped() {
    if (depth_ == 1) unwrapped_ = true;
  }
  // The command ends. With changed, its effect (the replacement, else argv as it arrived)
  // joins the unit; without, any replacement is dropped (Invariant 2). The outermost command
  // delivers the unit.
  void EndCommand(int db, std::span<const std::string_view> argv, bool changed);
  // Where the effects of the commands that end from now on go (a script's redis.set_repl: none,
  // the log, the replicas or both); changes made through Add always go to both.
  void set_targets(uint8_t targets) { targets_ = targets; }

  // A change outside any command's own effect (an expiry, an eviction): joins the running
  // unit, or is delivered at once when no command runs.
  void Add(int db, std::span<const std::string_view> argv);
  void Add(int db, std::initializer_list<std::string_view> argv) {
    Add(db, std::span<const std::string_view>(argv.begin(), argv.size()));
  }

 private:
  struct Frame {
    std::vector<Effect> replacement;
    bool replaced = false;
    bool for_replicas_only = false;
    bool forced = false;
  };

  void Deliver();

  std::vector<EffectConsumer*> consumers_;
  size_t replica_consumers_ = 0;  // those of consumers_ that take effects for the replicas
  std::vector<Frame> frames_;     // the commands running, outermost first
  size_t depth_ = 0;              // frames_ in use (frames_ keeps its buffers between units)
  std::vector<Effect> pending_;   // the running unit's effects
  uint8_t targets_ = kToAll;
  int suspended_ = 0;
  bool unwrapped_ = false;  // the running unit is delivered without MULTI/EXEC
};

}  // namespace goblin
