#include "kernels/lm_head/lm_head_implementation.hpp"
#include "kernels/lm_head/oracle/oracle_fp64.hpp"
#include "kernels/builtin_revision.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/lm_head/oracle/oracle_kernels.hpp"

namespace kibench {

namespace gpu {

namespace {

constexpr std::uint64_t kChunkBytes = std::uint64_t{4} << 30;

std::uint64_t oracle_peak_bytes(const Workload &w) {
  const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
  const auto H = static_cast<std::uint64_t>(w.hidden), Hs = static_cast<std::uint64_t>(w.student_hidden);
  const std::uint64_t biases = (w.student_bias ? V : 0) + (w.teacher_bias ? V : 0);
  const std::uint64_t widened = 8 * (T * Hs + V * Hs + T * H + V * H + biases);
  const std::uint64_t gradients = 8 * (T * Hs + V * Hs + (w.student_bias ? V : 0));
  const std::uint64_t chunks = 2 * 8 * static_cast<std::uint64_t>(oracle_chunk_rows(w)) * V;
  return cpu::planned_input_bytes(w) + widened + gradients + chunks + 16 * T +
         CublasLt::kDefaultWorkspaceBytes;
}

class OracleFp64 final : public LmHeadImplementation {
public:
  OracleFp64() : LmHeadImplementation("oracle-fp64") {}
  ~OracleFp64() override { release(); }


  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision({.name = "oracle-fp64",
                          .title = "Distillation JSD loss · fp64 oracle (CUDA)",
                          .description = "The loss and student gradients of docs/loss-math.md in fp64 on the "
                                         "GPU: widened inputs, fp64 cuBLASLt GEMMs over token chunks, fp64 "
                                         "row reductions. The reference the GPU implementations are checked "
                                         "against when the CPU oracle is too slow.",
                          .source_path = "kernels/lm_head/oracle/oracle_fp64.cpp",
                          .symbol = "kibench::make_oracle_fp64"});
  }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return device_fit("oracle-fp64", oracle_peak_bytes(w));
  }

  void poison_outputs() override {
    loss_ = std::numeric_limits<double>::quiet_NaN();
    poison(grad_x_, grad_w_, grad_b_);
  }

  void run(Pass pass) override {
    require_prepared();
    with_gradients_ = pass != Pass::forward;
    const DeviceInputs &in = inputs();
    oracle::count_valid(in.target.data(), T_, scalars_.ignore_index, valid_.data(), stream().get());
    long long valid = 0;
    CUDA_CHECK(cudaMemcpyAsync(&valid, valid_.data(), sizeof(valid), cudaMemcpyDeviceToHost, stream().get()));
    stream().synchronize();
    const double inv_valid = 1.0 / static_cast<double>(std::max<long long>(valid, 1));

    for (std::int64_t first = 0; first < T_; first += rows_) {
      const std::int64_t rows = std::min(rows_, T_ - first);
      const double *x_s = x_s_.data() + first * Hs_;
      logits(x_s, w_s_.data(), b_s_, Hs_, rows, z_s_.data());
      logits(x_t_.data() + first * H_, w_t_.data(), b_t_, H_, rows, z_t_.data());
      oracle::RowLossParams params;
      params.rows = rows;
      params.vocab = V_;
      params.beta = scalars_.beta;
      params.temperature = scalars_.temperature;
      params.weight_hard = scalars_.weight_hard;
      params.weight_soft = scalars_.weight_soft;
      params.ignore_index = scalars_.ignore_index;
      params.inv_valid = inv_valid;
      params.write_grad = with_gradients_;
      oracle::row_loss(z_s_.data(), z_t_.data(), in.target.data() + first, params, ce_.data() + first,
                       soft_.data() + first, stream().get());
      if (!with_gradients_) continue;
      // z_s now holds G for these rows.
      RowMajorGemm gx = gemm_ab(rows, Hs_, V_, z_s_.data(), w_s_.data(), grad_x_.data() + first * Hs_);
      gx.input_type = gx.output_type = ElementType::fp64;
      blas_->matmul(gx, stream().get());
      RowMajorGemm gw = gemm_atb(V_, Hs_, rows, z_s_.data(), x_s, grad_w_.data());
      gw.input_type = gw.output_type = ElementType::fp64;
      gw.beta = first == 0 ? 0.0 : 1.0;
      blas_->matmul(gw, stream().get());
      if (!grad_b_.empty())
        oracle::column_sum(z_s_.data(), grad_b_.data(), rows, V_, first != 0, stream().get());
    }

    // The loss: the per-row terms summed on the host in token order.
    std::vector<double> ce(static_cast<std::size_t>(T_)), soft(static_cast<std::size_t>(T_));
    CUDA_CHECK(cudaMemcpyAsync(ce.data(), ce_.data(), ce_.bytes(), cudaMemcpyDeviceToHost, stream().get()));
    CUDA_CHECK(
        cudaMemcpyAsync(soft.data(), soft_.data(), soft_.bytes(), cudaMemcpyDeviceToHost, stream().get()));
    stream().synchronize();
    double ce_sum = 0.0, soft_sum = 0.0;
    for (std::size_t i = 0; i < ce.size(); ++i) {
      ce_sum += ce[i];
      soft_sum += soft[i];
    }
    loss_ = (scalars_.weight_hard * ce_sum + scalars_.weight_soft * soft_sum) * inv_valid;
  }

