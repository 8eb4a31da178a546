// The `fused` implementation on the GPU against the fp64 CPU oracle: fresh
// inputs per case (each case its own seeds), outputs poisoned before every
// run, chunks forced small so that several run (and the last is short),
// and the bounds the fused path promises: gradients within 2e-3 relative
// L2 of the oracle, the loss within 1e-5 relative. The grad W accumulator
// is split at S = floor(V/16)·8 (rows [0, S) in the output buffer, rounded
// in place in stages); the cases cover S ≠ V − S, S = 0, V·Hs not a
// multiple of 4 and many conversion stages, and `fused-lean`.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/run/implementation_files.hpp"
#include "test/test_gpu_checks.hpp"

using namespace kibench;
using namespace kibench::test;

namespace {

constexpr double kGradientBound = 2e-3;
constexpr double kLossBound = 1e-5;

struct Case {
  std::string label;
  std::uint64_t seed = 1;
  std::int64_t tokens = 48, vocab = 3000, hidden = 128;
  double beta = 0.5, temperature = 1.0, ignore_fraction = 0.0;
  bool bias = false;
  std::int64_t chunk_rows = 16; // 0: the implementation's own choice
  // Elements of the in-place conversion's first stage; 0: the default
  // min(S·Hs, R·ld, 2^20) (R·ld < S·Hs already gives several stages on
  // small cases with short chunks).
  std::int64_t first_stage = 0;
  // The loss bound. kLossBound holds where a row has hundreds of logits or
  // more; with a dozen the bf16 rounding of the logits (which every bf16
  // implementation, PyTorch's included, computes the loss from) does not
  // average out: see the V = 13 case.
  double loss_bound = kLossBound;
};

GeneratorSpec uniform(std::uint64_t seed, double low, double high) {
  return GeneratorSpec{
      .name = "philox4x32_10_uniform", .seed = seed, .low = low, .high = high, .ignore_fraction = 0.0};
}

// The seed's generators (torch.rand inputs, nn.Linear's +-1/sqrt(fan_in)
// weights, uniform targets), scaled down, with this case's own seeds.
Workload make_workload(const Case &c) {
  Workload w;
  w.name = "fused-" + c.label;
  w.tokens = c.tokens;
  w.vocab = c.vocab;
  w.hidden = c.hidden;
  w.student_hidden = c.hidden / 2;
  const double student_bound = 1.0 / std::sqrt(static_cast<double>(w.student_hidden));
  const double teacher_bound = 1.0 / std::sqrt(static_cast<double>(w.hidden));
  const std::uint64_t s = 1000 * c.seed;
  w.student_input = uniform(s + 1, 0.0, 1.0);
  w.student_weight = uniform(s + 2, -student_bound, student_bound);
  w.teacher_input = uniform(s + 3, 0.0, 1.0);
  w.teacher_weight = uniform(s + 4, -teacher_bound, teacher_bound);
  w.target = GeneratorSpec{.name = "philox4x32_10_uniform_int",
                           .seed = s + 5,
                           .low = 0.0,
                           .high = static_cast<double>(c.vocab),
                           .ignore_fraction = c.ignore_fraction};
  if (c.bias) {
    w.student_bias = uniform(s + 6, -student_bound, student_bound);
    w.teacher_bias = uniform(s + 7, -teacher_bound, teacher_bound);
  }
  w.scalars.beta = c.beta;
  w.scalars.temperature = c.temperature;
  w.correctness.max_relative_error = kGradientBound;
  w.correctness.max_absolute_error = 0.0;
  return w;
}

bool skip_without_gpu() {
  if (gpu::gpu_available()) return false;
  WARN("no GPU: " << gpu::gpu_availability().reason << "; GPU test skipped");
  return true;
}

// One gradient against the oracle's, within fused's bound.
void check_gradient(const char *name, const TensorRef &out, const std::vector<double> &ref) {
  (void)test::check_device_gradient(name, out, ref, kGradientBound);
}

// Whether FusedOptions::logit_statistics would take the case through the
// logit GEMMs with row statistics.
bool statistics_path(const Case &c) {
  return c.temperature == 1.0 && !c.bias && c.hidden % 8 == 0 && (c.hidden / 2) % 8 == 0;
}

// The chunk plan's view of a case, as an implementation with
// FusedOptions::direct_single_chunk = `direct` and the other options'
// defaults plans it (asks the GPU for the sort's scratch size). The
// default's automatic row statistics stay off below a student hidden size
// of 2048, as in every case that calls this.
gpu::fused::ChunkShape chunk_shape(const Case &c, bool direct) {
  REQUIRE(c.hidden / 2 < gpu::fused::kStatisticsMinStudentHidden);
  return {.tokens = c.tokens,
          .vocab = c.vocab,
          .student_hidden = c.hidden / 2,
          .student_bias = c.bias,
          .sort_temp_bytes = gpu::fused::target_sort_temp_bytes(c.tokens, c.vocab),
          .direct_grad_weight = direct,
          .logit_statistics = false};
}

// prepare, poison, run `impl`, compare with the oracle; returns the loss.
// `again`, if given, runs once more with the inputs still alive.
double check_implementation(Implementation &impl, const Case &c, Pass pass,
                            const std::function<void(Implementation &)> &again = {}) {
  const std::int64_t Hs = c.hidden / 2, S = gpu::fused::grad_weight_split(c.vocab);
  INFO(fmt::format("{} case {}: T={} V={} H={} beta={} tau={} ignored={} bias={} chunk={} first stage={}; "
                   "grad W split S={} (V-S={}), low half {} elements",
                   impl.name(), c.label, c.tokens, c.vocab, c.hidden, c.beta, c.temperature,
                   c.ignore_fraction, c.bias, c.chunk_rows, c.first_stage, S, c.vocab - S, S * Hs));
  const Workload w = make_workload(c);
  InputSet inputs(w);
  const auto why_not = impl.unsupported(w);
  INFO(why_not.value_or("supported"));
  REQUIRE_FALSE(why_not.has_value());
  impl.prepare(w, inputs);
  impl.poison_outputs();
  impl.run(pass);
  const OutputView out = impl.outputs();

  const bool gradients = pass != Pass::forward;
  const OracleResult ref = run_oracle(oracle_problem(w, inputs.host()), gradients);
  INFO(fmt::format("loss {:.12g}, oracle {:.12g}", out.loss, ref.loss));
  CHECK(std::isfinite(out.loss));
  CHECK(relative_error(out.loss, ref.loss) <= c.loss_bound);
  if (!gradients) {
    CHECK(out.grad_student_input.empty());
    CHECK(out.grad_student_weight.empty());
    CHECK(out.grad_student_bias.empty());
    if (again) again(impl);
    return out.loss;
  }
  check_gradient("grad_student_input", out.grad_student_input, ref.gradients.student_input);
  check_gradient("grad_student_weight", out.grad_student_weight, ref.gradients.student_weight);
  if (c.bias) {
    check_gradient("grad_student_bias", out.grad_student_bias, ref.gradients.student_bias);
  } else {
    CHECK(out.grad_student_bias.empty());
  }
  if (again) again(impl);
  return out.loss;
}

// The `fused` implementation against the oracle, with `gemm_candidates`
// and `logit_statistics` as FusedOptions takes them.
double check_options(const Case &c, Pass pass, int gemm_candidates, LogitStatistics logit_statistics) {
  INFO("GEMM candidates " << gemm_candidates << ", logit statistics " << static_cast<int>(logit_statistics));
  auto impl = make_fused(FusedOptions{.logit_statistics = logit_statistics,
                                      .plan = {.chunk_rows = c.chunk_rows,
                                               .conversion_first_stage = c.first_stage,
                                               .gemm_candidates = gemm_candidates}});
  return check_implementation(*impl, c, pass);
}

// The shipped row kernel on cuBLASLt's heuristic picks (the same GEMMs
// every prepare, so the loss repeats exactly: timed tuning may choose
// differently from one prepare to the next, and two algorithms round the
// bf16 logits differently), then the default (tuned) options, and the
// logit GEMMs with row statistics where the case allows them, all against
// the oracle. Returns the loss on the heuristic's picks. The superseded
// row kernels are checked against this one in dev/fused/.
double check_case(const Case &c, Pass pass = Pass::full) {
  const double loss = check_options(c, pass, 1, LogitStatistics::off);
  const FusedOptions defaults;
  check_options(c, pass, defaults.plan.gemm_candidates, defaults.logit_statistics);
  if (statistics_path(c)) check_options(c, pass, defaults.plan.gemm_candidates, LogitStatistics::on);
  return loss;
}

std::vector<unsigned char> device_bytes(const TensorRef &t) {
  const std::size_t bytes = static_cast<std::size_t>(t.count) * (t.type == ElementType::bf16 ? 2 : 4);
  std::vector<unsigned char> host(bytes);
  REQUIRE(cudaMemcpy(host.data(), t.data, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  return host;
}

} // namespace

TEST_CASE("fused: mixture JSD (beta 0.5), three chunks, the last one short", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "beta0.5", .seed = 1, .tokens = 56, .vocab = 4096, .chunk_rows = 24});
}

