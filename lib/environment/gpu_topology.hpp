// The interconnect between the GPUs a run uses, for the environment
// manifest's hardware.interconnect (at most 200 characters): read from the
// matrix `nvidia-smi topo -m` prints, whose entry for GPUs i and j names
// their link (NV<n>: n NVLinks; PIX, PXB, PHB, NODE, SYS: PCIe paths
// through one or more switches, a host bridge, a NUMA node, or across
// sockets).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kibench {

// Link kind → number of GPU pairs among GPUs 0 .. gpus − 1 with that link.
using PairLinks = std::map<std::string, int>;

// The pairs' links from the matrix text (escape sequences and the columns
// after the GPUs' ignored); nullopt unless every pair of the first `gpus`
// GPUs has an entry.
[[nodiscard]] std::optional<PairLinks> parse_gpu_topology(std::string_view matrix, int gpus);

// "NV18 between every pair of GPUs 0-7 (nvidia-smi topo -m)", or, where
// pairs differ, "GPUs 0-7, pairs by link: NV18 12, SYS 16 (nvidia-smi topo -m)".
[[nodiscard]] std::string describe_interconnect(const PairLinks &links, int gpus);

// `nvidia-smi topo -m` run on this machine, described for GPUs 0 .. gpus − 1;
// nullopt where it cannot be run or read.
[[nodiscard]] std::optional<std::string> probe_interconnect(int gpus);

} // namespace kibench
