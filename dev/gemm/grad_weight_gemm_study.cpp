// The study of kibench's grad W GEMM (grad_weight_gemm.hpp: D = C + G'ᵀ X,
// both operands MN-major, the fp32 accumulator read during the mainloop)
// beside cuBLASLt's beta = 1 GEMM, the one fused runs today. Hidden; on a
// GPU machine:
//   build/dev/kibench_dev "[gpu-perf-gemm-mn]"
// docs/perf-log.md, 2026-12-05, holds the prediction and the outcome on the
// H200: bit-identical to cuBLASLt on every shape, 1.18-1.34x slower on the
// 987- and 2816-row chunks (measured, rejected as a grad W path).
//
// Shapes (V, Hs, R): (1000, 64, 33), every tail at once (V not a multiple
// of 128, Hs half a tile, R not a multiple of 64); (50257, 512, 987), an odd
// vocabulary whose G' rows are padded to 50304 columns as fused's logit
// buffer is; (128256, 2048, 987) and (128256, 2048, 2816), fused-lean's and
// fused's chunks at the seed; (128256, 2048, 296), fused-lean's last chunk.
// Random operands with fixed seeds: G' and X uniform in [-1, 1) rounded to
// bf16, C uniform in ±sqrt(R) / 2 (the product's own size, so neither term
// hides the other), G''s padding columns NaN (never read) and, in the first
// case, C's rows padded by 8 columns of a sentinel (never written).
//
// Correctness first, for each shape: kibench's GEMM in place (C = D, as
// fused accumulates; clusters of 2 and of 1, which must agree bit for bit)
// against cuBLASLt's beta = 1 GEMM on the same operands (through
// matmul_aligned, as fused calls it) and against an fp64 host sum, in
// full for the first shape and at 4096 sampled elements (corners and tile
// edges among them) for the others; on the first shape also out of place
// and without C. The error of an element is measured against
//   M[v, h] = Σ_r |G'[r, v]| · |X[r, h]| + |C[v, h]|,
// the size of the terms it sums (computed by cuBLASLt from |G'|, |X| and
// |C| for the full comparison, in fp64 for the samples): cancellation can
// make the sum itself arbitrarily small, M not. The bound, and why: every
// product of two bf16 values is exact in fp32 (8 + 8 significant bits);
// each of the R products and C enters the fp32 result through at most two
// roundings or truncations (aligned to the largest term of its 16-wide K
// step inside the tensor core, then the step's sum added to the
// accumulator), each off by at most one unit in the last place of a
// partial sum no larger than M, 2^-23 · M. So one fp32 evaluation, in any
// order, is within 2 (R + 1) · 2^-23 · M of the exact sum (2.4e-4 · M at
// R = 987, 6.7e-4 at R = 2816), and two of them (kibench's and
// cuBLASLt's) within twice that (4.7e-4 and 1.3e-3). A wrong layout,
// descriptor or tail is off by O(M). (Both sum K in 64-wide blocks of 16-wide steps and add C
// last, so they may well agree bit for bit, as the logit GEMM does with
// cuBLASLt; the study prints the share of identical elements.)
//
// Then timing, per shape: cold medians of 25 samples (L2 flushed before
// each, CUDA events; the variants in a rotated order each round) of
// kibench's GEMM in clusters of 2 and of 1 and cuBLASLt (tuned as fused
// tunes: the fastest of its first 16 heuristic picks), each with beta = 1,
// and kibench's and cuBLASLt's without C (beta = 0): ms, TFLOP/s, the
// median SM clock, the ratio to cuBLASLt's beta = 1, and the prediction.
//
// The prediction (docs/perf-log.md, 2026-12-05): if the accumulator's traffic
// hides under the products, a chunk takes its FLOPs at the rate kibench's
// logit GEMM measured (gemm-v3, 2816 x 128256 x 2048 in 2.087 ms cold:
// 709 TFLOP/s), unless its bytes (8 a C element, G' and X once) take
// longer at copy-floor's 3.93 TB/s:
//   R = 987:  0.731 ms (bytes 0.60 ms) against cuBLASLt's 0.932 (two
//             halves of 0.466 ms, run labels of fused-lean, 2026-12-04)
//   R = 2816: 2.087 ms against 2.070 (0.72 ms of bytes): no gain
//   R = 296:  bound by its bytes, 0.55 ms against 0.778.
// fused-lean's pass (chunk 1 beta = 0 on cuBLASLt, 0.704 ms; seven 987-row
// chunks; one of 296) would spend 6.38 ms instead of 8.01 in grad W:
// −1.6 ms of the 3.8 ms it runs behind fused; fused itself gains nothing
// (its 2816- and 2560-row chunks already hide the accumulator).
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "dev/gemm/grad_weight_gemm.hpp"
#include "dev/perf/samples.hpp"
#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "lib/inputs/bf16.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::gpu;
namespace gw = kibench::dev::gemm;

