// Coroutine frames from size-class free lists instead of malloc.
//
// Every simulated code path is a coroutine (models/co.h), and a call allocates its frame: tens of
// millions per simulation, where malloc and free cost more than the paths themselves. Frames are
// carved from large chunks into classes of kFrameGranule bytes and kept on per-thread free lists
// for reuse; chunks live until the process exits (held by one global list, so they stay
// reachable). A simulation runs on one host thread, so its frames are taken and returned there;
// a frame freed on another thread simply joins that thread's list. Nothing here touches the
// model: results are the same with or without the pool.
#pragma once
#include <cstddef>
#include <new>

namespace slubsim::detail {

constexpr std::size_t kFrameGranule = 64;
constexpr std::size_t kFrameClasses = 64;  // pooled up to 4 KiB; larger frames use operator new
constexpr std::size_t kFrameChunk = std::size_t{1} << 20;
// Under AddressSanitizer every frame is its own allocation, so a use after a frame's end is caught
// (GCC says so with __SANITIZE_ADDRESS__, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define SLUBSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUBSIM_ASAN 1
#endif
#endif
#if defined(SLUBSIM_ASAN)
constexpr bool kFramePoolOff = true;
#else
constexpr bool kFramePoolOff = false;
#endif

// A fresh chunk of kFrameChunk bytes, kept for the process's life.
void* frame_chunk();

struct FramePool {
  struct Free {
    Free* next;
  };
  Free* lists[kFrameClasses] = {};
  char* bump = nullptr;
  std::size_t left = 0;

  static std::size_t size_class(std::size_t n) noexcept { return (n + kFrameGranule - 1) / kFrameGranule; }

  void* allocate(std::size_t n) {
    const std::size_t c = size_class(n);
    if (kFramePoolOff || c >= kFrameClasses) return ::operator new(n);
    if (Free* f = lists[c]) {
      lists[c] = f->next;
      return f;
    }
    const std::size_t bytes = c * kFrameGranule;
    if (left < bytes) {
      bump = static_cast<char*>(frame_chunk());
      left = kFrameChunk;
    }
    void* p = bump;
    bump += bytes;
    left -= bytes;
    return p;
  }
  void deallocate(void* p, std::size_t n) noexcept {
    const std::size_t c = size_class(n);
    if (kFramePoolOff || c >= kFrameClasses) {
      ::operator delete(p);
      return;
    }
    auto* f = static_cast<Free*>(p);
    f->next = lists[c];
    lists[c] = f;
  }
};

inline FramePool& frame_pool() noexcept {
  thread_local FramePool pool;
  return pool;
}

}  // namespace slubsim::detail
