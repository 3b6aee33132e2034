// Co<T>: the coroutine type every simulated code path is written in.
//
// A path that may touch shared state is a coroutine; it calls other paths with `co_await`
// (symmetric transfer, so deep call chains cost no native stack) and waits for the driver with
// `co_await exec.lock(...)` and friends (models/exec.h). Exceptions travel up to the root, which
// the driver rethrows.
#pragma once
#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

#include "models/frame_pool.h"

namespace slubsim {

template <class T>
class Co;

namespace detail {

struct PromiseBase {
  // Frames come from the pool (models/frame_pool.h), not malloc.
  static void* operator new(std::size_t n) { return frame_pool().allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_pool().deallocate(p, n); }

  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;
  bool run_by_awaiter = false;  // being run from the awaiting coroutine's await_suspend

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct Final {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto& p = h.promise();
      // Finished while its awaiter runs it: return there (the awaiter then goes on without
      // suspending). Finished later, resumed by the driver: hand over to the awaiter.
      return p.run_by_awaiter ? std::noop_coroutine() : p.continuation;
    }
    void await_resume() noexcept {}
  };
  Final final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Co<T> get_return_object();
  template <class U>
  void return_value(U&& v) { value.emplace(std::forward<U>(v)); }
};

template <>
struct Promise<void> : PromiseBase {
  Co<void> get_return_object();
  void return_void() {}
};

}  // namespace detail

template <class T = void>
class [[nodiscard]] Co {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  explicit Co(Handle h) : h_(h) {}
  Co(Co&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Co& operator=(Co&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Co(const Co&) = delete;
  Co& operator=(const Co&) = delete;
  ~Co() {
    if (h_) h_.destroy();
  }

  // Awaiting a Co runs it as a sub-call of the awaiting coroutine. It runs right here, and if it
  // finishes without waiting for the driver the awaiter simply goes on: a loop of sub-calls does
  // not deepen the native stack even where the compiler cannot make symmetric transfer a tail
  // call (sanitizer builds). Only a sub-call that really waits suspends the awaiter.
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> caller) {
    auto& p = h_.promise();
    p.continuation = caller;
    p.run_by_awaiter = true;
    h_.resume();
    if (h_.done()) return false;
    p.run_by_awaiter = false;
    return true;
  }
  T await_resume() {
    auto& p = h_.promise();
    if (p.error) std::rethrow_exception(p.error);
    if constexpr (!std::is_void_v<T>) return std::move(*p.value);
  }

  // For drivers: the root of a task.
  Handle handle() const noexcept { return h_; }
  bool done() const noexcept { return !h_ || h_.done(); }
  void rethrow_if_failed() const {
    if (h_ && h_.done() && h_.promise().error) std::rethrow_exception(h_.promise().error);
  }

 private:
  Handle h_;
};

namespace detail {
template <class T>
Co<T> Promise<T>::get_return_object() {
  return Co<T>(Co<T>::Handle::from_promise(*this));
}
inline Co<void> Promise<void>::get_return_object() {
  return Co<void>(Co<void>::Handle::from_promise(*this));
}
}  // namespace detail

}  // namespace slubsim
