#include "lib/worker/channel.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"

namespace kibench::worker {

FileDescriptor &FileDescriptor::operator=(FileDescriptor &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

void send_all(int fd, const char *data, std::size_t size, int attach_fd) {
  bool attached = attach_fd < 0;
  while (size > 0) {
    iovec io{const_cast<char *>(data), size};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (!attached) {
      header.msg_control = control;
      header.msg_controllen = sizeof(control);
      cmsghdr *c = CMSG_FIRSTHDR(&header);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &attach_fd, sizeof(int));
    }
    const ssize_t sent = ::sendmsg(fd, &header, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw ChannelClosed(fmt::format("the worker's socket: {}", std::strerror(errno)));
    }
    attached = true;
    data += sent;
    size -= static_cast<std::size_t>(sent);
  }
}

// Waits until `fd` is readable or the deadline passes.
void wait_readable(int fd, std::optional<std::chrono::steady_clock::time_point> deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw ChannelTimeout("no answer in time");
      wait_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw ChannelClosed(fmt::format("the worker's socket: {}", std::strerror(errno)));
    }
    if (ready > 0) return; // readable, or hung up: recvmsg tells which
  }
}

// Reads exactly `size` bytes; the first descriptor that comes with them
// goes to `attached`.
void receive_all(int fd, char *data, std::size_t size, FileDescriptor &attached,
                 std::optional<std::chrono::steady_clock::time_point> deadline) {
  while (size > 0) {
    wait_readable(fd, deadline);
    iovec io{data, size};
    msghdr header{};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    header.msg_control = control;
    header.msg_controllen = sizeof(control);
    const ssize_t got = ::recvmsg(fd, &header, MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ChannelClosed(fmt::format("the worker's socket: {}", std::strerror(errno)));
    }
    if (got == 0) throw ChannelClosed("the other end closed the socket");
    for (cmsghdr *c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c), sizeof(int));
      if (attached.valid())
        ::close(received); // one per message; a second is not ours to keep
      else
        attached = FileDescriptor(received);
    }
    data += got;
    size -= static_cast<std::size_t>(got);
  }
}

} // namespace

void Channel::send(const json::Value &body, int attach_fd) {
  const std::string text = json::canonical(body);
  if (text.size() > kMaxMessageBytes)
    throw std::length_error(
        fmt::format("a worker message of {} bytes (at most {})", text.size(), kMaxMessageBytes));
  std::string frame(4, '\0');
  const auto n = static_cast<std::uint32_t>(text.size());
  for (int k = 0; k < 4; ++k) frame[k] = static_cast<char>((n >> (8 * k)) & 0xFF);
  frame += text;
  send_all(socket_.get(), frame.data(), frame.size(), attach_fd);
}

Message Channel::receive(std::optional<std::chrono::duration<double>> timeout) {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(*timeout);
  Message message;
  unsigned char length[4];
  receive_all(socket_.get(), reinterpret_cast<char *>(length), 4, message.attached, deadline);
  const std::uint32_t n = length[0] | (length[1] << 8) | (length[2] << 16) | (std::uint32_t{length[3]} << 24);
  if (n > kMaxMessageBytes)
    throw ChannelClosed(fmt::format("a worker message of {} bytes (at most {})", n, kMaxMessageBytes));
  std::string text(n, '\0');
  receive_all(socket_.get(), text.data(), n, message.attached, deadline);
  try {
    message.body = json::parse(text, "a worker message");
  } catch (const std::exception &e) {
    throw ChannelClosed(fmt::format("a worker message that is not JSON: {}", e.what()));
  }
  if (!message.body.is_object()) throw ChannelClosed("a worker message that is not a JSON object");
  return message;
}

} // namespace kibench::worker
