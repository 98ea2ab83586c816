#include "server/effects.h"

#include <algorithm>

namespace goblin {

namespace {

Effect MakeEffect(int db, std::span<const std::string_view> argv) {
  Effect effect;
  effect.db = db;
  effect.argv.assign(argv.begin(), argv.end());
  return effect;
}

}  // namespace

void EffectStream::AddConsumer(EffectConsumer* consumer) {
  if (std::find(consumers_.begin(), consumers_.end(), consumer) == consumers_.end()) {
    consumers_.push_back(consumer);
    if (consumer->TakesEffectsForReplicas()) ++replica_consumers_;
  }
}

void EffectStream::RemoveConsumer(EffectConsumer* consumer) {
  if (std::erase(consumers_, consumer) > 0 && consumer->TakesEffectsForReplicas()) {
    --replica_consumers_;
  }
}

void EffectStream::BeginCommand() {
  if (depth_ == frames_.size()) frames_.emplace_back();
  Frame& frame = frames_[depth_++];
  frame.replacement.clear();
  frame.replaced = false;
  frame.for_replicas_only = false;
  frame.forced = false;
}

void EffectStream::Replace(int db, std::span<const std::string_view> argv) {
  if (!active() || depth_ == 0) return;
  Frame& frame = frames_[depth_ - 1];
  frame.replaced = true;
  frame.replacement.push_back(MakeEffect(db, argv));
}

void EffectStream::EndCommand(int db, std::span<const std::string_view> argv, bool changed) {
  Frame& frame = frames_[--depth_];
  changed = changed || frame.forced;
  const uint8_t targets = frame.for_replicas_only ? (targets_ & kToReplicas) : targets_;
  if (active() && targets != 0) {
    if (changed && frame.replaced) {
      for (Effect& effect : frame.replacement) {
        effect.targets = targets;
        pending_.push_back(std::move(effect));
      }
    } else if (changed || frame.for_replicas_only) {
      pending_.push_back(MakeEffect(db, argv));
      pending_.back().targets = targets;
    }
  }
  if (depth_ == 0) Deliver();
}

void EffectStream::Add(int db, std::span<const std::string_view> argv) {
  if (!active()) return;
  pending_.push_back(MakeEffect(db, argv));
  if (depth_ == 0) Deliver();
}

void EffectStream::Deliver() {
  const bool unwrapped = unwrapped_;
  unwrapped_ = false;
  if (pending_.empty()) return;
  if (!consumers_.empty()) {
    if (pending_.size() > 1 && !unwrapped) {
      const int first_db = pending_.front().db;
      const int last_db = pending_.back().db;
      pending_.insert(pending_.begin(), Effect{first_db, {"MULTI"}});
      pending_.push_back(Effect{last_db, {"EXEC"}});
    }
    for (EffectConsumer* consumer : consumers_) consumer->ConsumeEffects(pending_);
  }
  pending_.clear();
}

}  // namespace goblin
