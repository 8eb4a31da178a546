#include "lib/environment/gpu_topology.hpp"

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kibench {

namespace {

// The text without ANSI escape sequences (nvidia-smi underlines its header).
std::string without_escapes(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b') {
      // CSI: ESC '[' parameters, then a final byte in '@'..'~'.
      if (i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      }
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

std::vector<std::string> words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

} // namespace

std::optional<PairLinks> parse_gpu_topology(std::string_view matrix, int gpus) {
  if (gpus < 2) return PairLinks{};
  std::istringstream in(without_escapes(matrix));
  // The header: GPU0 GPU1 ... in order, first.
  std::string line;
  bool header_seen = false;
  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(gpus));
  while (std::getline(in, line)) {
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (!header_seen) {
      if (static_cast<int>(w.size()) < gpus) continue;
      bool header = true;
      for (int j = 0; j < gpus; ++j) header = header && w[static_cast<std::size_t>(j)] == fmt::format("GPU{}", j);
      header_seen = header;
      continue;
    }
    for (int i = 0; i < gpus; ++i)
      if (w.front() == fmt::format("GPU{}", i) && static_cast<int>(w.size()) > gpus)
        rows[static_cast<std::size_t>(i)].assign(w.begin() + 1, w.begin() + 1 + gpus);
  }
  if (!header_seen) return std::nullopt;
  PairLinks links;
  for (int i = 0; i < gpus; ++i) {
    const auto &row = rows[static_cast<std::size_t>(i)];
    if (row.empty() || row[static_cast<std::size_t>(i)] != "X") return std::nullopt;
    for (int j = i + 1; j < gpus; ++j) ++links[row[static_cast<std::size_t>(j)]];
  }
  return links;
}

std::string describe_interconnect(const PairLinks &links, int gpus) {
  const std::string span = gpus == 2 ? "GPUs 0 and 1" : fmt::format("GPUs 0-{}", gpus - 1);
  if (links.size() == 1)
    return fmt::format("{} between every pair of {} (nvidia-smi topo -m)", links.begin()->first, span);
  std::vector<std::string> parts;
  for (const auto &[link, pairs] : links) parts.push_back(fmt::format("{} {}", link, pairs));
  return fmt::format("{}, pairs by link: {} (nvidia-smi topo -m)", span, fmt::join(parts, ", ")).substr(0, 200);
}

std::optional<std::string> probe_interconnect(int gpus) {
  if (gpus < 2) return std::nullopt;
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(::popen("nvidia-smi topo -m 2>/dev/null", "r"), ::pclose);
  if (!pipe) return std::nullopt;
  std::string text;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) text.append(buffer.data(), n);
  const auto links = parse_gpu_topology(text, gpus);
  if (!links) return std::nullopt;
  return describe_interconnect(*links, gpus);
}

} // namespace kibench
