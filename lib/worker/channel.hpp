// One end of the socket between kibench and a worker process
// (lib/worker/remote_implementation.hpp): messages are JSON objects, each
// sent as a 4-byte little-endian length and its canonical text; a message
// may carry one file descriptor (SCM_RIGHTS), which is how a worker hands
// over the shared memory its outputs are copied into.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "lib/json/value.hpp"

namespace kibench::worker {

// The other end is gone (the worker exited or was killed), or sent
// something that is not a message.
class ChannelClosed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// No message within the deadline.
class ChannelTimeout : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// An owned file descriptor.
class FileDescriptor {
public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  FileDescriptor(FileDescriptor &&other) noexcept : fd_(other.release()) {}
  FileDescriptor &operator=(FileDescriptor &&other) noexcept;
  ~FileDescriptor();
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_ = -1;
};

struct Message {
  json::Value body;
  FileDescriptor attached; // invalid when none came with it
};

class Channel {
public:
  explicit Channel(FileDescriptor socket) : socket_(std::move(socket)) {}

  // Throws ChannelClosed when the other end is gone (never SIGPIPE).
  void send(const json::Value &body, int attach_fd = -1);
  // Waits at most `timeout` (nullopt: for ever). Throws ChannelTimeout or
  // ChannelClosed.
  Message receive(std::optional<std::chrono::duration<double>> timeout = std::nullopt);

  [[nodiscard]] int fd() const { return socket_.get(); }

private:
  FileDescriptor socket_;
};

// The largest message either side accepts: requests and replies are small
// (the outputs travel in shared memory); a workload's manifest is the
// largest of them.
inline constexpr std::size_t kMaxMessageBytes = 16u << 20;

} // namespace kibench::worker