TEST_CASE("fused: beta 0 is the forward KL(p||q)", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "beta0", .seed = 2, .beta = 0.0});
}

TEST_CASE("fused: beta 1 is the reverse KL(q||p)", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "beta1", .seed = 3, .beta = 1.0, .chunk_rows = 20});
}

TEST_CASE("fused: temperature 2 (softmax of z/tau for the JSD, raw z for the CE)", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "tau2", .seed = 4, .temperature = 2.0});
  check_case(Case{.label = "tau2-beta0", .seed = 5, .beta = 0.0, .temperature = 2.0});
  check_case(Case{.label = "tau0.5-beta1", .seed = 6, .beta = 1.0, .temperature = 0.5});
}

TEST_CASE("fused: 25% of targets ignored (N is no power of two)", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "ignore25", .seed = 7, .tokens = 64, .vocab = 4096, .ignore_fraction = 0.25});
}

TEST_CASE("fused: all targets ignored gives loss 0 and exactly zero gradients", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  const double loss = check_case(Case{.label = "ignore100", .seed = 8, .ignore_fraction = 1.0, .bias = true});
  CHECK(loss == 0.0);
}

TEST_CASE("fused: vocabulary 50257 (a partial last vector, padded rows), four chunks", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "v50257", .seed = 9, .tokens = 16, .vocab = 50257, .hidden = 64, .chunk_rows = 5});
}

