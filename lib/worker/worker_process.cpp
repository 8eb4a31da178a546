#include "lib/worker/worker_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kibench::worker {

namespace {

// A readable name and what it usually means, for the signals a crashing
// or killed lane ends with.
std::string signal_name(int signal) {
  switch (signal) {
  case SIGSEGV:
    return "SIGSEGV, a segmentation fault";
  case SIGBUS:
    return "SIGBUS, a bus error";
  case SIGABRT:
    return "SIGABRT, an abort";
  case SIGFPE:
    return "SIGFPE, an arithmetic fault";
  case SIGILL:
    return "SIGILL, an illegal instruction";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGPIPE:
    return "SIGPIPE";
  default: {
    const char *name = ::sigabbrev_np(signal);
    return name != nullptr ? fmt::format("SIG{}", name) : "an unknown signal";
  }
  }
}

FileDescriptor open_dev_null() {
  FileDescriptor fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw std::runtime_error(fmt::format("/dev/null: {}", std::strerror(errno)));
  return fd;
}

struct SocketPair {
  FileDescriptor ours, theirs;
};

SocketPair make_socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error(fmt::format("socketpair: {}", std::strerror(errno)));
  SocketPair pair{FileDescriptor(fds[0]), FileDescriptor(fds[1])};
  // dup2 onto the same number would keep close-on-exec set: move it off.
  if (pair.theirs.get() == kWorkerSocketFd) {
    const int moved = ::fcntl(pair.theirs.get(), F_DUPFD_CLOEXEC, kWorkerSocketFd + 1);
    if (moved < 0) throw std::runtime_error(fmt::format("fcntl: {}", std::strerror(errno)));
    pair.theirs = FileDescriptor(moved);
  }
  return pair;
}

class SpawnActions {
public:
  SpawnActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions &) = delete;
  SpawnActions &operator=(const SpawnActions &) = delete;
  posix_spawn_file_actions_t *get() { return &actions_; }

private:
  posix_spawn_file_actions_t actions_{};
};

} // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), signal_name(WTERMSIG(status)));
  return fmt::format("ended with wait status {}", status);
}

WorkerProcess::WorkerProcess(const std::vector<std::string> &argv) : channel_(FileDescriptor()) {
  if (argv.empty()) throw std::logic_error("WorkerProcess: no program");
  auto [ours, theirs] = make_socket_pair();
  const FileDescriptor dev_null = open_dev_null();
  SpawnActions actions;
  ::posix_spawn_file_actions_adddup2(actions.get(), dev_null.get(), STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(actions.get(), theirs.get(), kWorkerSocketFd);
  std::vector<char *> args;
  args.reserve(argv.size() + 1);
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, argv.front().c_str(), actions.get(), nullptr, args.data(), environ);
  if (error != 0)
    throw std::runtime_error(
        fmt::format("cannot start the worker process {}: {}", argv.front(), std::strerror(error)));
  pid_ = pid;
  channel_ = Channel(std::move(ours));
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0 && !reaped_) kill();
}

void WorkerProcess::kill() {
  if (pid_ <= 0 || reaped_) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

std::string WorkerProcess::wait_for_end(double grace_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (!reaped_) {
    const pid_t done = ::waitpid(pid_, &status_, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      break;
    }
    if (done < 0 && errno != EINTR) return fmt::format("could not be waited for: {}", std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      kill();
      return fmt::format("closed its socket and did not end within {:g} s (killed)", grace_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return describe_wait_status(status_);
}

} // namespace kibench::worker
