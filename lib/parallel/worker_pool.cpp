#include "lib/parallel/worker_pool.hpp"

#include <algorithm>
#include <chrono>

namespace kibench {

WorkerPool::WorkerPool(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) threads_.emplace_back([this] { serve(); });
}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread &t : threads_) t.join();
}

WorkerPool &WorkerPool::shared() {
  // Never destroyed: a thread of the process may still run a loop while
  // static objects are torn down at exit.
  static WorkerPool *const pool = new WorkerPool(std::max(1u, std::thread::hardware_concurrency()) - 1);
  return *pool;
}

void WorkerPool::drain(std::unique_lock<std::mutex> &lock) {
  while (next_ < count_) {
    const std::int64_t k = next_++;
    const auto *task = task_;
    lock.unlock();
    (*task)(k);
    lock.lock();
    if (--unfinished_ == 0) work_done_.notify_all();
  }
}

namespace {

// How long a pool thread looks for the next call before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

} // namespace

void WorkerPool::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!stopping_ && next_ >= count_) {
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kSpin;
      for (int k = 0; !has_work_.load(std::memory_order_acquire); ++k) {
        relax();
        if (k % 64 == 63 && std::chrono::steady_clock::now() > until) break;
      }
      lock.lock();
    }
    work_ready_.wait(lock, [this] { return stopping_ || next_ < count_; });
    if (stopping_) return;
    drain(lock);
  }
}

bool WorkerPool::try_run(std::int64_t count, const std::function<void(std::int64_t)> &task) {
  if (count <= 0) return true;
  const std::unique_lock busy(busy_, std::try_to_lock);
  if (!busy.owns_lock()) return false;
  std::unique_lock lock(mutex_);
  task_ = &task;
  count_ = count;
  next_ = 1; // task 0 is the caller's
  unfinished_ = count;
  has_work_.store(true, std::memory_order_release);
  lock.unlock();
  if (count > 1) work_ready_.notify_all();
  task(0);
  lock.lock();
  if (--unfinished_ == 0) work_done_.notify_all();
  drain(lock);
  work_done_.wait(lock, [this] { return unfinished_ == 0; });
  has_work_.store(false, std::memory_order_release);
  task_ = nullptr;
  count_ = next_ = 0;
  return true;
}

} // namespace kibench
