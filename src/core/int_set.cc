#include "core/int_set.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/alloc_size.h"

namespace goblin {
namespace {

size_t WidthFor(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

int64_t Load(const uint8_t* p, size_t width) {
  switch (width) {
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

}  // namespace

IntSet::~IntSet() { std::free(block_); }

IntSet& IntSet::operator=(IntSet&& other) noexcept {
  if (this != &other) {
    std::free(block_);
    block_ = std::exchange(other.block_, nullptr);
  }
  return *this;
}

IntSet IntSet::Clone() const {
  IntSet copy;
  if (block_ != nullptr) {
    const size_t bytes = kHeaderBytes + size() * width();
    copy.block_ = static_cast<uint8_t*>(CheckedMalloc(bytes));
    std::memcpy(copy.block_, block_, bytes);
  }
  return copy;
}

int64_t IntSet::At(size_t i) const {
  return Load(block_ + kHeaderBytes + i * header()->width, header()->width);
}

void IntSet::Store(size_t i, int64_t v) {
  const size_t w = header()->width;
  uint8_t* p = block_ + kHeaderBytes + i * w;
  if (w == 2) {
    const int16_t x = static_cast<int16_t>(v);
    std::memcpy(p, &x, 2);
  } else if (w == 4) {
    const int32_t x = static_cast<int32_t>(v);
    std::memcpy(p, &x, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

size_t IntSet::LowerBound(int64_t v) const {
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (At(mid) < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

bool IntSet::Contains(int64_t v) const {
  if (block_ == nullptr || WidthFor(v) > header()->width) return false;
  const size_t i = LowerBound(v);
  return i < size() && At(i) == v;
}

void IntSet::Resize(size_t count, size_t width) {
  if (count == 0) {
    std::free(block_);
    block_ = nullptr;
    return;
  }
  const size_t bytes = kHeaderBytes + count * width;
  if (block_ != nullptr && bytes <= AllocatedSize(block_) &&
      SizeClassAtLeast(bytes) == AllocatedSize(block_)) {
    return;
  }
  block_ = static_cast<uint8_t*>(CheckedRealloc(block_, bytes));
}

bool IntSet::Insert(int64_t v) {
  const size_t count = size();
  const size_t old_width = width();
  const size_t new_width = std::max(old_width, WidthFor(v));
  if (new_width == old_width && Contains(v)) return false;
  if (new_width != old_width && block_ != nullptr) {
    // Widen in place from the back, so no value is overwritten before it is read.
    Resize(count + 1, new_width);
    header()->width = static_cast<uint32_t>(new_width);
    for (size_t i = count; i-- > 0;) {
      const int64_t x = Load(block_ + kHeaderBytes + i * old_width, old_width);
      Store(i, x);
    }
    // A value that needs a wider encoding is below or above all others.
    if (v < 0) {
      std::memmove(block_ + kHeaderBytes + new_width, block_ + kHeaderBytes, count * new_width);
      Store(0, v);
    } else {
      Store(count, v);
    }
    header()->count = static_cast<uint32_t>(count + 1);
    return true;
  }
  const bool fresh = block_ == nullptr;
  const size_t i = fresh ? 0 : LowerBound(v);
  Resize(count + 1, new_width);
  if (fresh) *header() = Header{0, static_cast<uint32_t>(new_width)};
  uint8_t* p = block_ + kHeaderBytes + i * new_width;
  std::memmove(p + new_width, p, (count - i) * new_width);
  Store(i, v);
  header()->count = static_cast<uint32_t>(count + 1);
  return true;
}

bool IntSet::Erase(int64_t v) {
  if (!Contains(v)) return false;
  const size_t count = size();
  const size_t w = width();
  const size_t i = LowerBound(v);
  uint8_t* p = block_ + kHeaderBytes + i * w;
  std::memmove(p, p + w, (count - i - 1) * w);
  header()->count = static_cast<uint32_t>(count - 1);
  Resize(count - 1, w);
  return true;
}

size_t IntSet::MemoryUsage() const { return AllocatedSize(block_); }

size_t IntSet::Shrink() {
  if (block_ == nullptr) return 0;
  const size_t before = MemoryUsage();
  block_ = static_cast<uint8_t*>(CheckedRealloc(block_, kHeaderBytes + size() * width()));
  const size_t after = MemoryUsage();
  return before > after ? before - after : 0;
}

std::string_view IntSet::Validate() const {
  if (block_ == nullptr) return "";
  if (header()->count == 0) return "empty set holds a block";
  const size_t w = header()->width;
  if (w != 2 && w != 4 && w != 8) return "bad width";
  if (AllocatedSize(block_) < kHeaderBytes + size() * w) return "block too small";
  for (size_t i = 1; i < size(); ++i) {
    if (At(i - 1) >= At(i)) return "values not strictly ascending";
  }
  return "";
}

}  // namespace goblin