namespace {

// kibench's logit GEMM's measured rate (gemm-v3, 128 x 256 tiles, cold,
// 2816 x 128256 x 2048 in 2.087 ms; docs/perf-log.md, "kibench's logit GEMM
// under Nsight Compute") and copy-floor's bandwidth (12.9 GB in 3.28 ms;
// docs/perf-log.md, "jsd: one streaming row kernel").
constexpr double kProductRate = 709e12; // FLOP/s
constexpr double kCopyRate = 3.93e12;   // bytes/s

struct Case {
  std::int64_t vocab, hidden, rows;
  std::int64_t ldc_padding; // columns of C past Hs, holding a sentinel
};

// The operands of one case on the host: G' [R, ldg] bf16 bits (columns
// past V NaN), X [R, Hs] bf16 bits, C [V, ldc] fp32 (columns past Hs the
// sentinel).
struct HostOperands {
  std::int64_t vocab = 0, hidden = 0, rows = 0, ldg = 0, ldc = 0;
  std::vector<std::uint16_t> g, x;
  std::vector<float> c;
};

constexpr float kSentinel = -12345.0f;
constexpr std::uint16_t kNanBf16 = 0x7FC0;

// Uniform in [-1, 1) from (seed, index), 24 random bits: splitmix64.
double uniform(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 40) * (2.0 / 16777216.0) - 1.0;
}

HostOperands make_operands(const Case &k, std::uint64_t seed) {
  HostOperands h;
  h.vocab = k.vocab;
  h.hidden = k.hidden;
  h.rows = k.rows;
  h.ldg = (k.vocab + 63) / 64 * 64; // fused's logit buffer stride
  h.ldc = k.hidden + k.ldc_padding;
  h.g.assign(static_cast<std::size_t>(h.rows * h.ldg), kNanBf16);
  for (std::int64_t r = 0; r < h.rows; ++r)
    for (std::int64_t v = 0; v < h.vocab; ++v)
      h.g[static_cast<std::size_t>(r * h.ldg + v)] =
          bf16::from_float(static_cast<float>(uniform(seed, static_cast<std::uint64_t>(r * h.vocab + v))));
  h.x.resize(static_cast<std::size_t>(h.rows * h.hidden));
  for (std::size_t i = 0; i < h.x.size(); ++i)
    h.x[i] = bf16::from_float(static_cast<float>(uniform(seed + 1, i)));
  const double scale = std::sqrt(static_cast<double>(h.rows)) / 2;
  h.c.assign(static_cast<std::size_t>(h.vocab * h.ldc), kSentinel);
  for (std::int64_t v = 0; v < h.vocab; ++v)
    for (std::int64_t j = 0; j < h.hidden; ++j)
      h.c[static_cast<std::size_t>(v * h.ldc + j)] =
          static_cast<float>(scale * uniform(seed + 2, static_cast<std::uint64_t>(v * h.hidden + j)));
  return h;
}

