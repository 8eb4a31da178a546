// The threads parallel_for runs its ranges on: started once per process
// (on first use) and kept, so a timed CPU invocation does not pay for
// thread creation at every parallel loop (five per cpu-reference pass),
// and its median does not move with what else the process did before.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kibench {

class WorkerPool {
public:
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // The process's pool: one thread fewer than the hardware has (the caller
  // is the other).
  static WorkerPool &shared();

  // Runs task(0) … task(count − 1), task(0) on the calling thread and the
  // others on the pool's threads (the caller takes some too), and returns
  // when all have returned. `task` must not throw. Returns false, running
  // nothing, when the pool is already running another caller's tasks (a
  // nested or concurrent loop): that caller then uses threads of its own.
  bool try_run(std::int64_t count, const std::function<void(std::int64_t)> &task);

  [[nodiscard]] unsigned threads() const { return static_cast<unsigned>(threads_.size()); }

private:
  void serve();
  // Takes and runs the current call's tasks until none is left; `lock` is
  // held on entry and on return.
  void drain(std::unique_lock<std::mutex> &lock);

  std::mutex busy_; // held by the one caller the pool serves
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  const std::function<void(std::int64_t)> *task_ = nullptr;
  std::int64_t count_ = 0, next_ = 0, unfinished_ = 0;
  bool stopping_ = false;
  // Set while a call has tasks left: a thread spins on it briefly before it
  // sleeps, because a pass's next loop follows within microseconds and
  // waking a sleeping thread (on a virtual machine, a halted core) can
  // cost as much as the loop.
  std::atomic<bool> has_work_{false};
  std::vector<std::thread> threads_;
};

} // namespace kibench
