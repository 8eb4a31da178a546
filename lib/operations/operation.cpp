#include "lib/operations/operation.hpp"

#include "lib/workload/axis_sweep.hpp"

namespace kibench {

json::Value Operation::derive_case(const Workload &base, const std::map<std::string, std::int64_t> &axes) const {
  return derive_case_from_signature(base, axes);
}

} // namespace kibench
