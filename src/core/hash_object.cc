#include "core/hash_object.h"

#include <malloc.h>

namespace goblin {

size_t HashObject::MemoryUsage() const {
  // PackedHash::MemoryUsage counts sizeof(PackedHash); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<HashObject*>(this)) - sizeof(PackedHash) +
         hash_.MemoryUsage();
}

}  // namespace goblin
