// The correctness gate (lib/correctness/correctness.hpp): error statistics of host
// tensors of each element type, the policy's pass/fail rule, and verdicts.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "lib/correctness/correctness.hpp"
#include "lib/inputs/bf16.hpp"

using namespace kibench;

namespace {

template <class T> TensorRef ref_of(const std::vector<T> &v, ElementType type) {
  return TensorRef{v.data(), type, static_cast<std::int64_t>(v.size()), false};
}

CorrectnessPolicy policy(double max_relative, double max_absolute = 0.0) {
  CorrectnessPolicy p;
  p.max_relative_error = max_relative;
  p.max_absolute_error = max_absolute;
  return p;
}

} // namespace

TEST_CASE("compare_host measures max abs and relative L2 error", "[correctness]") {
  const std::vector<double> ref = {3.0, -4.0, 0.0};
  const std::vector<double> out = {3.0, -4.0, 0.05};
  const ErrorStats s = compare_host("grad", ref_of(out, ElementType::fp64), ref_of(ref, ElementType::fp64));
  CHECK(s.output == "grad");
  CHECK(s.count == 3);
  CHECK(s.max_abs_error == Approx(0.05));
  CHECK(s.ref_l2_norm == Approx(5.0));
  CHECK(s.rel_l2_error == Approx(0.01));
  CHECK(s.nonfinite == 0);
}

TEST_CASE("compare_host reads bf16 and fp32 outputs against fp32 or fp64 references", "[correctness]") {
  const std::vector<double> ref64 = {1.0, 0.5, -2.0, 0.3};
  const std::vector<float> ref32 = {1.0f, 0.5f, -2.0f, 0.3f};
  std::vector<std::uint16_t> out16;
  for (float v : ref32) out16.push_back(bf16::from_float(v));
  // 0.3 is the only value bf16 cannot hold: the error is its rounding.
  const double rounding = std::abs(bf16::to_double(out16[3]) - 0.3);
  REQUIRE(rounding > 0.0);
  const ErrorStats s16 =
      compare_host("bf16", ref_of(out16, ElementType::bf16), ref_of(ref64, ElementType::fp64));
  CHECK(s16.max_abs_error == Approx(rounding));
  CHECK(s16.rel_l2_error == Approx(rounding / std::sqrt(1.0 + 0.25 + 4.0 + 0.09)));
  const ErrorStats s32 =
      compare_host("fp32", ref_of(ref32, ElementType::fp32), ref_of(ref64, ElementType::fp64));
  CHECK(s32.max_abs_error == Approx(std::abs(static_cast<double>(0.3f) - 0.3)));
  const ErrorStats vs32 =
      compare_host("bf16 vs fp32", ref_of(out16, ElementType::bf16), ref_of(ref32, ElementType::fp32));
  CHECK(vs32.max_abs_error == Approx(std::abs(bf16::to_double(out16[3]) - static_cast<double>(0.3f))));
}

TEST_CASE("compare_host counts NaN and Inf and the gate rejects them", "[correctness]") {
  const std::vector<double> ref = {1.0, 2.0, 3.0};
  const std::vector<double> out = {1.0, std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity()};
  ErrorStats s = compare_host("grad", ref_of(out, ElementType::fp64), ref_of(ref, ElementType::fp64));
  CHECK(s.nonfinite == 2);
  CHECK(std::isfinite(s.rel_l2_error));
  apply_policy(s, policy(1.0, 1.0)); // any finite error would pass
  CHECK_FALSE(s.passed);

  // Poison left in a bf16 output is caught the same way.
  const std::vector<std::uint16_t> poisoned(3, bf16::from_float(std::numeric_limits<float>::quiet_NaN()));
  CHECK(compare_host("p", ref_of(poisoned, ElementType::bf16), ref_of(ref, ElementType::fp64)).nonfinite ==
        3);
}

TEST_CASE("apply_policy: relative L2 bound, or max abs where the reference is exactly zero",
          "[correctness]") {
  ErrorStats s;
  s.ref_l2_norm = 2.0;
  s.rel_l2_error = 0.009;
  s.max_abs_error = 0.5;
  apply_policy(s, policy(1e-2));
  CHECK(s.passed);
  s.rel_l2_error = 0.011;
  apply_policy(s, policy(1e-2));
  CHECK_FALSE(s.passed);

  const std::vector<double> zeros(4, 0.0);
  const std::vector<double> tiny = {0.0, 1e-9, 0.0, -2e-9};
  ErrorStats z = compare_host("grad", ref_of(tiny, ElementType::fp64), ref_of(zeros, ElementType::fp64));
  CHECK(z.ref_l2_norm == 0.0);
  CHECK(std::isinf(z.rel_l2_error));
  CHECK(z.max_abs_error == Approx(2e-9));
  apply_policy(z, policy(1e-2, 1e-8));
  CHECK(z.passed);
  apply_policy(z, policy(1e-2, 1e-9));
  CHECK_FALSE(z.passed);
  ErrorStats exact = compare_host("grad", ref_of(zeros, ElementType::fp64), ref_of(zeros, ElementType::fp64));
  CHECK(exact.rel_l2_error == 0.0);
  apply_policy(exact, policy(1e-2, 0.0));
  CHECK(exact.passed);

  CorrectnessPolicy unknown = policy(1e-2);
  unknown.comparator = "eyeball";
  CHECK_THROWS_AS(apply_policy(s, unknown), std::invalid_argument);
}

