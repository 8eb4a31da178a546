// Fixed-capacity storage for secret bytes (a key, a key file's text) that is
// wiped when it goes out of scope. Fixed capacity, because a growing buffer
// reallocates and leaves unwiped copies of the secret behind on the heap.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string_view>

#include <sodium.h>

namespace kibench::attest {

template <std::size_t Capacity> class SecretBuffer {
public:
  SecretBuffer() = default;
  ~SecretBuffer() { sodium_memzero(bytes_.data(), bytes_.size()); }
  // No copies: each would be one more secret to wipe. A move leaves no copy
  // behind, because the source is wiped.
  SecretBuffer(const SecretBuffer &) = delete;
  SecretBuffer &operator=(const SecretBuffer &) = delete;
  SecretBuffer(SecretBuffer &&other) noexcept { take(other); }
  SecretBuffer &operator=(SecretBuffer &&other) noexcept {
    if (this != &other) take(other);
    return *this;
  }

  [[nodiscard]] static constexpr std::size_t capacity() { return Capacity; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] unsigned char *data() { return bytes_.data(); }
  [[nodiscard]] const unsigned char *data() const { return bytes_.data(); }

  // For filling in place: the bytes past size() up to the capacity.
  [[nodiscard]] std::span<unsigned char> unused() { return std::span(bytes_).subspan(size_); }
  void resize(std::size_t size) {
    if (size > Capacity) throw std::length_error("secret buffer capacity exceeded");
    size_ = size;
  }
  void append(std::string_view text) {
    if (text.size() > Capacity - size_) throw std::length_error("secret buffer capacity exceeded");
    for (const char c : text) bytes_[size_++] = static_cast<unsigned char>(c);
  }

  [[nodiscard]] std::span<const unsigned char> bytes() const { return std::span(bytes_).first(size_); }
  [[nodiscard]] std::string_view text() const {
    return {reinterpret_cast<const char *>(bytes_.data()), size_};
  }

private:
  void take(SecretBuffer &other) noexcept {
    bytes_ = other.bytes_;
    size_ = other.size_;
    sodium_memzero(other.bytes_.data(), other.bytes_.size());
    other.size_ = 0;
  }

  std::array<unsigned char, Capacity> bytes_{};
  std::size_t size_ = 0;
};

} // namespace kibench::attest
