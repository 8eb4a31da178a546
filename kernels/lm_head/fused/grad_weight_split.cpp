#include "kernels/lm_head/fused/grad_weight_split.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench::gpu::fused {

std::vector<ConversionStage> in_place_conversion_stages(std::int64_t count, std::int64_t first) {
  if (first <= 0)
    throw std::invalid_argument("in_place_conversion_stages: the first stage must be non-empty");
  std::vector<ConversionStage> stages;
  if (count <= 0) return stages;
  const std::int64_t n0 = std::min(count, first);
  stages.push_back({.begin = 0, .end = n0, .through_temp = true});
  // Each stage doubles the converted prefix: [a, 2a) needs a ≥ (2a) / 2.
  for (std::int64_t a = n0; a < count; a = std::min(2 * a, count))
    stages.push_back({.begin = a, .end = std::min(2 * a, count), .through_temp = false});
  return stages;
}

} // namespace kibench::gpu::fused