// The exact result at (v, j) in fp64, and M (the size of its terms); C
// left out where `with_c` is false.
struct Exact {
  double value, magnitude;
};

Exact exact_at(const HostOperands &h, std::int64_t v, std::int64_t j, bool with_c) {
  double sum = 0.0, size = 0.0;
  for (std::int64_t r = 0; r < h.rows; ++r) {
    const double term = bf16::to_double(h.g[static_cast<std::size_t>(r * h.ldg + v)]) *
                        bf16::to_double(h.x[static_cast<std::size_t>(r * h.hidden + j)]);
    sum += term;
    size += std::abs(term);
  }
  if (with_c) {
    const double c = h.c[static_cast<std::size_t>(v * h.ldc + j)];
    sum += c;
    size += std::abs(c);
  }
  return {sum, size};
}

// One fp32 evaluation of an element of G'ᵀ X + C in any order: within
// 2 (R + 1) · 2^-23 · M of the exact sum (the file's header says why).
double single_bound(std::int64_t rows) {
  return 2.0 * static_cast<double>(rows + 1) * std::ldexp(1.0, -23);
}

// max |a − b| / M over the elements of a [V, ldc] pair below Hs, and the
// share of elements equal bit for bit; a NaN or infinity anywhere gives
// +inf. M = 0 (all terms zero) needs a == b.
struct Agreement {
  double largest = 0.0, identical = 0.0;
};

Agreement compare(const std::vector<float> &a, const std::vector<float> &b,
                  const std::vector<float> &magnitude, std::int64_t vocab, std::int64_t hidden,
                  std::int64_t ldc) {
  Agreement out;
  std::int64_t same = 0;
  for (std::int64_t v = 0; v < vocab; ++v)
    for (std::int64_t j = 0; j < hidden; ++j) {
      const auto i = static_cast<std::size_t>(v * ldc + j);
      if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return {std::numeric_limits<double>::infinity(), 0.0};
      if (std::bit_cast<std::uint32_t>(a[i]) == std::bit_cast<std::uint32_t>(b[i])) ++same;
      const double diff = std::abs(static_cast<double>(a[i]) - b[i]);
      const double m = magnitude[i];
      if (diff > 0.0)
        out.largest = std::max(out.largest, m > 0.0 ? diff / m : std::numeric_limits<double>::infinity());
    }
  out.identical = static_cast<double>(same) / static_cast<double>(vocab * hidden);
  return out;
}

// The elements checked against fp64: all of a small case, else corners,
// tile edges and pseudo-random ones.
std::vector<std::pair<std::int64_t, std::int64_t>> sample_elements(std::int64_t vocab, std::int64_t hidden) {
  std::vector<std::pair<std::int64_t, std::int64_t>> at;
  if (vocab * hidden <= 100000) {
    for (std::int64_t v = 0; v < vocab; ++v)
      for (std::int64_t j = 0; j < hidden; ++j) at.emplace_back(v, j);
    return at;
  }
  for (const std::int64_t v : {std::int64_t{0}, std::int64_t{63}, std::int64_t{64}, std::int64_t{127},
                               std::int64_t{128}, vocab - 1, vocab - 9, (vocab - 1) / 128 * 128})
    for (const std::int64_t j : {std::int64_t{0}, std::int64_t{7}, std::int64_t{63}, std::int64_t{64},
                                 std::int64_t{127}, std::int64_t{128}, hidden - 1, hidden - 8})
      at.emplace_back(v, j);
  for (std::uint64_t i = 0; at.size() < 4096; ++i) {
    const auto v = static_cast<std::int64_t>((uniform(99, 2 * i) + 1.0) / 2.0 * static_cast<double>(vocab));
    const auto j =
        static_cast<std::int64_t>((uniform(99, 2 * i + 1) + 1.0) / 2.0 * static_cast<double>(hidden));
    at.emplace_back(std::min(v, vocab - 1), std::min(j, hidden - 1));
  }
  return at;
}