  OutputView outputs() override {
    stream().synchronize();
    return output_view(loss_, with_gradients_, grad_x_, grad_w_, grad_b_);
  }

private:
  void prepare_device(const Workload &w) override {
    T_ = w.tokens, V_ = w.vocab, H_ = w.hidden, Hs_ = w.student_hidden;
    scalars_ = w.scalars;
    rows_ = oracle_chunk_rows(w);
    blas_ = std::make_unique<CublasLt>(allocator());
    const auto widen = [&](const DeviceBuffer<__nv_bfloat16> &in) {
      DeviceBuffer<double> out(allocator(), in.size(), MemoryTag::workspace);
      oracle::widen(in.data(), out.data(), static_cast<std::int64_t>(in.size()), stream().get());
      return out;
    };
    x_s_ = widen(inputs().student_input);
    w_s_ = widen(inputs().student_weight);
    x_t_ = widen(inputs().teacher_input);
    w_t_ = widen(inputs().teacher_weight);
    if (inputs().has_student_bias()) b_s_ = widen(inputs().student_bias);
    if (inputs().has_teacher_bias()) b_t_ = widen(inputs().teacher_bias);
    const auto count = [](std::int64_t a, std::int64_t b = 1) { return static_cast<std::size_t>(a * b); };
    z_s_ = DeviceBuffer<double>(allocator(), count(rows_, V_), MemoryTag::workspace);
    z_t_ = DeviceBuffer<double>(allocator(), count(rows_, V_), MemoryTag::workspace);
    ce_ = DeviceBuffer<double>(allocator(), count(T_), MemoryTag::workspace);
    soft_ = DeviceBuffer<double>(allocator(), count(T_), MemoryTag::workspace);
    valid_ = DeviceBuffer<long long>(allocator(), 1, MemoryTag::workspace);
    grad_x_ = DeviceBuffer<double>(allocator(), count(T_, Hs_), MemoryTag::output);
    grad_w_ = DeviceBuffer<double>(allocator(), count(V_, Hs_), MemoryTag::output);
    if (inputs().has_student_bias())
      grad_b_ = DeviceBuffer<double>(allocator(), count(V_), MemoryTag::output);
    stream().synchronize();
  }

  void release_device() override {
    for (DeviceBuffer<double> *b :
         {&x_s_, &w_s_, &x_t_, &w_t_, &b_s_, &b_t_, &z_s_, &z_t_, &ce_, &soft_, &grad_x_, &grad_w_, &grad_b_})
      b->reset();
    valid_.reset();
    blas_.reset();
  }

  // out[rows, V] = x[rows, width] · Wᵀ (+ b), all fp64.
  void logits(const double *x, const double *w, const DeviceBuffer<double> &bias, std::int64_t width,
              std::int64_t rows, double *out) {
    RowMajorGemm g = gemm_abt(rows, V_, width, x, w, out);
    g.input_type = g.output_type = ElementType::fp64;
    blas_->matmul(g, stream().get());
    if (!bias.empty()) oracle::add_row_bias(out, bias.data(), rows, V_, stream().get());
  }

  std::int64_t T_ = 0, V_ = 0, H_ = 0, Hs_ = 0, rows_ = 0;
  LossScalars scalars_;
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<double> x_s_, w_s_, x_t_, w_t_, b_s_, b_t_; // widened inputs
  DeviceBuffer<double> z_s_, z_t_;                         // one chunk of logits (z_s becomes G)
  DeviceBuffer<double> ce_, soft_;                         // per-token CE_i and J_i
  DeviceBuffer<long long> valid_;
  DeviceBuffer<double> grad_x_, grad_w_, grad_b_;
  double loss_ = std::numeric_limits<double>::quiet_NaN();
  bool with_gradients_ = true;
};

} // namespace

std::int64_t oracle_chunk_rows(const Workload &w) {
  const auto row_bytes = static_cast<std::uint64_t>(2 * 8 * w.vocab);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(kChunkBytes / row_bytes), 1,
                                  std::max<std::int64_t>(w.tokens, 1));
}

} // namespace gpu

std::unique_ptr<Implementation> make_oracle_fp64() {
  return std::make_unique<gpu::OracleFp64>();
}

} // namespace kibench
