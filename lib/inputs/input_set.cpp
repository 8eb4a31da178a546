#include "lib/inputs/input_set.hpp"

#include "lib/inputs/generate.hpp"

namespace kibench {

const HostInputs &InputSet::host() {
  if (!host_) host_ = std::make_unique<HostInputs>(generate_host_inputs(workload_));
  return *host_;
}

} // namespace kibench