TEST_CASE("fused: a single token", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "t1", .seed = 10, .tokens = 1, .vocab = 3000});
  check_case(Case{.label = "t1-v50257", .seed = 11, .tokens = 1, .vocab = 50257, .hidden = 64});
}

TEST_CASE("fused: a row to one CTA (row-v6 singles) where a row fits one SM and the rows fill the SMs",
          "[gpu][fused]") {
  if (skip_without_gpu()) return;
  const std::vector<Case> cases{
      // The compact cache (tau = 1, the mixture, G'), a partial last vector.
      {.label = "singles-v50257", .seed = 30, .tokens = 300, .vocab = 50257, .hidden = 64,
       .ignore_fraction = 0.1, .chunk_rows = 0},
      // 48 bytes a vector: tau != 1, beta 0 and 1, a bias.
      {.label = "singles-tau0.7", .seed = 31, .tokens = 280, .vocab = 30011, .hidden = 64, .temperature = 0.7,
       .chunk_rows = 0},
      {.label = "singles-beta0", .seed = 32, .tokens = 200, .vocab = 20000, .hidden = 64, .beta = 0.0,
       .chunk_rows = 0},
      {.label = "singles-beta1-bias", .seed = 33, .tokens = 200, .vocab = 20000, .hidden = 64, .beta = 1.0,
       .bias = true, .chunk_rows = 0},
  };
  for (const Case &c : cases) {
    // The shipped rule takes these rows to singles (else this case would
    // check the pairs again).
    gpu::fused::RowLossArgs args;
    args.rows = c.tokens;
    args.vocab = c.vocab;
    args.ld = (c.vocab + 63) / 64 * 64;
    args.student_hidden = c.hidden / 2;
    args.beta = c.beta;
    args.temperature = c.temperature;
    CHECK(gpu::fused::row_loss_v6_singles_pay(args));
    check_case(c);
  }
  check_case(cases[1], Pass::forward); // 48 bytes a vector without G' too
  // With the GEMMs' statistics a forward pass reads each vector once and
  // keeps none in shared memory (check_case runs it with them on): on up
  // to 137 SMs 1100 rows fill eight 128-thread CTAs an SM, on up to 150
  // 600 rows fill four 256-thread CTAs and 300 rows two 512-thread CTAs,
  // and on up to 200 SMs 200 rows run 1024-thread singles.
  check_case(cases[0], Pass::forward);
  check_case(cases[2], Pass::forward);
  check_case(Case{.label = "read-once-8-an-sm", .seed = 34, .tokens = 1100, .vocab = 50257, .hidden = 64,
                  .ignore_fraction = 0.1, .chunk_rows = 0},
             Pass::forward);
  check_case(Case{.label = "read-once-8-an-sm-beta0", .seed = 35, .tokens = 1100, .vocab = 4099, .hidden = 64,
                  .beta = 0.0, .chunk_rows = 0},
             Pass::forward);
  check_case(Case{.label = "read-once-4-an-sm-beta1", .seed = 36, .tokens = 600, .vocab = 20000, .hidden = 64,
                  .beta = 1.0, .ignore_fraction = 0.2, .chunk_rows = 0},
             Pass::forward);

  // Where the rows in flight would read more than a quarter of L2 again
  // (V = 128256 with G': 37 MB with the compact cache, 47 MB with the GEMMs'
  // statistics on 132 SMs) pairs run; a forward pass with the GEMMs'
  // statistics reads nothing again and runs singles; rows fewer than the
  // SMs run pairs; a whole row in shared memory runs singles.
  const float2 stats{};
  gpu::fused::RowLossArgs seed;
  seed.rows = 2816;
  seed.vocab = 128256;
  seed.ld = 128256;
  seed.student_hidden = 2048;
  CHECK_FALSE(gpu::fused::row_loss_v6_singles_pay(seed));
  seed.student_stats = seed.teacher_stats = &stats;
  seed.stats_ld = gpu::gemm::abt_gemm_column_tiles(seed.vocab);
  CHECK_FALSE(gpu::fused::row_loss_v6_singles_pay(seed));
  CHECK(gpu::fused::row_loss_v6_read_once_rows_per_sm(seed) == 0);
  seed.write_grad = false;
  CHECK(gpu::fused::row_loss_v6_singles_pay(seed));
  // Read once: 2816 rows fill eight 128-thread CTAs an SM on up to 352
  // SMs, 600 fill four 256-thread CTAs and 300 two 512-thread CTAs on up
  // to 150, 200 rows none of them on more than 100.
  CHECK(gpu::fused::row_loss_v6_read_once_rows_per_sm(seed) == 8);
  for (const auto &[rows, per_sm] : {std::pair{600, 4}, std::pair{300, 2}, std::pair{200, 0}}) {
    gpu::fused::RowLossArgs fewer = seed;
    fewer.rows = rows;
    CHECK(gpu::fused::row_loss_v6_read_once_rows_per_sm(fewer) == per_sm);
  }
  seed.student_stats = seed.teacher_stats = nullptr; // a forward pass that takes its own statistics re-reads
  CHECK_FALSE(gpu::fused::row_loss_v6_singles_pay(seed));
  CHECK(gpu::fused::row_loss_v6_read_once_rows_per_sm(seed) == 0);
  seed.student_stats = seed.teacher_stats = &stats;
  seed.write_grad = true;
  seed.vocab = seed.ld = 32000;
  seed.stats_ld = gpu::gemm::abt_gemm_column_tiles(seed.vocab);
  CHECK(gpu::fused::row_loss_v6_singles_pay(seed));
  seed.rows = 7;
  CHECK_FALSE(gpu::fused::row_loss_v6_singles_pay(seed));
}

