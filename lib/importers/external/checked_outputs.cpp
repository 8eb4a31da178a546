#include "lib/importers/external/checked_outputs.hpp"

#include "lib/correctness/correctness.hpp"

namespace kibench::importers::external {

std::vector<std::string> checked_outputs(const Workload &workload, Pass pass) {
  std::vector<std::string> outputs{"loss"};
  if (!checks_gradients(pass)) return outputs;
  outputs.emplace_back("grad_student_input");
  outputs.emplace_back("grad_student_weight");
  if (workload.student_bias) outputs.emplace_back("grad_student_bias");
  return outputs;
}

} // namespace kibench::importers::external
