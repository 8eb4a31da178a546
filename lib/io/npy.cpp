#include "lib/io/npy.hpp"

#include <numeric>

#include <fmt/core.h>

namespace kibench::io {

std::string npy_bytes(std::string_view descr, const std::vector<std::int64_t> &shape, const void *data,
                      std::size_t element_bytes) {
  // Python tuple syntax: (n,) for one dimension, (a, b) for more.
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += fmt::format("{}{}", i ? ", " : "", shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // Magic (6) + version (2) + header length (2) + header + '\n', padded with
  // spaces to a multiple of 64 bytes, as the format asks.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xFF));
  out.push_back(static_cast<char>((header.size() >> 8) & 0xFF));
  out += header;
  const auto count = static_cast<std::size_t>(
      std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>()));
  out.append(static_cast<const char *>(data), count * element_bytes);
  return out;
}

} // namespace kibench::io