TEST_CASE("fused: biases on both heads, grad b accumulated over chunks", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "bias", .seed = 12, .tokens = 50, .vocab = 1000, .bias = true, .chunk_rows = 16});
  check_case(Case{.label = "bias-ignore25-tau2",
                  .seed = 13,
                  .tokens = 40,
                  .vocab = 2000,
                  .temperature = 2.0,
                  .ignore_fraction = 0.25,
                  .bias = true,
                  .chunk_rows = 7});
}

TEST_CASE("fused: odd sizes (Hs = 33, V = 517) and its own chunk choice", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  check_case(Case{.label = "odd", .seed = 14, .tokens = 40, .vocab = 517, .hidden = 66, .chunk_rows = 9});
  check_case(
      Case{.label = "auto-chunk", .seed = 15, .tokens = 160, .vocab = 32000, .hidden = 256, .chunk_rows = 0});
}

TEST_CASE("fused: grad W split with S != V - S and V·Hs not a multiple of 4, with and without bias",
          "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // V = 1001: S = 496, V - S = 505; Hs = 35: V·Hs = 35035, S·Hs = 17360,
  // (V - S)·Hs = 17675 (the high conversion ends in a scalar tail).
  check_case(
      Case{.label = "split1001", .seed = 19, .tokens = 40, .vocab = 1001, .hidden = 70, .chunk_rows = 9});
  check_case(Case{.label = "split1001-bias-ignore25",
                  .seed = 20,
                  .tokens = 40,
                  .vocab = 1001,
                  .hidden = 70,
                  .ignore_fraction = 0.25,
                  .bias = true,
                  .chunk_rows = 9});
  // V = 2049 (odd, 16·128 + 1): S = 1024, V - S = 1025; Hs = 33.
  check_case(Case{.label = "split2049-bias",
                  .seed = 21,
                  .tokens = 30,
                  .vocab = 2049,
                  .hidden = 66,
                  .bias = true,
                  .chunk_rows = 13});
}

