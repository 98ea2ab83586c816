#include "core/set_object.h"

#include <malloc.h>

namespace goblin {

size_t SetObject::MemoryUsage() const {
  // PackedSet::MemoryUsage counts sizeof(PackedSet); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<SetObject*>(this)) - sizeof(PackedSet) + set_.MemoryUsage();
}

}  // namespace goblin