// max |result − exact| / M over the sampled elements.
double against_exact(const HostOperands &h, const std::vector<float> &result, bool with_c) {
  double largest = 0.0;
  for (const auto &[v, j] : sample_elements(h.vocab, h.hidden)) {
    const Exact e = exact_at(h, v, j, with_c);
    const double r = result[static_cast<std::size_t>(v * h.ldc + j)];
    if (!std::isfinite(r)) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, std::abs(r - e.value) / e.magnitude);
  }
  return largest;
}

template <class T> std::vector<T> download(const DeviceBuffer<T> &buffer) {
  std::vector<T> host(buffer.size());
  CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

template <class T> void upload(DeviceBuffer<T> &buffer, const void *host) {
  CUDA_CHECK(cudaMemcpy(buffer.data(), host, buffer.bytes(), cudaMemcpyHostToDevice));
}

std::vector<std::uint16_t> absolute_bf16(const std::vector<std::uint16_t> &bits) {
  std::vector<std::uint16_t> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = bits[i] == kNanBf16 ? bits[i] : bits[i] & 0x7FFF;
  return out;
}

} // namespace

TEST_CASE("kibench's grad W GEMM (MN-major, accumulator read under the products) beside cuBLASLt",
          "[.][gpu-perf-gemm-mn]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  DeviceAllocator allocator("gemm-mn-study");
  CublasLt blas(allocator, fused::kCublasWorkspaceBytes);
  Stream stream;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const int sms = test::sm_count();
  L2Flush flush(allocator, device);
  fmt::print("\nresident CTAs: {} in clusters of 2, {} in clusters of 1\n",
             gw::grad_weight_gemm_resident_ctas(2, sms), gw::grad_weight_gemm_resident_ctas(1, sms));

  const Case cases[] = {{1000, 64, 33, 8},
                        {50257, 512, 987, 0},
                        {128256, 2048, 987, 0},
                        {128256, 2048, 2816, 0},
                        {128256, 2048, 296, 0}};
  std::vector<std::string> table;
  std::uint64_t seed = 2026;
  for (const Case &k : cases) {
    const std::string shape = fmt::format("{}x{}x{}", k.vocab, k.hidden, k.rows);
    INFO(shape);
    const HostOperands h = make_operands(k, seed += 16);
    const auto V = h.vocab, Hs = h.hidden, R = h.rows;
    DeviceBuffer<__nv_bfloat16> g(allocator, h.g.size()), g_abs(allocator, h.g.size()),
        x(allocator, h.x.size()), x_abs(allocator, h.x.size());
    DeviceBuffer<float> c(allocator, h.c.size()), c_abs(allocator, h.c.size());
    upload(g, h.g.data());
    upload(g_abs, absolute_bf16(h.g).data());
    upload(x, h.x.data());
    upload(x_abs, absolute_bf16(h.x).data());
    upload(c, h.c.data());
    {
      std::vector<float> a(h.c);
      for (float &value : a) value = value == kSentinel ? value : std::abs(value);
      upload(c_abs, a.data());
    }
    DeviceBuffer<float> ours(allocator, h.c.size()), ours_one(allocator, h.c.size()),
        theirs(allocator, h.c.size()), magnitude(allocator, h.c.size());

    const auto kibench_gemm = [&](float *out, const float *in, int cluster) {
      return gw::GradWeightGemm{.vocab = V,
                                .hidden = Hs,
                                .rows = R,
                                .g = g.data(),
                                .ldg = h.ldg,
                                .x = x.data(),
                                .ldx = Hs,
                                .c = in,
                                .d = out,
                                .ldc = h.ldc,
                                .cluster = cluster};
    };
    const auto cublas_gemm = [&](const void *a, const void *b, float *out, double beta) {
      RowMajorGemm dw = gemm_atb(V, Hs, R, a, b, out);
      dw.lda = h.ldg;
      dw.ldc = h.ldc;
      dw.output_type = ElementType::fp32;
      dw.beta = beta;
      return dw;
    };
    const auto reset = [&](DeviceBuffer<float> &buffer, const DeviceBuffer<float> &from) {
      CUDA_CHECK(cudaMemcpyAsync(buffer.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice, stream));
    };
    // cuBLASLt's algorithms chosen as fused chooses them (its beta = 1 runs
    // accumulate into `theirs`, which is reset before it counts).
    for (const double beta : {1.0, 0.0})
      blas.tune_during(kMeasuredTuning, stream, [&] {
        matmul_aligned(blas, cublas_gemm(g.data(), x.data(), theirs.data(), beta), stream);
      });

    // Correctness: in place, as fused accumulates.
    reset(ours, c);
    reset(ours_one, c);
    reset(theirs, c);
    reset(magnitude, c_abs);
    gw::grad_weight_gemm(kibench_gemm(ours.data(), ours.data(), 2), sms, stream);
    gw::grad_weight_gemm(kibench_gemm(ours_one.data(), ours_one.data(), 1), sms, stream);
    matmul_aligned(blas, cublas_gemm(g.data(), x.data(), theirs.data(), 1.0), stream);
    matmul_aligned(blas, cublas_gemm(g_abs.data(), x_abs.data(), magnitude.data(), 1.0), stream);
    stream.synchronize();
    const std::vector<float> d = download(ours), d_one = download(ours_one), ref = download(theirs),
                             m = download(magnitude);
    const Agreement lt = compare(d, ref, m, V, Hs, h.ldc);
    const double fp64 = against_exact(h, d, true);
    bool correct = true;
    const auto check = [&](bool ok, const std::string &what) {
      if (!ok) fmt::print("  {}: FAILED: {}\n", shape, what);
      CHECK(ok);
      correct = correct && ok;
    };
    check(lt.largest <= 2 * single_bound(R),
          fmt::format("against cuBLASLt {:.2e} · M, bound {:.2e}", lt.largest, 2 * single_bound(R)));
    check(fp64 <= single_bound(R),
          fmt::format("against fp64 {:.2e} · M, bound {:.2e}", fp64, single_bound(R)));
    check(std::equal(d.begin(), d.end(), d_one.begin(), d_one.end(),
                     [](float a, float b) {
                       return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
                     }),
          "clusters of 1 and 2 differ");
    if (k.ldc_padding > 0) {
      bool untouched = true;
      for (std::int64_t v = 0; v < V; ++v)
        for (std::int64_t j = Hs; j < h.ldc; ++j)
          untouched = untouched && d[static_cast<std::size_t>(v * h.ldc + j)] == kSentinel;
      check(untouched, "C's padding columns were written");
      // Out of place (C untouched, D as in place) and without C.
      DeviceBuffer<float> out(allocator, h.c.size());
      CUDA_CHECK(cudaMemsetAsync(out.data(), 0xFF, out.bytes(), stream));
      gw::grad_weight_gemm(kibench_gemm(out.data(), c.data(), 2), sms, stream);
      stream.synchronize();
      const std::vector<float> separate = download(out), c_after = download(c);
      bool same = true;
      for (std::int64_t v = 0; v < V; ++v)
        for (std::int64_t j = 0; j < Hs; ++j) {
          const auto i = static_cast<std::size_t>(v * h.ldc + j);
          same = same && std::bit_cast<std::uint32_t>(separate[i]) == std::bit_cast<std::uint32_t>(d[i]);
        }
      check(same, "out of place differs from in place");
      check(c_after == h.c, "out of place wrote C");
      gw::grad_weight_gemm(kibench_gemm(out.data(), nullptr, 2), sms, stream);
      stream.synchronize();
      const double product = against_exact(h, download(out), false);
      check(product <= single_bound(R), fmt::format("without C against fp64 {:.2e} · M", product));
    }
    fmt::print(
        "{:<22} agreement: cuBLASLt {:.2e} · M (bound {:.1e}, {:.1f} % bit-identical), fp64 {:.2e} · M "
        "(bound {:.1e}, {} elements)\n",
        shape, lt.largest, 2 * single_bound(R), 100.0 * lt.identical, fp64, single_bound(R),
        sample_elements(V, Hs).size());
    if (!correct) continue; // no timing for a wrong kernel

    // Timing: cold, interleaved, rotated.
    struct Variant {
      std::string name;
      std::function<void()> call;
      bool with_c;
    };
    const std::vector<Variant> variants = {
        {"kibench c2 beta=1",
         [&] { gw::grad_weight_gemm(kibench_gemm(ours.data(), ours.data(), 2), sms, stream); }, true},
        {"kibench c1 beta=1",
         [&] { gw::grad_weight_gemm(kibench_gemm(ours_one.data(), ours_one.data(), 1), sms, stream); }, true},
        {"cuBLASLt beta=1",
         [&] { matmul_aligned(blas, cublas_gemm(g.data(), x.data(), theirs.data(), 1.0), stream); }, true},
        {"kibench c2 beta=0",
         [&] { gw::grad_weight_gemm(kibench_gemm(ours.data(), nullptr, 2), sms, stream); }, false},
        {"cuBLASLt beta=0",
         [&] { matmul_aligned(blas, cublas_gemm(g.data(), x.data(), theirs.data(), 0.0), stream); }, false}};
    std::vector<std::vector<double>> ms(variants.size()), mhz(variants.size());
    CudaEventTimer timer(stream, device);
    constexpr int kRounds = 25;
    for (int round = 0; round < kRounds; ++round)
      for (std::size_t i = 0; i < variants.size(); ++i) {
        const std::size_t v = (i + static_cast<std::size_t>(round)) % variants.size();
        flush.flush(stream);
        timer.start();
        variants[v].call();
        timer.stop();
        ms[v].push_back(timer.elapsed_ns() * 1e-6);
        if (const auto clock = timer.clock_mhz()) mhz[v].push_back(*clock);
      }
    const double flops = 2.0 * static_cast<double>(V) * static_cast<double>(Hs) * static_cast<double>(R);
    const double reference_ms = dev::median(ms[2]);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const double bytes = (variants[v].with_c ? 8.0 : 4.0) * static_cast<double>(V * Hs) +
                           2.0 * static_cast<double>(R) * static_cast<double>(V + Hs);
      const double predicted = std::max(flops / kProductRate, bytes / kCopyRate) * 1e3;
      const double t = dev::median(ms[v]);
      table.push_back(fmt::format("{:<18} {:<18} {:>8.3f} {:>8.0f} {:>7.0f} {:>8.3f} {:>10.3f}", shape,
                                  variants[v].name, t, flops / t * 1e-9,
                                  mhz[v].empty() ? 0.0 : dev::median(mhz[v]), t / reference_ms, predicted));
    }
  }
  fmt::print("\n{:<18} {:<18} {:>8} {:>8} {:>7} {:>8} {:>10}\n", "V x Hs x R", "gemm", "cold ms", "TFLOP/s",
             "SM MHz", "÷ cuBLASLt", "predicted");
  for (const std::string &line : table) fmt::print("{}\n", line);
  fmt::print("(predicted: the FLOPs at {:.0f} TFLOP/s or the bytes at {:.2f} TB/s, whichever is longer; "
             "medians of 25 samples)\n",
             kProductRate * 1e-12, kCopyRate * 1e-12);
}