TEST_CASE("fused: V < 16 keeps all of grad W in the workspace (S = 0, no low GEMM)", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  REQUIRE(gpu::fused::grad_weight_split(13) == 0);
  // Loss bound 1e-4: on this shape (T = 24, V = 13, H = 64) the
  // torch-equivalent cpu-reference, which also computes the loss from bf16
  // logits, is 2.0e-6 to 8.7e-5 from the fp64 oracle over four seeds; fused
  // measured 1.4e-5 and 2.5e-5 on the H200 (2026-12-02). Gradients keep 2e-3.
  constexpr double kFewLogitsLossBound = 1e-4;
  check_case(Case{.label = "v13",
                  .seed = 22,
                  .tokens = 24,
                  .vocab = 13,
                  .hidden = 64,
                  .chunk_rows = 10,
                  .loss_bound = kFewLogitsLossBound});
  check_case(Case{.label = "v13-bias",
                  .seed = 23,
                  .tokens = 24,
                  .vocab = 13,
                  .hidden = 64,
                  .bias = true,
                  .chunk_rows = 10,
                  .loss_bound = kFewLogitsLossBound});
}

TEST_CASE("fused: the in-place grad W conversion in many stages", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // V = 3000, Hs = 64: S = 1496, S·Hs = 95744 elements. A first stage of 7
  // gives 15 stages, the direct ones at 7·2^k: those at 7 and 14 start off
  // a multiple of 4 (the scalar path on misaligned pointers), the rest are
  // vectorized. 64 gives 12 stages. 50000 is capped by the temporary (R·ld:
  // 16 · 3008 = 48128 with 16-row chunks, 60160 with 20) and gives two, the
  // second one direct and clipped at the end.
  for (const std::int64_t first : {7, 64, 50000}) {
    INFO("first stage " << first);
    check_case(Case{.label = "stages", .seed = 24, .first_stage = first});
    check_case(Case{.label = "stages-bias-ignore10",
                    .seed = 25,
                    .ignore_fraction = 0.1,
                    .bias = true,
                    .chunk_rows = 20,
                    .first_stage = first});
  }
  // V·Hs not a multiple of 4 and an odd first stage: V = 517, Hs = 33
  // (S = 256: 8448 elements in 12 stages, [0, 5) then [5·2^k, 5·2^(k+1))).
  check_case(Case{.label = "stages-odd",
                  .seed = 26,
                  .tokens = 40,
                  .vocab = 517,
                  .hidden = 66,
                  .chunk_rows = 9,
                  .first_stage = 5});
}

TEST_CASE("fused: grad W is bit-identical whatever the conversion's stages", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // Each element is rounded once from the same fp32 sum, so the schedule
  // must not change a bit; a stage that read overwritten bytes would. The
  // same sum needs the same GEMM algorithms in every prepare: the
  // heuristic's first picks, not timed tuning (check_case says why).
  const Workload w =
      make_workload(Case{.label = "stage-bits", .seed = 27, .ignore_fraction = 0.1, .bias = true});
  InputSet inputs(w);
  std::vector<std::vector<unsigned char>> grad_w;
  for (const std::int64_t first : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{4096}}) {
    auto impl = make_fused(
        FusedOptions{.plan = {.chunk_rows = 11, .conversion_first_stage = first, .gemm_candidates = 1}});
    impl->prepare(w, inputs);
    impl->poison_outputs();
    impl->run(Pass::full);
    grad_w.push_back(device_bytes(impl->outputs().grad_student_weight));
  }
  for (std::size_t i = 1; i < grad_w.size(); ++i) CHECK(grad_w[i] == grad_w[0]);
}

TEST_CASE("fused-lean: a small case through the registry, in one chunk within 1 GiB", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  const RegisteredImplementation *r = find_implementation("fused-lean");
  REQUIRE(r != nullptr);
  for (const bool bias : {false, true}) {
    const Case c{.label = "lean",
                 .seed = 28,
                 .tokens = 64,
                 .vocab = 1001,
                 .hidden = 70,
                 .bias = bias,
                 .chunk_rows = 0};
    auto impl = r->make();
    REQUIRE(impl->name() == "fused-lean");
    const gpu::fused::ChunkShape shape = chunk_shape(c, true);
    // One direct chunk of T rows (8 T <= V): no grad W accumulator. Checked
    // while the inputs the implementation points at are alive.
    REQUIRE(gpu::fused::direct_plan(shape, c.tokens));
    check_implementation(*impl, c, Pass::full, [&](Implementation &prepared) {
      const MemoryUse use = prepared.memory();
      CHECK(use.workspace_bytes == gpu::fused::workspace_bytes(shape, c.tokens));
      CHECK(use.workspace_bytes <= gpu::fused::kLeanWorkspaceBudget);
    });
    check_implementation(*impl, c, Pass::forward);
  }
}

