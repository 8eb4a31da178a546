#include "lib/inputs/generate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/inputs/bf16.hpp"
#include "lib/inputs/philox.hpp"
#include "lib/parallel/parallel_for.hpp"

namespace kibench {
namespace {

// v = low + (high - low) * u with each operation rounded on its own. The
// product is a named value of its own statement, and the library is built
// in ISO C++ mode (g++ then uses -ffp-contract=off), so it is never fused
// into an FMA with the addition; an FMA would change the last bit of v and
// hence, now and then, the rounded bf16.
double scale_unit(double low, double high, double unit) {
  const double width = high - low;
  const double scaled = width * unit;
  return low + scaled;
}

std::uint16_t bf16_of_value(double value) {
  return philox::bf16_from_float_bits(std::bit_cast<std::uint32_t>(static_cast<float>(value)));
}

void require_generator(const GeneratorSpec &spec, std::string_view expected) {
  if (spec.name != expected)
    throw InputError(
        fmt::format("generator \"{}\" cannot fill this tensor (expected \"{}\")", spec.name, expected));
}

// Below this many elements a tensor is filled on the calling thread. Bulk
// loops compute one Philox block per four elements (a range that starts
// mid-block recomputes that one block).
constexpr std::int64_t kMinElementsPerThread = 1 << 14;

} // namespace

double uniform_value_at(const GeneratorSpec &spec, std::uint64_t index) {
  const philox::Block block = philox::block_at(index / 4, spec.seed);
  return scale_unit(spec.low, spec.high, philox::unit_from_bits(block.w[index % 4]));
}

std::uint16_t uniform_bf16_at(const GeneratorSpec &spec, std::uint64_t index) {
  return bf16_of_value(uniform_value_at(spec, index));
}

std::int64_t target_at(const GeneratorSpec &spec, std::int64_t ignore_index, std::uint64_t token) {
  const auto low = static_cast<std::int64_t>(spec.low);
  const auto high = static_cast<std::int64_t>(spec.high);
  if (high <= low) throw InputError(fmt::format("uniform_int needs low < high (got [{}, {}))", low, high));
  const philox::Block block = philox::block_at(token, spec.seed);
  if (philox::unit_from_bits(block.w[2]) < spec.ignore_fraction) return ignore_index;
  const auto range = static_cast<std::uint64_t>(high - low);
  const std::uint64_t bits = (static_cast<std::uint64_t>(block.w[1]) << 32) | block.w[0];
  return low + static_cast<std::int64_t>(bits % range);
}

void fill_uniform_bf16(const GeneratorSpec &spec, std::span<std::uint16_t> out, std::uint64_t first_index) {
  const auto count = static_cast<std::int64_t>(out.size());
  parallel_for(
      0, count,
      [&](std::int64_t begin, std::int64_t end) {
        std::int64_t k = begin;
        while (k < end) {
          const std::uint64_t index = first_index + static_cast<std::uint64_t>(k);
          const philox::Block block = philox::block_at(index / 4, spec.seed);
          // The rest of this block's four words, as far as the range goes.
          for (std::uint64_t lane = index % 4; lane < 4 && k < end; ++lane, ++k) {
            const double value = scale_unit(spec.low, spec.high, philox::unit_from_bits(block.w[lane]));
            out[static_cast<std::size_t>(k)] = bf16_of_value(value);
          }
        }
      },
      kMinElementsPerThread);
}

void fill_log_softmax_rows(const GeneratorSpec &spec, std::int64_t columns, std::span<float> out) {
  const std::int64_t rows = static_cast<std::int64_t>(out.size()) / columns;
  parallel_for(
      0, rows,
      [&](std::int64_t begin, std::int64_t end) {
        std::vector<double> row(static_cast<std::size_t>(columns));
        for (std::int64_t i = begin; i < end; ++i) {
          const auto first = static_cast<std::uint64_t>(i * columns);
          double peak = -INFINITY;
          for (std::int64_t k = 0; k < columns; ++k) {
            row[static_cast<std::size_t>(k)] = uniform_value_at(spec, first + static_cast<std::uint64_t>(k));
            peak = std::max(peak, row[static_cast<std::size_t>(k)]);
          }
          double sum = 0.0; // in column order
          for (const double x : row) sum += std::exp(x - peak);
          const double log_normalizer = peak + std::log(sum);
          for (std::int64_t k = 0; k < columns; ++k)
            out[first + static_cast<std::size_t>(k)] =
                static_cast<float>(row[static_cast<std::size_t>(k)] - log_normalizer);
        }
      },
      std::max<std::int64_t>(1, kMinElementsPerThread / std::max<std::int64_t>(1, columns)));
}

void fill_targets(const GeneratorSpec &spec, std::int64_t ignore_index, std::span<std::int64_t> out,
                  std::uint64_t first_index) {
  parallel_for(
      0, static_cast<std::int64_t>(out.size()),
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t k = begin; k < end; ++k)
          out[static_cast<std::size_t>(k)] =
              target_at(spec, ignore_index, first_index + static_cast<std::uint64_t>(k));
      },
      kMinElementsPerThread);
}

HostInputs generate_host_inputs(const Workload &workload) {
  const auto T = static_cast<std::size_t>(workload.tokens);
  const auto V = static_cast<std::size_t>(workload.vocab);
  const auto H = static_cast<std::size_t>(workload.hidden);
  const auto Hs = static_cast<std::size_t>(workload.student_hidden);

  auto uniform = [](const GeneratorSpec &spec, std::size_t count) {
    require_generator(spec, "philox4x32_10_uniform");
    std::vector<std::uint16_t> values(count);
    fill_uniform_bf16(spec, values);
    return values;
  };

  HostInputs inputs;
  require_generator(workload.target, "philox4x32_10_uniform_int");
  inputs.target.resize(T);
  fill_targets(workload.target, workload.scalars.ignore_index, inputs.target);
  if (!workload.operation_kind->has_lm_heads()) {
    for (const auto &[spec, out] : {std::pair{&workload.student_log_probs, &inputs.student_log_probs},
                                    std::pair{&workload.teacher_log_probs, &inputs.teacher_log_probs}}) {
      require_generator(*spec, "philox4x32_10_uniform_log_softmax");
      out->resize(T * V);
      fill_log_softmax_rows(*spec, workload.vocab, *out);
    }
    return inputs;
  }
  inputs.student_input = uniform(workload.student_input, T * Hs);
  inputs.student_weight = uniform(workload.student_weight, V * Hs);
  inputs.teacher_input = uniform(workload.teacher_input, T * H);
  inputs.teacher_weight = uniform(workload.teacher_weight, V * H);
  if (workload.student_bias) inputs.student_bias = uniform(*workload.student_bias, V);
  if (workload.teacher_bias) inputs.teacher_bias = uniform(*workload.teacher_bias, V);
  return inputs;
}

} // namespace kibench
