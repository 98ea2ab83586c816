#include "keyspace/database.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "core/string_number.h"

namespace goblin {

KeyEntry* Database::Find(std::string_view key, int64_t now_ms, bool touch) {
  Table::Slot slot = FindSlot(key);
  if (!slot) return nullptr;
  KeyEntry* entry = slot.entry();
  const bool live =
      !Expired(entry, now_ms) ||
      (expiry_rules_ != nullptr &&
       (expiry_rules_->keep || (expiry_rules_->loading != nullptr && *expiry_rules_->loading)));
  if (live) {
    if (touch && touching_ != nullptr && *touching_) {
      slot.set_stamp(access_->Accessed(slot.stamp()));
    }
    return entry;
  }
  if (expiry_rules_ != nullptr && expiry_rules_->hide) return nullptr;
  DeleteExpired(key);
  return nullptr;
}

void Database::DeleteExpired(std::string_view key) {
  KeyEntry* entry = EraseFromTable(key);
  if (entry == nullptr) return;
  Forget(entry);
  if (waiters_ != nullptr) {
    if (!waiters_->watched.empty() || !waiters_->blocked.empty()) TouchWaiters(key);
    if (waiters_->events != nullptr) waiters_->events->KeyExpired(waiters_->index, key);
    if (waiters_->changes != nullptr) waiters_->changes->KeyChanged(key, true);
  }
  KeyEntry::Destroy(entry);
  if (counters_ != nullptr) ++counters_->expired_keys;
}

bool Database::ExpireIfDue(std::string_view key, int64_t now_ms) {
  const KeyEntry* entry = table_.Find(key);
  if (entry == nullptr || !entry->has_expire()) return false;
  if (!Expired(entry, now_ms)) return true;
  DeleteExpired(key);
  return false;
}

KeyEntry* Database::FindForRead(std::string_view key, int64_t now_ms, bool touch) {
  KeyEntry* entry = Find(key, now_ms, touch);
  if (counters_ != nullptr) ++(entry ? counters_->keyspace_hits : counters_->keyspace_misses);
  if (entry == nullptr && waiters_ != nullptr && waiters_->events != nullptr) {
    waiters_->events->KeyMissed(waiters_->index, key);
  }
  return entry;
}

void Database::TouchWaiters(std::string_view key) {
  std::string name(key);
  if (auto it = waiters_->watched.find(name); it != waiters_->watched.end()) {
    // Called once the change is made: a stale key deleted is no change to its watcher.
    const bool present = Contains(name);
    for (KeyWatch& watch : it->second) {
      if (watch.stale && !present) {
        watch.stale = false;
      } else {
        *watch.dirty = true;
      }
    }
  }
  if (waiters_->blocked.count(name)) MarkReady(std::move(name));
}

void Database::WakeBlocked(std::string_view key) {
  if (waiters_ == nullptr || waiters_->blocked.empty()) return;
  std::string name(key);
  if (waiters_->blocked.count(name)) MarkReady(std::move(name));
}

void Database::MarkReady(std::string name) {
  std::vector<std::string>& ready = waiters_->ready;
  if (std::find(ready.begin(), ready.end(), name) == ready.end()) ready.push_back(std::move(name));
  *waiters_->any_ready = true;
}

void Database::TouchAllWatched() {
  if (waiters_ == nullptr) return;
  for (auto& [key, watches] : waiters_->watched) {
    if (!Contains(key)) continue;
    for (KeyWatch& watch : watches) {
      if (watch.stale) {
        watch.stale = false;
      } else {
        *watch.dirty = true;
      }
    }
  }
}

void Database::NoteElementDeadlines(std::string_view key) {
  if (element_deadline_keys_.find(key) == element_deadline_keys_.end()) {
    element_deadline_keys_.emplace(key);
  }
}

std::vector<std::string> Database::NextElementDeadlineKeys(size_t n) {
  std::vector<std::string> keys;
  auto it = element_deadline_keys_.upper_bound(element_deadline_cursor_);
  for (; keys.size() < n && keys.size() < element_deadline_keys_.size(); ++it) {
    if (it == element_deadline_keys_.end()) it = element_deadline_keys_.begin();
    keys.push_back(*it);
  }
  if (!keys.empty()) element_deadline_cursor_ = keys.back();
  return keys;
}

namespace {

bool HasElementDeadlines(const KeyEntry* entry) {
  return entry->type() != ValueType::kString && entry->object()->has_element_deadlines();
}

}  // namespace

void Database::Insert(KeyEntry* entry, std::optional<uint32_t> stamp) {
  if (HasElementDeadlines(entry)) NoteElementDeadlines(entry->key());
  expires_ += entry->has_expire() ? 1 : 0;
  NoteDeadline(entry);
  if (slots_ == nullptr) {
    table_.Insert(entry, stamp.value_or(NewStamp()));
  } else {
    slots_->Insert(entry, stamp.value_or(NewStamp()));
  }
  Touch(entry->key());  // once the key is there (TouchWaiters)
  if (waiters_ != nullptr && waiters_->events != nullptr) {
    waiters_->events->KeyAdded(waiters_->index, entry->key());
  }
}

void Database::Replace(Table::Slot slot, KeyEntry* fresh) {
  Touch(fresh->key());
  if (HasElementDeadlines(fresh)) NoteElementDeadlines(fresh->key());
  // A value replaced is a new object to Redis: stamped now under LRU, keeping the old counter
  // under LFU.
  if (access_ != nullptr && !access_->lfu) slot.set_stamp(NewStamp());
  Forget(slot.entry());
  expires_ += fresh->has_expire() ? 1 : 0;
  NoteDeadline(fresh);
  slot.Replace(fresh);
}

void Database::Put(std::string_view key, const EntryValue& value, std::optional<int64_t> expire_ms,
                   bool keep_ttl) {
  Table::Slot slot = FindSlot(key);
  if (!slot) {
    Insert(KeyEntry::Make(key, value, keep_ttl ? std::nullopt : expire_ms));
    return;
  }
  // Redis's setKey looks the key up first: storing over a key is an access of it.
  if (touching_ != nullptr && *touching_) slot.set_stamp(access_->Accessed(slot.stamp()));
  KeyEntry* old = slot.entry();
  std::optional<int64_t> deadline = expire_ms;
  if (keep_ttl) deadline = old->has_expire() ? std::optional(old->expire_ms()) : std::nullopt;
  if (KeyEntry::TryOverwrite(old, value, deadline)) {
    NoteDeadline(old);
    Touch(key);
    return;
  }
  Replace(slot, KeyEntry::Make(key, value, deadline));
  KeyEntry::Destroy(old);
}

KeyEntry* Database::ReserveString(std::string_view key, size_t length, size_t room) {
  Table::Slot slot = FindSlot(key);
  KeyEntry* grown = KeyEntry::GrowForString(slot.entry(), length, room);
  slot.Replace(grown);  // same key, header and deadline: nothing else to account
  return grown;
}

KeyEntry* Database::UnshareString(std::string_view key) {
  Table::Slot slot = FindSlot(key);
  KeyEntry* old = slot.entry();
  char scratch[kInt64TextMax];
  // WithValue builds the new block before it frees the old one, so the bytes may point into it.
  KeyEntry* fresh =
      KeyEntry::WithValue(old, EntryValue::RawString(old->string_value(scratch)), true);
  slot.Replace(fresh);  // same key and deadline: nothing else to account
  return fresh;
}

bool Database::AddNew(std::string_view key, const EntryValue& value,
                      std::optional<int64_t> expire_ms) {
  if (FindSlot(key)) return false;
  Insert(KeyEntry::Make(key, value, expire_ms));
  return true;
}

void Database::Adopt(KeyEntry* entry, std::optional<uint32_t> stamp) {
  Table::Slot slot = FindSlot(entry->key());
  if (!slot) {
    Insert(entry, stamp);
    return;
  }
  KeyEntry* old = slot.entry();
  Replace(slot, entry);
  slot.set_stamp(stamp.value_or(NewStamp()));
  KeyEntry::Destroy(old);
}

KeyEntry* Database::Take(std::string_view key, uint32_t* stamp) {
  if (stamp != nullptr) *stamp = AccessStamp(key);
  KeyEntry* entry = EraseFromTable(key);
  if (entry != nullptr) {
    Touch(key);
    Forget(entry);
  }
  return entry;
}

bool Database::Delete(std::string_view key) {
  KeyEntry* entry = Take(key);
  KeyEntry::Destroy(entry);
  return entry != nullptr;
}

void Database::SetExpire(std::string_view key, std::optional<int64_t> expire_ms) {
  Table::Slot slot = FindSlot(key);
  if (!slot) return;
  KeyEntry* old = slot.entry();
  Replace(slot, KeyEntry::WithExpire(old, expire_ms));
  KeyEntry::FreeBlock(old);
}

uint32_t Database::AccessStamp(std::string_view key) const {
  // FindSlot is non-const only because a Slot can write; reading through it changes nothing.
  Table::Slot slot = const_cast<Database*>(this)->FindSlot(key);
  return slot ? slot.stamp() : 0;
}

void Database::SetAccessStamp(std::string_view key, uint32_t stamp) {
  if (Table::Slot slot = FindSlot(key)) slot.set_stamp(stamp & AccessClock::kStampMask);
}

uint64_t Database::Scan(uint64_t cursor, const std::function<void(KeyEntry*)>& fn) const {
  return ScanStep(cursor, fn);
}

void Database::EnableSlots() {
  assert(size() == 0);
  table_.Clear([](KeyEntry*) {});  // frees its memory; it holds no entry
  slots_ = std::make_unique<SlotTables>();
  expire_cursor_ = 0;  // the cursors take the slotted encoding from now on
  eviction_hand_ = 0;
}

void Database::Clear() {
  TouchAllWatched();
  // A client blocked on a key that goes may need to know (XREADGROUP is told the key is gone).
  if (waiters_ != nullptr) {
    std::vector<std::string> gone;
    for (const auto& [key, clients] : waiters_->blocked) {
      if (Contains(key)) gone.push_back(key);
    }
    for (const std::string& key : gone) TouchWaiters(key);
  }
  table_.Clear([](KeyEntry* entry) { KeyEntry::Destroy(entry); });
  if (slots_ != nullptr) slots_->Clear([](KeyEntry* entry) { KeyEntry::Destroy(entry); });
  expires_ = 0;
  expire_cursor_ = 0;
  eviction_hand_ = 0;
  element_deadline_keys_.clear();
}

size_t Database::SweepEvictionHand(const std::function<bool(KeyEntry*)>& visit, size_t max_visits) {
  if (size() == 0) return 0;
  size_t visits = 0;
  bool stop = false;
  do {
    eviction_hand_ = ScanStep(eviction_hand_, [&](KeyEntry* entry) {
      ++visits;
      stop = visit(entry) || stop;
    });
  } while (!stop && visits < max_visits);
  return visits;
}

Database::ExpireSweep Database::ActiveExpire(int64_t now_ms, size_t max_visits) {
  if (expires_ == 0) return {};
  std::vector<std::string> doomed;
  size_t visits = 0;
  do {
    expire_cursor_ = ScanStep(expire_cursor_, [&](KeyEntry* entry) {
      ++visits;
      if (Expired(entry, now_ms)) doomed.emplace_back(entry->key());
    });
  } while (expire_cursor_ != 0 && visits < max_visits);
  for (const std::string& key : doomed) DeleteExpired(key);
  return {visits, doomed.size()};
}

}  // namespace goblin