TEST_CASE("fused-lean: the seed's plan with this GPU's sort scratch fits 1 GiB", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // What the harness will report for the seed workload: the plan's
  // workspace_bytes (equal to the allocator's count, see the memory test).
  const gpu::fused::ChunkShape seed{.tokens = 8192,
                                    .vocab = 128256,
                                    .student_hidden = 2048,
                                    .student_bias = false,
                                    .sort_temp_bytes = gpu::fused::target_sort_temp_bytes(8192, 128256)};
  const auto lean =
      gpu::fused::plan_chunks(seed, gpu::fused::kLeanWorkspaceBudget, std::uint64_t{128} << 30, 0);
  REQUIRE(lean.has_value());
  INFO(fmt::format("sort scratch {} B: fused-lean R = {}, {} chunks, {} B of workspace", seed.sort_temp_bytes,
                   lean->rows, lean->chunks, lean->workspace_bytes));
  CHECK(lean->workspace_bytes <= std::uint64_t{1073741824});
  CHECK(lean->rows >= 960);
  const auto standard =
      gpu::fused::plan_chunks(seed, gpu::fused::default_workspace_budget(seed), std::uint64_t{128} << 30, 0);
  REQUIRE(standard.has_value());
  CHECK(standard->rows == 2816);
  CHECK(standard->workspace_bytes <= gpu::fused::kDefaultWorkspaceBudget);
}

TEST_CASE("fused: logit GEMMs with row statistics, against the oracle and the cuBLASLt path",
          "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // V = 3000: 12 column tiles, the last one partial; chunks of 24 rows (the
  // last short), ignored tokens; each divergence; full and forward.
  for (const double beta : {0.5, 0.0, 1.0}) {
    const Case c{.label = "row-statistics",
                 .seed = 46,
                 .tokens = 56,
                 .vocab = 3000,
                 .beta = beta,
                 .ignore_fraction = 0.2,
                 .chunk_rows = 24};
    REQUIRE(statistics_path(c));
    for (Pass pass : {Pass::full, Pass::forward}) {
      double losses[2] = {};
      for (const bool statistics : {true, false}) {
        auto impl = make_fused(
            FusedOptions{.logit_statistics = statistics ? LogitStatistics::on : LogitStatistics::off,
                         .plan = {.chunk_rows = c.chunk_rows}});
        losses[statistics ? 0 : 1] = check_implementation(*impl, c, pass, [&](Implementation &prepared) {
          const json::Object labels = prepared.run_labels();
          REQUIRE(labels.contains("logit_gemm"));
          CHECK(labels.find("logit_gemm")
                    ->as_string()
                    .starts_with(statistics ? "kibench abt_gemm" : "cuBLASLt"));
          CHECK(prepared.memory().workspace_bytes ==
                gpu::fused::workspace_bytes(
                    {.tokens = c.tokens,
                     .vocab = c.vocab,
                     .student_hidden = c.hidden / 2,
                     .sort_temp_bytes = gpu::fused::target_sort_temp_bytes(c.tokens, c.vocab),
                     .direct_grad_weight = true,
                     .logit_statistics = statistics},
                    c.chunk_rows));
        });
      }
      // The same function of logits that agree to a rounding step.
      INFO("beta " << beta << (pass == Pass::full ? ", full" : ", forward"));
      CHECK(relative_error(losses[0], losses[1]) <= 1e-5);
    }
  }
  // Not taken where tau != 1 or a head has a bias.
  for (const Case &c : {Case{.label = "tau2", .seed = 47, .temperature = 2.0},
                        Case{.label = "bias", .seed = 48, .bias = true}}) {
    REQUIRE_FALSE(statistics_path(c));
    auto impl = make_fused(FusedOptions{.logit_statistics = LogitStatistics::on});
    check_implementation(*impl, c, Pass::full, [&](Implementation &prepared) {
      CHECK(prepared.run_labels().find("logit_gemm")->as_string() == "cuBLASLt");
    });
  }
  // The default (automatic) takes them from a student hidden size of 2048
  // and chunks of 1024 rows where the plan stays the same (one chunk either
  // way here), and leaves them below either.
  constexpr std::int64_t kRows = gpu::fused::kStatisticsMinChunkRows;
  for (const auto &[hidden, tokens] :
       {std::pair{2 * gpu::fused::kStatisticsMinStudentHidden, kRows}, std::pair{std::int64_t{2032}, kRows},
        std::pair{2 * gpu::fused::kStatisticsMinStudentHidden, kRows - 1}}) {
    const Case c{
        .label = "automatic", .seed = 49, .tokens = tokens, .vocab = 600, .hidden = hidden, .chunk_rows = 0};
    REQUIRE(statistics_path(c));
    const bool expected = c.hidden / 2 >= gpu::fused::kStatisticsMinStudentHidden && c.tokens >= kRows;
    INFO("Hs " << c.hidden / 2 << ", T " << c.tokens);
    auto impl = make_fused();
    check_implementation(*impl, c, Pass::full, [&](Implementation &prepared) {
      CHECK(prepared.run_labels()
                .find("logit_gemm")
                ->as_string()
                .starts_with(expected ? "kibench abt_gemm" : "cuBLASLt"));
    });
  }
}

