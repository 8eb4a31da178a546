// The GPU's calibration sentinels (lib/calibration/sentinels.hpp) on
// device 0: an empty kernel's launch-to-completion latency, a 256 MiB
// device-to-device copy's bandwidth and a 4096³ bf16 tensor-core GEMM's
// throughput (cuBLASLt), each the median of several repetitions.
#pragma once

#include "lib/calibration/sentinels.hpp"

namespace kibench::gpu {

calibration::SentinelSet gpu_sentinels();

} // namespace kibench::gpu
