// CPU generation of a workload's inputs, element for element the stream
// inputs/philox.hpp specifies (the GPU generator in kernels/ follows the same
// header, so the two copies are bit-identical). Every element depends only on
// its generator and its index, never on how the work was split.
#pragma once

#include <cstdint>
#include <span>

#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// The real value of element `index` of a "philox4x32_10_uniform" tensor before any
// narrowing: low + (high - low) * u in double, multiply and add each rounded.
[[nodiscard]] double uniform_value_at(const GeneratorSpec &spec, std::uint64_t index);

// The stored bf16 bit pattern of that element: bf16_rne(float(value)).
[[nodiscard]] std::uint16_t uniform_bf16_at(const GeneratorSpec &spec, std::uint64_t index);

// Target of token `token` of a "philox4x32_10_uniform_int" generator: low + (64 random
// bits mod (high - low)), or ignore_index with probability ignore_fraction.
[[nodiscard]] std::int64_t target_at(const GeneratorSpec &spec, std::int64_t ignore_index,
                                     std::uint64_t token);

// Bulk versions over the cores: out[k] = element (first_index + k).
void fill_uniform_bf16(const GeneratorSpec &spec, std::span<std::uint16_t> out,
                       std::uint64_t first_index = 0);
// "philox4x32_10_uniform_log_softmax": row i of a [rows, columns] tensor is
// x_k = uniform_value_at(spec, i * columns + k), then out[i, k] =
// float(x_k - (m + log sum_k exp(x_k - m))), m = max_k x_k, all in double
// and the sum in column order: a log-probability row (as Liger's benchmark
// makes with randn(...).log_softmax(-1)). out.size() is a multiple of columns.
void fill_log_softmax_rows(const GeneratorSpec &spec, std::int64_t columns, std::span<float> out);
void fill_targets(const GeneratorSpec &spec, std::int64_t ignore_index, std::span<std::int64_t> out,
                  std::uint64_t first_index = 0);

// All inputs of `workload` (biases only where it has them). Throws
// InputError for a generator name this stream does not define.
[[nodiscard]] HostInputs generate_host_inputs(const Workload &workload);

} // namespace kibench