TEST_CASE("fused: forward-only computes the loss and no gradients", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  for (double beta : {0.0, 0.5, 1.0}) {
    const Case c{.label = "forward", .seed = 16, .beta = beta, .temperature = 1.5, .chunk_rows = 13};
    const double forward = check_case(c, Pass::forward);
    const double full = check_case(c, Pass::full);
    // The same row kernel sweeps, with and without the gradient sweep.
    CHECK(relative_error(forward, full) <= 1e-6);
  }
}

TEST_CASE("fused: single-chunk plans take grad W from one GEMM scaled by 1/N on the device", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  // One chunk each (chunk_rows >= T, or the implementation's own choice),
  // 8 T <= V but for the V = 13 case (which keeps the accumulator path):
  // the direct path (grad W = G'ᵀ x / N in bf16 from the GEMM, the one-hot
  // term added to its target rows) and the accumulator path of multi-chunk
  // plans, both against the oracle; forward passes too.
  const std::vector<Case> cases{
      {.label = "direct-mixture-bias-ignore",
       .seed = 40,
       .tokens = 40,
       .vocab = 4096,
       .temperature = 2.0,
       .ignore_fraction = 0.25,
       .bias = true,
       .chunk_rows = 64},
      {.label = "direct-beta0", .seed = 41, .tokens = 48, .vocab = 3000, .beta = 0.0, .chunk_rows = 0},
      {.label = "direct-beta1-tau0.5",
       .seed = 42,
       .tokens = 33,
       .vocab = 2000,
       .beta = 1.0,
       .temperature = 0.5,
       .chunk_rows = 33},
      {.label = "direct-v50257", .seed = 43, .tokens = 12, .vocab = 50257, .hidden = 64, .chunk_rows = 0},
      {.label = "direct-v13",
       .seed = 44,
       .tokens = 20,
       .vocab = 13,
       .bias = true,
       .chunk_rows = 0,
       .loss_bound = 1e-4},
      {.label = "direct-all-ignored", .seed = 45, .tokens = 16, .ignore_fraction = 1.0, .chunk_rows = 0},
  };
  for (const Case &c : cases) {
    for (bool direct : {true, false}) {
      INFO((direct ? "direct" : "accumulator") << " path");
      for (Pass pass : {Pass::full, Pass::forward}) {
        // The path taken shows in the workspace: a direct plan holds no
        // grad W accumulator (chunk_plan.hpp).
        const gpu::fused::ChunkShape shape = chunk_shape(c, direct);
        CHECK(gpu::fused::direct_plan(shape, c.tokens) == (direct && 8 * c.tokens <= c.vocab));
        auto impl =
            make_fused(FusedOptions{.plan = {.chunk_rows = c.chunk_rows, .direct_single_chunk = direct}});
        check_implementation(*impl, c, pass, [&](Implementation &prepared) {
          CHECK(prepared.memory().workspace_bytes == gpu::fused::workspace_bytes(shape, c.tokens));
          CHECK(prepared.run_labels()
                    .find("grad_weight_path")
                    ->as_string()
                    .starts_with(gpu::fused::direct_plan(shape, c.tokens) ? "direct" : "fp32 accumulator"));
        });
      }
    }
  }
}

