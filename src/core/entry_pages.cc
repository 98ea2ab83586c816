#include "core/entry_pages.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

#include "core/alloc_size.h"

namespace goblin {
namespace {
constexpr size_t kFirstPageBytes = 64;
}  // namespace

EntryPages::~EntryPages() {
  for (Chain& chain : chains_) {
    for (Page& page : chain.pages) std::free(page.data);
  }
}

uint32_t EntryPages::NewPage(uint32_t chain_number, size_t bytes) {
  Chain& chain = chains_[chain_number];
  uint32_t index;
  if (!chain.free_pages.empty()) {
    index = chain.free_pages.back();
    chain.free_pages.pop_back();
  } else {
    if (chain.pages.size() >= kMaxPages) std::abort();  // 256 MB of entries in one chain
    index = static_cast<uint32_t>(chain.pages.size());
    chain.pages.emplace_back();
  }
  Page& page = chain.pages[index];
  page.data = static_cast<uint8_t*>(CheckedMalloc(bytes));
  page.capacity = static_cast<uint32_t>(std::min<size_t>(AllocatedSize(page.data), UINT32_MAX));
  page.used = 0;
  page.dead = 0;
  page_bytes_ += AllocatedSize(page.data);
  ++page_count_;
  return index;
}

void EntryPages::FreePage(uint32_t chain_number, uint32_t index) {
  Chain& chain = chains_[chain_number];
  Page& page = chain.pages[index];
  page_bytes_ -= AllocatedSize(page.data);
  --page_count_;
  dead_bytes_ -= page.dead;
  std::free(page.data);
  page = Page();
  if (chain.append == index) chain.append = kNoPage;
  // Trailing free pages leave the table; others wait on the free list.
  if (index + 1 == chain.pages.size()) {
    chain.pages.pop_back();
    while (!chain.pages.empty() && chain.pages.back().data == nullptr) {
      const uint32_t last = static_cast<uint32_t>(chain.pages.size() - 1);
      chain.free_pages.erase(std::find(chain.free_pages.begin(), chain.free_pages.end(), last));
      chain.pages.pop_back();
    }
  } else {
    chain.free_pages.push_back(index);
  }
}

bool EntryPages::ResizeLast(EntryRef ref, size_t old_bytes, size_t new_bytes) {
  Chain& chain = chains_[ChainOfRef(ref)];
  const uint32_t offset = OffsetOfRef(ref);
  const uint32_t index = offset >> kPageBits;
  if (index != chain.append) return false;
  Page& page = chain.pages[index];
  const size_t at = offset & (kPageBytes - 1);
  if (at + old_bytes != page.used || at + new_bytes > page.capacity) return false;
  if (size_t{page.dead} * 3 > at + new_bytes) return false;  // invariant 2 holds after
  page.used = static_cast<uint32_t>(at + new_bytes);
  live_bytes_ = live_bytes_ - old_bytes + new_bytes;
  return true;
}

uint8_t* EntryPages::Append(uint32_t chain_number, size_t bytes, EntryRef* ref) {
  Chain& chain = chains_[chain_number];
  live_bytes_ += bytes;
  if (bytes > kOwnPageBytes) {
    const uint32_t index = NewPage(chain_number, bytes);
    chain.pages[index].used = static_cast<uint32_t>(bytes);
    *ref = MakeEntryRef(chain_number, index << kPageBits);
    return chain.pages[index].data;
  }
  if (chain.append != kNoPage) {
    Page& page = chain.pages[chain.append];
    if (page.used + bytes > page.capacity) {
      if (page.capacity < kPageBytes && page.used + bytes <= kPageBytes) {
        // The first page of a chain grows by half until it reaches the full page size.
        const size_t want = std::max<size_t>(page.used + bytes, page.capacity + page.capacity / 2);
        const size_t size = std::min<size_t>(SizeClassAtLeast(want), kPageBytes);
        page_bytes_ -= AllocatedSize(page.data);
        page.data = static_cast<uint8_t*>(CheckedRealloc(page.data, size));
        page_bytes_ += AllocatedSize(page.data);
        page.capacity =
            static_cast<uint32_t>(std::min<size_t>(AllocatedSize(page.data), kPageBytes));
      } else {
        chain.append = kNoPage;
      }
    }
  }
  if (chain.append == kNoPage) {
    const bool first = chain.pages.size() == chain.free_pages.size();
    chain.append = NewPage(chain_number,
                           first ? SizeClassAtLeast(std::max(bytes, kFirstPageBytes)) : kPageBytes);
    Page& page = chain.pages[chain.append];
    page.capacity = std::min(page.capacity, kPageBytes);
  }
  Page& page = chain.pages[chain.append];
  const uint32_t offset = page.used;
  page.used += static_cast<uint32_t>(bytes);
  *ref = MakeEntryRef(chain_number, (chain.append << kPageBits) | offset);
  return page.data + offset;
}

void EntryPages::Kill(EntryRef ref, EntryRelocator* relocator) {
  const uint32_t chain_number = ChainOfRef(ref);
  const uint32_t index = OffsetOfRef(ref) >> kPageBits;
  Page& page = chains_[chain_number].pages[index];
  uint8_t* p = page.data + (OffsetOfRef(ref) & (kPageBytes - 1));
  const size_t n = EntrySize(p);
  if (n == 1) {
    *p = kDeadByte;
  } else {
    *p = kDeadRun;
    PutVarint(p + 1, n);
  }
  page.dead += static_cast<uint32_t>(n);
  dead_bytes_ += n;
  live_bytes_ -= n;
  if (page.dead == page.used) {
    FreePage(chain_number, index);
  } else if (size_t{page.dead} * 3 > page.used) {
    Compact(chain_number, index, relocator);
  }
}

void EntryPages::Compact(uint32_t chain_number, uint32_t index, EntryRelocator* relocator) {
  Chain& chain = chains_[chain_number];
  Page& page = chain.pages[index];
  const uint32_t base = index << kPageBits;
  uint32_t write = 0;
  for (uint32_t read = 0; read < page.used;) {
    uint8_t* p = page.data + read;
    const uint32_t n = static_cast<uint32_t>(RunSize(p));
    if (*p != kDeadRun && *p != kDeadByte) {
      if (write != read) {
        std::memmove(page.data + write, p, n);
        relocator->Relocated(MakeEntryRef(chain_number, base | read),
                             MakeEntryRef(chain_number, base | write), page.data + write);
      }
      write += n;
    }
    read += n;
  }
  dead_bytes_ -= page.dead;
  page.dead = 0;
  page.used = write;
  // Give the freed room back, except on the append page, which will fill it.
  if (index != chain.append && SizeClassAtLeast(write) < page.capacity) {
    page_bytes_ -= AllocatedSize(page.data);
    page.data = static_cast<uint8_t*>(CheckedRealloc(page.data, write));
    page_bytes_ += AllocatedSize(page.data);
    page.capacity = static_cast<uint32_t>(std::min<size_t>(AllocatedSize(page.data), kPageBytes));
  }
}

size_t EntryPages::MemoryUsage() const {
  size_t bytes = page_bytes_;
  for (const Chain& chain : chains_) {
    bytes += chain.pages.capacity() * sizeof(Page) + chain.free_pages.capacity() * sizeof(uint32_t);
  }
  return bytes;
}

std::string EntryPages::Validate() const {
  size_t live = 0, dead = 0, pages = 0, bytes = 0;
  for (uint32_t c = 0; c < kChainCount; ++c) {
    const Chain& chain = chains_[c];
    for (uint32_t i = 0; i < chain.pages.size(); ++i) {
      const Page& page = chain.pages[i];
      const bool is_free =
          std::find(chain.free_pages.begin(), chain.free_pages.end(), i) != chain.free_pages.end();
      if (page.data == nullptr) {
        if (!is_free) return "null page not on the free list";
        continue;
      }
      if (is_free) return "live page on the free list";
      ++pages;
      bytes += AllocatedSize(page.data);
      if (page.used > page.capacity) return "page used beyond capacity";
      if (page.capacity > AllocatedSize(page.data)) return "page capacity beyond its block";
      uint32_t page_dead = 0, entries = 0;
      for (uint32_t off = 0; off < page.used;) {
        const uint8_t* p = page.data + off;
        const size_t n = RunSize(p);
        if (n == 0 || off + n > page.used) return "entry runs past the page";
        if (*p == kDeadRun || *p == kDeadByte) {
          page_dead += static_cast<uint32_t>(n);
        } else {
          ++entries;
          live += n;
        }
        off += static_cast<uint32_t>(n);
      }
      if (page_dead != page.dead) return "page dead bytes miscounted";
      if (size_t{page.dead} * 3 > page.used) return "page more than a third dead";
      if (entries == 0) return "page without live entries";
      if (page.used > kOwnPageBytes && page.capacity > kPageBytes) {
        if (entries != 1 || page.dead != 0) return "own page holds more than one entry";
      } else if (page.capacity > kPageBytes) {
        return "shared page above the page size";
      }
      dead += page_dead;
    }
    if (chain.append != kNoPage &&
        (chain.append >= chain.pages.size() || chain.pages[chain.append].data == nullptr)) {
      return "append page missing";
    }
  }
  if (live != live_bytes_) return "live bytes miscounted";
  if (dead != dead_bytes_) return "dead bytes miscounted";
  if (pages != page_count_) return "page count wrong";
  if (bytes != page_bytes_) return "page bytes miscounted";
  return "";
}

}  // namespace goblin