// What the study's host side computes, on the CPU: the support check, the
// default tile order, the fp64 reference and the comparison.
TEST_CASE("grad W GEMM study: the host side", "[gemm-mn-check]") {
  const auto aligned = reinterpret_cast<const void *>(std::uintptr_t{1} << 20);
  auto *out = reinterpret_cast<float *>(std::uintptr_t{2} << 20);
  const gw::GradWeightGemm seed_chunk{.vocab = 128256,
                                      .hidden = 2048,
                                      .rows = 987,
                                      .g = aligned,
                                      .ldg = 128256,
                                      .x = aligned,
                                      .ldx = 2048,
                                      .c = out,
                                      .d = out,
                                      .ldc = 2048};
  CHECK(gw::grad_weight_gemm_supported(seed_chunk));
  const auto with = [&](auto change) {
    gw::GradWeightGemm g = seed_chunk;
    change(g);
    return gw::grad_weight_gemm_supported(g);
  };
  CHECK(with([](gw::GradWeightGemm &g) { g.vocab = 50257, g.ldg = 50304; }));
  CHECK(with([](gw::GradWeightGemm &g) { g.rows = 1; }));
  CHECK(with([](gw::GradWeightGemm &g) { g.c = nullptr; }));
  CHECK(with([](gw::GradWeightGemm &g) { g.cluster = 1; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.hidden = 2044, g.ldx = 2048, g.ldc = 2048; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.vocab = 50257, g.ldg = 50257; })); // 16-byte rows
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.ldg = 128248; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.rows = 0; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.g = static_cast<const char *>(g.g) + 8; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.d = nullptr, g.c = nullptr; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.ldc = 2047; }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.ldc = 1024; }));
  CHECK_FALSE(
      with([](gw::GradWeightGemm &g) { g.d = reinterpret_cast<float *>(std::uintptr_t{(2 << 20) + 4}); }));
  CHECK_FALSE(with([](gw::GradWeightGemm &g) { g.cluster = 4; }));

  // X of a 987-row chunk (4 MB) fits the 24 MiB budget: one cluster row at
  // a time; 8192 rows of 8192 (128 MiB) do not: 24 MiB of G' panels, 12.
  CHECK(gw::grad_weight_gemm_group_rows(987, 2048) == 1);
  CHECK(gw::grad_weight_gemm_group_rows(2816, 2048) == 1);
  CHECK(gw::grad_weight_gemm_group_rows(8192, 8192) == 12);

  // D[v, h] = Σ_r G'[r, v] X[r, h] + C[v, h] on G' = [[1, -2], [3, 4]]
  // (R = 2, V = 2, padded to 64), X = [[0.5], [-1]], C = [[10], [-10]].
  HostOperands h;
  h.vocab = 2, h.hidden = 1, h.rows = 2, h.ldg = 64, h.ldc = 1;
  h.g.assign(128, kNanBf16);
  h.g[0] = bf16::from_float(1), h.g[1] = bf16::from_float(-2), h.g[64] = bf16::from_float(3),
  h.g[65] = bf16::from_float(4);
  h.x = {bf16::from_float(0.5f), bf16::from_float(-1)};
  h.c = {10, -10};
  const Exact first = exact_at(h, 0, 0, true), second = exact_at(h, 1, 0, true),
              product = exact_at(h, 1, 0, false);
  CHECK(first.value == 0.5 - 3 + 10);
  CHECK(first.magnitude == 0.5 + 3 + 10);
  CHECK(second.value == -1 - 4 - 10);
  CHECK(second.magnitude == 1 + 4 + 10);
  CHECK(product.value == -5);
  CHECK(against_exact(h, {7.5f, -15.0f}, true) == 0.0);
  CHECK(against_exact(h, {7.5f + 0.125f, -15.0f}, true) == Approx(0.125 / 13.5));
  CHECK(std::isinf(against_exact(h, {NAN, -15.0f}, true)));

  // The comparison: the largest |a − b| / M below Hs, the padding ignored.
  const std::vector<float> a = {1, 2, kSentinel, 3, 4, kSentinel}, b = {1, 2.5f, 0, 3, 4, 7},
                           m = {1, 5, 1, 1, 1, 1};
  const Agreement agreement = compare(a, b, m, 2, 2, 3);
  CHECK(agreement.largest == Approx(0.1));
  CHECK(agreement.identical == Approx(0.75));
  CHECK(std::isinf(compare({NAN, 2}, {1, 2}, {1, 1}, 1, 2, 2).largest));
}