TEST_CASE("fused: repeated runs are bit-identical and every output is rewritten", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  const Workload w = make_workload(Case{.label = "repeat", .seed = 17, .ignore_fraction = 0.1, .bias = true});
  InputSet inputs(w);
  auto impl = make_fused(FusedOptions{.plan = {.chunk_rows = 11}});
  impl->prepare(w, inputs);

  impl->run(Pass::full);
  const OutputView first = impl->outputs();
  const double loss = first.loss;
  const auto grad_x = device_bytes(first.grad_student_input);
  const auto grad_w = device_bytes(first.grad_student_weight);
  const auto grad_b = device_bytes(first.grad_student_bias);

  impl->poison_outputs();
  {
    const OutputView poisoned = impl->outputs();
    CHECK(std::isnan(poisoned.loss));
    for (const TensorRef *t :
         {&poisoned.grad_student_input, &poisoned.grad_student_weight, &poisoned.grad_student_bias}) {
      const ErrorStats e = gpu::compare_device("poisoned", *t, *t);
      CHECK(e.nonfinite == t->count);
    }
  }
  impl->run(Pass::full);
  const OutputView second = impl->outputs();
  CHECK(second.loss == loss);
  CHECK(device_bytes(second.grad_student_input) == grad_x);
  CHECK(device_bytes(second.grad_student_weight) == grad_w);
  CHECK(device_bytes(second.grad_student_bias) == grad_b);
}

TEST_CASE("fused: memory accounting matches the chunk plan", "[gpu][fused]") {
  if (skip_without_gpu()) return;
  const Case c{.label = "memory", .seed = 18, .tokens = 40, .vocab = 1000, .bias = true, .chunk_rows = 12};
  const Workload w = make_workload(c);
  InputSet inputs(w);
  auto impl = make_fused(FusedOptions{.plan = {.chunk_rows = c.chunk_rows}});
  impl->prepare(w, inputs);
  impl->run(Pass::full);
  const MemoryUse use = impl->memory();
  const gpu::fused::ChunkShape shape = chunk_shape(c, true); // FusedOptions' default
  CHECK(use.workspace_bytes == gpu::fused::workspace_bytes(shape, c.chunk_rows));
  // The record's labels say the same plan, and which GEMM algorithms ran.
  const json::Object labels = impl->run_labels();
  REQUIRE(labels.contains("chunks"));
  CHECK(labels.find("chunks")->as_string() == "4"); // 40 rows in chunks of 12
  CHECK(labels.find("chunk_rows")->as_string() == "12");
  CHECK(labels.find("grad_weight_path")->as_string().starts_with("fp32 accumulator"));
  CHECK(labels.find("row_kernel")->as_string() == gpu::fused::RowKernel{}.name);
  CHECK(labels.find("row_kernel")->as_string() ==
        "v6c: 1x128, 1x256 or 1x512 where a pass reads each vector once (the most rows an SM its rows fill), "
        "1x1024 where rows fill the SMs and re-reads fit L2, else 2x1024");
  REQUIRE(labels.contains("gemm_tuning"));
  REQUIRE(labels.contains("gemm_1")); // tuning on: every shape it met is listed
  CHECK(labels.find("gemm_1")->as_string().find("heuristic rank") != std::string::npos);
  json::Object record{{"implementation", "fused"}};
  CHECK_NOTHROW(add_run_labels(record, labels, "fused")); // all valid as BenchmarkRun labels
  // Inputs as stored, each of the 7 buffers rounded up to the allocator's 512 bytes.
  CHECK(use.input_bytes >= cpu::planned_input_bytes(w));
  CHECK(use.input_bytes <= cpu::planned_input_bytes(w) + 7 * 512);
  CHECK(use.output_bytes >= 2 * std::uint64_t(40 * 64 + 1000 * 64) + 4 * 1000 + 8);
  CHECK(use.peak_bytes >= use.input_bytes + use.output_bytes + use.workspace_bytes);
  impl->release();
  CHECK(impl->memory().workspace_bytes == 0);
}

TEST_CASE("fused-lean is registered as a GPU implementation", "[gpu][fused]") {
  const RegisteredImplementation *r = find_implementation("fused-lean");
  REQUIRE(r != nullptr);
  CHECK(r->needs_gpu);
  CHECK_FALSE(r->is_oracle);
  auto impl = r->make();
  CHECK(impl->name() == "fused-lean");
  CHECK(implementation_manifest(impl->revision()).find("metadata")->find("name")->as_string() ==
        "kibench-fused-lean");
}

TEST_CASE("fused is registered as a GPU implementation", "[gpu][fused]") {
  const RegisteredImplementation *r = find_implementation("fused");
  REQUIRE(r != nullptr);
  CHECK(r->needs_gpu);
  CHECK_FALSE(r->is_oracle);
  auto impl = r->make();
  CHECK(impl->name() == "fused");
  CHECK(impl->needs_gpu());
  if (skip_without_gpu()) return;
  Workload too_wide = make_workload(Case{.label = "wide", .vocab = 4'000'000});
  const auto why = impl->unsupported(too_wide);
  REQUIRE(why.has_value());
  CHECK(why->find("vocabulary") != std::string::npos);
}
