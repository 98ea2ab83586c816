// Active expiry of hash fields (HEXPIRE and its family): the tick goes round the keys each
// database noted as holding fields with deadlines (Database::NoteElementDeadlines) and deletes
// the fields whose deadline has passed, as Redis 7.4 does: an HDEL effect per field, one
// hexpired event per key and pass, and the key deleted (with a del event) when its last field
// goes. A hash is walked only once its earliest deadline has passed; a walk (a small hash at
// once, a large one in steps across ticks) deletes every expired field and learns the next
// earliest deadline, so fields with distant deadlines cost nothing. Keys that are gone,
// changed type or have no deadlines left are forgotten.
#include <string>

#include "core/hash_object.h"
#include "server/cycle_clock.h"
#include "server/keyspace_notify.h"
#include "server/server.h"

namespace goblin {

namespace {

constexpr size_t kKeysPerSlice = 16;
constexpr size_t kEntriesPerStep = 256;

}  // namespace

void Server::ExpireHashFields(int64_t now_ms, int64_t until_us) {
  for (size_t index = 0; index < dbs_.size(); ++index) {
    Database& db = dbs_[index];
    const int db_index = static_cast<int>(index);
    size_t visited = 0;
    while (db.element_deadline_keys() > 0 && visited < db.element_deadline_keys() &&
           SteadyMicros() < until_us) {
      for (const std::string& key : db.NextElementDeadlineKeys(kKeysPerSlice)) {
        ++visited;
        KeyEntry* entry = db.Peek(key);
        if (entry == nullptr || entry->type() != ValueType::kHash ||
            !entry->object()->has_element_deadlines()) {
          db.ForgetElementDeadlines(key);
          continue;
        }
        PackedHash& hash = static_cast<HashObject*>(entry->object())->hash();
        if (hash.earliest_deadline_bound() >= now_ms) continue;
        // Round the hash's fields until the round ends (or the time does: the next tick goes
        // on from the hash's cursor).
        size_t deleted = 0;
        while (true) {
          const PackedHash::ExpirySweep sweep =
              hash.DeleteExpired(now_ms, kEntriesPerStep, [&](std::string_view field) {
                effects.Add(db_index, {"HDEL", key, field});
              });
          deleted += sweep.deleted;
          if (sweep.round_done || SteadyMicros() >= until_us) break;
        }
        if (deleted == 0) continue;
        dirty += deleted;
        NotifyKeyspaceEvent(kNotifyHash, "hexpired", key, db_index);
        if (hash.empty()) {
          db.Delete(key);
          db.ForgetElementDeadlines(key);
          NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db_index);
        } else {
          db.Touch(key);
        }
      }
    }
  }
}

}  // namespace goblin
