// --save-tensors: the generated inputs and every implementation's outputs as
// .npy files, with an index.json naming each file's tensor, logical dtype,
// storage dtype, shape and sha256, so a run can be re-checked in NumPy or
// PyTorch. File names carry the logical dtype: `student_input.bf16.npy`
// holds bf16 bit patterns as uint16.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "lib/implementation/implementation.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/value.hpp"
#include "lib/run/backend.hpp"

namespace kibench {

class TensorDump {
public:
  TensorDump(std::filesystem::path directory, const Backend &backend);
  void add_inputs(InputSet &inputs);
  // `who` is the implementation (or oracle) name.
  void add_outputs(const std::string &who, const OutputView &outputs, const Workload &workload);
  // Writes index.json and moves the directory into place.
  void commit();

private:
  void add(const std::string &file, const std::string &tensor, const std::string &dtype,
           std::string_view descr, const std::vector<std::int64_t> &shape, const void *data,
           std::size_t bytes_per_element);

  io::StagedDirectory dir_;
  const Backend &backend_;
  json::Array index_;
};

} // namespace kibench
