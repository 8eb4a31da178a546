// A worker process: a program of kibench's (the `kibench worker`
// subcommand, or the Python package's) started with a socket on a known
// descriptor, and what became of it when it ended.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "lib/worker/channel.hpp"

namespace kibench::worker {

// The descriptor the worker finds its end of the socket on.
inline constexpr int kWorkerSocketFd = 3;

class WorkerProcess {
public:
  // Starts argv[0] (a path) with argv, this process's environment and
  // working directory, standard input from /dev/null, standard output and
  // error shared, and its end of the socket on kWorkerSocketFd. Throws
  // std::runtime_error naming the program when it cannot be started.
  explicit WorkerProcess(const std::vector<std::string> &argv);
  WorkerProcess(const WorkerProcess &) = delete;
  WorkerProcess &operator=(const WorkerProcess &) = delete;
  // Kills a worker still running and reaps it.
  ~WorkerProcess();

  [[nodiscard]] Channel &channel() { return channel_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

  // After the socket closed: waits for the worker to end (at most
  // `grace_s`, then kills it) and says how it ended: "exited with code 0",
  // "was killed by signal 11 (SIGSEGV, a segmentation fault)".
  std::string wait_for_end(double grace_s = 5.0);
  // Kills it now (SIGKILL) and reaps it.
  void kill();

private:
  pid_t pid_ = -1;
  Channel channel_;
  bool reaped_ = false;
  int status_ = 0;
};

// How a process with wait status `status` ended, as above.
std::string describe_wait_status(int status);

} // namespace kibench::worker