TEST_CASE("the loss has its own tolerance: max(1e-4 |ref|, 1e-5), the gradients keep rel L2",
          "[correctness]") {
  CorrectnessPolicy loss_rule = policy(1e-2, 1e-6);
  REQUIRE(loss_rule.comparator == kComparatorLossRelAbs);
  CorrectnessPolicy every_output = loss_rule;
  every_output.comparator = std::string(kComparatorRelL2);

  // A loss of 3.3 off by 1e-3 (0.03 %): within the gradients' 1 %, past the
  // loss's 3.3e-4.
  ErrorStats off = compare_scalar("loss", 3.301, 3.3);
  apply_policy(off, every_output);
  CHECK(off.passed);
  apply_policy(off, loss_rule);
  CHECK_FALSE(off.passed);
  ErrorStats near = compare_scalar("loss", 3.3 + 3e-4, 3.3);
  apply_policy(near, loss_rule);
  CHECK(near.passed);

  // The absolute floor: a single token's loss of 0.024 off by 4e-6 passes
  // (1e-4 of it is 2.4e-6), one off by 2e-5 does not; a loss of exactly 0
  // (every target ignored) may be off by 1e-5.
  ErrorStats small = compare_scalar("loss", 0.024 + 4e-6, 0.024);
  apply_policy(small, loss_rule);
  CHECK(small.passed);
  small = compare_scalar("loss", 0.024 + 2e-5, 0.024);
  apply_policy(small, loss_rule);
  CHECK_FALSE(small.passed);
  ErrorStats zero = compare_scalar("loss", 9e-6, 0.0);
  apply_policy(zero, loss_rule);
  CHECK(zero.passed);

  // Only the output named "loss" takes the loss's rule.
  ErrorStats grad = compare_scalar("grad_input", 3.301, 3.3);
  apply_policy(grad, loss_rule);
  CHECK(grad.passed);

  const CorrectnessVerdict verdict = make_verdict({compare_scalar("loss", 3.301, 3.3)}, loss_rule);
  CHECK_FALSE(verdict.passed);
  CHECK(verdict.summary.find("loss abs error 0.001 > 0.00033") != std::string::npos);
  CHECK(loss_rule.describe_rule().find("loss: |loss - ref| <= max(0.0001 |ref|, 0.00001)") == 0);
  CHECK(every_output.describe_rule().empty()); // its protocols keep the text they had
}

TEST_CASE("compare_scalar and mismatched tensors", "[correctness]") {
  const ErrorStats loss = compare_scalar("loss", 1.001, 1.0);
  CHECK(loss.count == 1);
  CHECK(loss.rel_l2_error == Approx(1e-3));
  CHECK(compare_scalar("loss", std::numeric_limits<double>::quiet_NaN(), 1.0).nonfinite == 1);
  CHECK(compare_scalar("loss", 0.0, 0.0).rel_l2_error == 0.0);

  const std::vector<double> three(3, 1.0), two(2, 1.0);
  CHECK_THROWS_AS(compare_host("g", ref_of(two, ElementType::fp64), ref_of(three, ElementType::fp64)),
                  std::invalid_argument);
  TensorRef device = ref_of(three, ElementType::fp64);
  device.on_device = true;
  CHECK_THROWS_AS(compare_host("g", device, ref_of(three, ElementType::fp64)), std::invalid_argument);
}

TEST_CASE("make_verdict passes only when every output passes and names the worst", "[correctness]") {
  const CorrectnessPolicy p = policy(1e-2, 1e-6);
  const std::vector<double> ref = {1.0, 2.0};
  const std::vector<double> close = {1.0, 2.001}, far = {1.5, 2.0};

  const CorrectnessVerdict good = make_verdict(
      {compare_scalar("loss", 1.0, 1.0),
       compare_host("grad_student_weight", ref_of(close, ElementType::fp64), ref_of(ref, ElementType::fp64))},
      p);
  CHECK(good.passed);
  CHECK(good.summary.find("pass") == 0);
  CHECK(good.summary.find("grad_student_weight") != std::string::npos);

  const CorrectnessVerdict bad = make_verdict(
      {compare_scalar("loss", 1.0, 1.0),
       compare_host("grad_student_input", ref_of(far, ElementType::fp64), ref_of(ref, ElementType::fp64)),
       compare_host("grad_student_weight", ref_of(close, ElementType::fp64), ref_of(ref, ElementType::fp64))},
      p);
  CHECK_FALSE(bad.passed);
  CHECK(bad.outputs.size() == 3);
  CHECK(bad.outputs[1].passed == false);
  CHECK(bad.outputs[2].passed == true);
  CHECK(bad.summary.find("FAIL") == 0);
  CHECK(bad.summary.find("grad_student_input") != std::string::npos);
  CHECK(bad.summary.find('\n') == std::string::npos);

  const CorrectnessVerdict nan = make_verdict(
      {compare_host("grad_student_input", ref_of(far, ElementType::fp64), ref_of(ref, ElementType::fp64)),
       compare_scalar("loss", std::numeric_limits<double>::quiet_NaN(), 1.0)},
      p);
  CHECK_FALSE(nan.passed);
  CHECK(nan.summary.find("loss has 1 NaN/Inf") != std::string::npos);

  CHECK_FALSE(make_verdict({}, p).passed);
}
