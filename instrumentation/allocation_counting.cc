// Replacement global operator new / delete that count bytes per thread; see
// allocation_counting.h. Every block carries a header with its requested size and its offset
// from the pointer malloc returned, so deletes are counted exactly, sized or not.
#include "instrumentation/allocation_counting.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "instrumentation/internal/allocation_hooks.h"

namespace roastcoffea {
namespace {

struct Counters {
  int64_t allocated = 0;
  int64_t freed = 0;
  int64_t live = 0;
  int64_t peak_live = 0;
};
// Trivial type, constant-initialised: usable from any allocation, even during thread start-up
// and shutdown, with no TLS init guard.
thread_local Counters counters;

struct Header {
  size_t size;    // bytes requested
  size_t offset;  // from the block malloc returned to the pointer handed out
};
static_assert(sizeof(Header) == 16, "the header must keep 16-byte alignment");

constexpr size_t kDefaultAlignment = __STDCPP_DEFAULT_NEW_ALIGNMENT__;

void Count(size_t size) {
  Counters& c = counters;
  c.allocated += static_cast<int64_t>(size);
  c.live += static_cast<int64_t>(size);
  if (c.live > c.peak_live) c.peak_live = c.live;
}

// Null on failure (after the new-handler loop gives up).
void* TryAllocate(size_t size, size_t alignment) noexcept {
  if (alignment < kDefaultAlignment) alignment = kDefaultAlignment;
  // Room for the header before an aligned user pointer.
  const size_t slack = alignment > sizeof(Header) ? alignment : sizeof(Header);
  if (size > SIZE_MAX - slack - alignment) return nullptr;
  const size_t total = size + slack + (alignment > kDefaultAlignment ? alignment : 0);
  for (;;) {
    void* raw = std::malloc(total);
    if (raw != nullptr) {
      const uintptr_t base = reinterpret_cast<uintptr_t>(raw) + sizeof(Header);
      const uintptr_t user = (base + alignment - 1) & ~(uintptr_t{alignment} - 1);
      Header* header = reinterpret_cast<Header*>(user) - 1;
      header->size = size;
      header->offset = user - reinterpret_cast<uintptr_t>(raw);
      Count(size);
      return reinterpret_cast<void*>(user);
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) return nullptr;
    try {
      handler();
    } catch (...) {
      return nullptr;
    }
  }
}

void* Allocate(size_t size, size_t alignment) {
  void* p = TryAllocate(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void Release(void* p) noexcept {
  if (p == nullptr) return;
  const Header* header = static_cast<const Header*>(p) - 1;
  Counters& c = counters;
  c.freed += static_cast<int64_t>(header->size);
  c.live -= static_cast<int64_t>(header->size);
  std::free(static_cast<char*>(p) - header->offset);
}

instrumentation_internal::ThreadAllocationCounters ReadCounters() {
  const Counters& c = counters;
  return {c.allocated, c.live, c.peak_live};
}

int64_t ExchangePeak(int64_t peak_live_bytes) {
  const int64_t previous = counters.peak_live;
  counters.peak_live = peak_live_bytes;
  return previous;
}

constexpr instrumentation_internal::AllocationHooks kHooks = {&ReadCounters, &ExchangePeak};

// Registers the counters with chunk tracking when the binary starts, but only if these
// operators are the ones in use: a sanitizer runtime or another allocator loaded before this
// code (e.g. when it sits in a shared library) may own operator new, and then chunk records
// must say "not counted" rather than 0.
[[maybe_unused]] const bool registered = [] {
  const int64_t before = counters.allocated;
  void* probe = ::operator new(1);
  const bool ours = counters.allocated == before + 1;
  ::operator delete(probe);
  if (ours) instrumentation_internal::g_allocation_hooks.store(&kHooks, std::memory_order_release);
  return ours;
}();

}  // namespace

AllocationCounters ThreadAllocationCounters() {
  const Counters& c = counters;
  return {c.allocated, c.freed, c.live};
}

}  // namespace roastcoffea

// The replaceable global allocation functions ([new.delete]), all routed to the two above.
void* operator new(std::size_t size) { return roastcoffea::Allocate(size, 0); }
void* operator new[](std::size_t size) { return roastcoffea::Allocate(size, 0); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return roastcoffea::TryAllocate(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return roastcoffea::TryAllocate(size, 0);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return roastcoffea::Allocate(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return roastcoffea::Allocate(size, static_cast<std::size_t>(alignment));
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return roastcoffea::TryAllocate(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return roastcoffea::TryAllocate(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept { roastcoffea::Release(p); }
void operator delete[](void* p) noexcept { roastcoffea::Release(p); }
void operator delete(void* p, std::size_t) noexcept { roastcoffea::Release(p); }
void operator delete[](void* p, std::size_t) noexcept { roastcoffea::Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { roastcoffea::Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { roastcoffea::Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { roastcoffea::Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { roastcoffea::Release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { roastcoffea::Release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { roastcoffea::Release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  roastcoffea::Release(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  roastcoffea::Release(p);
}
