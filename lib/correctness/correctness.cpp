#include "lib/correctness/correctness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "lib/inputs/bf16.hpp"

namespace kibench {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double element_at(const TensorRef &tensor, std::int64_t k) {
  const auto i = static_cast<std::size_t>(k);
  switch (tensor.type) {
  case ElementType::bf16:
    return bf16::to_double(static_cast<const std::uint16_t *>(tensor.data)[i]);
  case ElementType::fp32:
    return static_cast<double>(static_cast<const float *>(tensor.data)[i]);
  case ElementType::fp64:
    return static_cast<const double *>(tensor.data)[i];
  }
  throw std::logic_error("unknown ElementType");
}

// Sums of squares are scaled by the largest magnitude seen (as LAPACK's
// dnrm2 does), so gradients of any size neither overflow nor underflow.
class ScaledNorm {
public:
  void add(double x) {
    const double a = std::abs(x);
    if (a == 0.0) return;
    if (a > scale_) {
      sum_ = 1.0 + sum_ * (scale_ / a) * (scale_ / a);
      scale_ = a;
    } else {
      sum_ += (a / scale_) * (a / scale_);
    }
  }
  [[nodiscard]] double value() const { return scale_ * std::sqrt(sum_); }

private:
  double scale_ = 0.0;
  double sum_ = 0.0;
};

double relative_error(double diff_norm, double ref_norm) {
  if (ref_norm > 0.0) return diff_norm / ref_norm;
  return diff_norm == 0.0 ? 0.0 : kInfinity;
}

// How far past its limit an output is (> 1 fails); nonfinite output ranks
// worst of all. Used to name the worst output in the summary.
double severity(const ErrorStats &s, const CorrectnessPolicy &policy) {
  if (s.nonfinite > 0) return kInfinity;
  if (policy.loss_rule_for(s.output)) {
    // The scalar's reference is ||ref||_2 = |ref|.
    return s.max_abs_error / CorrectnessPolicy::loss_allowance(s.ref_l2_norm);
  }
  if (s.ref_l2_norm == 0.0) {
    if (s.max_abs_error == 0.0) return 0.0;
    return policy.max_absolute_error > 0.0 ? s.max_abs_error / policy.max_absolute_error : kInfinity;
  }
  if (s.rel_l2_error == 0.0) return 0.0;
  return policy.max_relative_error > 0.0 ? s.rel_l2_error / policy.max_relative_error : kInfinity;
}

std::string describe(const ErrorStats &s, const CorrectnessPolicy &policy) {
  if (s.nonfinite > 0) return fmt::format("{} has {} NaN/Inf of {} elements", s.output, s.nonfinite, s.count);
  if (policy.loss_rule_for(s.output))
    return fmt::format("{} abs error {:.3g} {} {:.3g} (max({:g} |ref|, {:g}))", s.output, s.max_abs_error,
                       s.passed ? "<=" : ">", CorrectnessPolicy::loss_allowance(s.ref_l2_norm),
                       kLossRelativeTolerance, kLossAbsoluteFloor);
  if (s.ref_l2_norm == 0.0)
    return fmt::format("{} max abs error {:.3g} {} {:.3g} (reference is exactly zero)", s.output,
                       s.max_abs_error, s.passed ? "<=" : ">", policy.max_absolute_error);
  return fmt::format("{} rel L2 error {:.3g} {} {:.3g}", s.output, s.rel_l2_error, s.passed ? "<=" : ">",
                     policy.max_relative_error);
}

} // namespace

void apply_policy(ErrorStats &stats, const CorrectnessPolicy &policy) {
  if (!known_comparator(policy.comparator))
    throw std::invalid_argument(fmt::format("unknown correctness comparator \"{}\"", policy.comparator));
  // nanPolicy and infinityPolicy are "reject" (the only value defined):
  // any nonfinite element fails the output.
  if (stats.nonfinite > 0) {
    stats.passed = false;
  } else if (policy.loss_rule_for(stats.output)) {
    // One element: max_abs_error = |loss - ref| and ref_l2_norm = |ref|.
    stats.passed = stats.count == 1 && stats.max_abs_error <= CorrectnessPolicy::loss_allowance(stats.ref_l2_norm);
  } else if (stats.ref_l2_norm == 0.0) {
    stats.passed = stats.max_abs_error <= policy.max_absolute_error;
  } else {
    stats.passed = stats.rel_l2_error <= policy.max_relative_error;
  }
}

ErrorStats compare_host(std::string output, const TensorRef &out, const TensorRef &ref) {
  if (out.on_device || ref.on_device)
    throw std::invalid_argument(fmt::format("{}: compare_host needs host tensors", output));
  if (out.count != ref.count || (out.data == nullptr && out.count > 0) ||
      (ref.data == nullptr && ref.count > 0))
    throw std::invalid_argument(
        fmt::format("{}: {} elements to compare with a reference of {}", output, out.count, ref.count));

  ErrorStats stats;
  stats.output = std::move(output);
  stats.count = out.count;
  ScaledNorm diff_norm, ref_norm;
  for (std::int64_t k = 0; k < out.count; ++k) {
    const double o = element_at(out, k);
    const double r = element_at(ref, k);
    // A nonfinite reference makes the element as unverifiable as a
    // nonfinite output: both count as nonfinite and fail the gate.
    if (!std::isfinite(o) || !std::isfinite(r)) {
      ++stats.nonfinite;
      continue;
    }
    const double diff = o - r;
    stats.max_abs_error = std::max(stats.max_abs_error, std::abs(diff));
    diff_norm.add(diff);
    ref_norm.add(r);
  }
  stats.ref_l2_norm = ref_norm.value();
  stats.rel_l2_error = relative_error(diff_norm.value(), stats.ref_l2_norm);
  return stats;
}

ErrorStats compare_scalar(std::string output, double out, double ref) {
  const TensorRef out_ref{&out, ElementType::fp64, 1, false};
  const TensorRef ref_ref{&ref, ElementType::fp64, 1, false};
  return compare_host(std::move(output), out_ref, ref_ref);
}

bool checks_gradients(Pass pass) {
  return pass != Pass::forward;
}

CorrectnessVerdict make_verdict(std::vector<ErrorStats> outputs, const CorrectnessPolicy &policy) {
  CorrectnessVerdict verdict;
  verdict.outputs = std::move(outputs);
  if (verdict.outputs.empty()) {
    verdict.passed = false;
    verdict.summary = "fail: no outputs were compared";
    return verdict;
  }
  verdict.passed = true;
  for (ErrorStats &s : verdict.outputs) {
    apply_policy(s, policy);
    verdict.passed = verdict.passed && s.passed;
  }
  // The worst output: a failing one before any passing one, then the one
  // furthest past (or closest to) its limit.
  const auto worst = std::max_element(verdict.outputs.begin(), verdict.outputs.end(),
                                      [&](const ErrorStats &a, const ErrorStats &b) {
                                        if (a.passed != b.passed) return a.passed;
                                        return severity(a, policy) < severity(b, policy);
                                      });
  verdict.summary = fmt::format("{}: {} outputs checked; worst: {}", verdict.passed ? "pass" : "FAIL",
                                verdict.outputs.size(), describe(*worst, policy));
  return verdict;
}

} // namespace kibench
