// Sweeps from the command line: `kibench run BASE.json --axis tokens=1024,2048
// --axis vocab=32000,128256` runs the base workload at every combination of
// the values given, each a WorkloadCase derived from the base exactly as
// workloads/sweeps/generate.py derives its files: the axes set, every
// tensor's shape following them, the weights' (and biases') uniform bounds
// ±1/sqrt(fan_in) (nn.Linear's default init; fan_in = H or Hs), the
// target's range [low, vocab), the generators, seeds, scalars and
// correctness policy kept, and the name and title the generator gives:
//
//   distill-jsd-loss-hidden{H}-tokens{T}-vocab{V}-bf16
//   distill_jsd_loss sweep: T={T}, V={V}, H={H} (student {Hs}), bf16
//
// (the description names the base workload; metadata is outside the digest).
//
// A derived case is validated, written and hashed like any workload file.
//
// An --axis value is a comma-separated list of items, each
//   N                 one value
//   START:STOP:STEP   START, START+STEP, ... up to STOP (inclusive)
//   START:STOP:pow2   START, 2·START, 4·START, ... up to STOP (inclusive)
// optionally in brackets ("tokens=[1024:8192:pow2]", as NVBench writes its
// ranges). A value given twice is kept once, in its first place.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// The axes --axis may set: the operation's variable axes.
inline constexpr std::string_view kSweepAxes[] = {"tokens", "vocab", "hidden"};

struct AxisValues {
  std::string name;                 // "tokens", "vocab" or "hidden"
  std::vector<std::int64_t> values; // in the order given, each once
};

// One --axis argument, "NAME=VALUES". InputError "--axis: ..." naming the
// problem: no '=', an axis the operation does not vary, a value that is no
// whole number in [1, 2^31 - 1], a range that is empty or runs backwards,
// a step of 0, more than kMaxAxisValues values.
AxisValues parse_axis(std::string_view text);
inline constexpr std::size_t kMaxAxisValues = 1024;

// Every --axis, checked together: an axis given twice, or a product of
// more than kMaxSweepCases cases, is an InputError.
std::vector<AxisValues> parse_axes(const std::vector<std::string> &arguments);
inline constexpr std::size_t kMaxSweepCases = 4096;

// The WorkloadCase `base` (a validated distill_jsd_loss case) becomes at
// `axes` (tokens, vocab, hidden; those missing keep the base's).
json::Value derive_workload_case(const json::Value &base, const std::map<std::string, std::int64_t> &axes);

// The case at `axes` for a base of any operation, as its operation derives
// it (Operation::derive_case): distill_jsd_loss as above; jsd and
// fused_linear_jsd by derive_case_from_signature. `axes` names only axes
// the operation varies (expand_sweep checks).
json::Value derive_workload_case(const Workload &base, const std::map<std::string, std::int64_t> &axes);

// From the base's OperationSpec signature: each input's shape at the new
// axes, the LM heads' bounds, the name "<operation>-<axis><value>...-<dtype>".
json::Value derive_case_from_signature(const Workload &base, const std::map<std::string, std::int64_t> &axes);

// The base at every combination of `axes`, the first axis outermost,
// each validated (workload_from_json); with no axes, the base itself.
std::vector<Workload> expand_sweep(const Workload &base, const std::vector<AxisValues> &axes);

} // namespace kibench
