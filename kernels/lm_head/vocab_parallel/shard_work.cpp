#include "kernels/lm_head/vocab_parallel/shard_work.hpp"

#include <stdexcept>

#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/scaled_convert.hpp"
#include "kernels/lm_head/vocab_parallel/shard_one_hot.hpp"

namespace kibench::vocab_parallel {

namespace {

using gpu::DeviceBuffer;
using bf16 = __nv_bfloat16;

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

} // namespace

ShardWork::ShardWork(const ShardLayout &layout, const Workload &workload, std::int64_t chunk_rows,
                     gpu::DeviceAllocator &allocator)
    : layout_(layout), workload_(&workload) {
  const std::int64_t R = chunk_rows, size = layout.shard.size(), Hs = workload.student_hidden;
  student_logits_ = DeviceBuffer<bf16>(allocator, count(R * layout.ld));
  teacher_logits_ = DeviceBuffer<bf16>(allocator, count(R * layout.ld));
  maxima_ = DeviceBuffer<float>(allocator, count(R * kMaximumSlots));
  sums_ = DeviceBuffer<float>(allocator, count(R * kSumSlots));
  kl_ = DeviceBuffer<float>(allocator, count(R * kKlSlots));
  grad_input_ = DeviceBuffer<float>(allocator, count(R * Hs));
  grad_weight_ = DeviceBuffer<float>(allocator, count(size * Hs));
  if (workload.student_bias) {
    grad_bias_ = DeviceBuffer<float>(allocator, count(size));
    student_bias_ = DeviceBuffer<bf16>(allocator, count(size));
  }
  if (workload.teacher_bias) teacher_bias_ = DeviceBuffer<bf16>(allocator, count(size));
}

void ShardWork::copy_bias_slices(const bf16 *student_bias, const bf16 *teacher_bias, int source_device,
                                 int own_device, cudaStream_t stream) {
  const std::int64_t b = layout_.shard.begin;
  for (auto [slice, whole] : {std::pair{&student_bias_, student_bias}, std::pair{&teacher_bias_, teacher_bias}}) {
    if (slice->empty()) continue;
    if (whole == nullptr) throw std::logic_error("ShardWork::copy_bias_slices: the workload's bias is missing");
    CUDA_CHECK(cudaMemcpyPeerAsync(slice->data(), own_device, whole + b, source_device, slice->bytes(), stream));
  }
}

void ShardWork::logits(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas, cudaStream_t stream) {
  const std::int64_t H = workload_->hidden, Hs = workload_->student_hidden, columns = layout_.shard.size();
  gpu::RowMajorGemm student = gpu::gemm_abt(rows, columns, Hs, inputs_.student_input + begin * Hs,
                                            inputs_.student_weight, student_logits_.data());
  student.ldc = layout_.ld;
  student.bias = student_bias_.empty() ? nullptr : student_bias_.data();
  gpu::matmul_aligned(blas, student, stream);
  gpu::RowMajorGemm teacher = gpu::gemm_abt(rows, columns, H, inputs_.teacher_input + begin * H,
                                            inputs_.teacher_weight, teacher_logits_.data());
  teacher.ldc = layout_.ld;
  teacher.bias = teacher_bias_.empty() ? nullptr : teacher_bias_.data();
  gpu::matmul_aligned(blas, teacher, stream);
}

ShardRowArgs ShardWork::row_args(std::int64_t begin, std::int64_t rows) {
  const Workload &w = *workload_;
  ShardRowArgs a;
  a.student_logits = student_logits_.data();
  a.teacher_logits = teacher_logits_.data();
  a.rows = rows;
  a.columns = layout_.shard.size();
  a.ld = layout_.ld;
  a.column_begin = layout_.shard.begin;
  a.vocab = w.vocab;
  a.target = inputs_.target + begin;
  a.student_input = inputs_.student_input + begin * w.student_hidden;
  a.student_weight = inputs_.student_weight;
  a.student_bias = student_bias_.empty() ? nullptr : student_bias_.data();
  a.student_hidden = w.student_hidden;
  a.maxima = maxima_.data();
  a.sums = sums_.data();
  a.kl = kl_.data();
  a.beta = w.scalars.beta;
  a.temperature = w.scalars.temperature;
  a.weight_hard = w.scalars.weight_hard;
  a.weight_soft = w.scalars.weight_soft;
  a.ignore_index = w.scalars.ignore_index;
  return a;
}

void ShardWork::grad_input_partial(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas,
                                   cudaStream_t stream) {
  const Workload &w = *workload_;
  const std::int64_t Hs = w.student_hidden, columns = layout_.shard.size();
  gpu::RowMajorGemm dx =
      gpu::gemm_ab(rows, Hs, columns, student_logits_.data(), inputs_.student_weight, grad_input_.data());
  dx.lda = layout_.ld;
  dx.output_type = ElementType::fp32;
  gpu::matmul_aligned(blas, dx, stream);
  // The rank holding y_i adds the one-hot term of grad x row i.
  subtract_shard_one_hot_input(grad_input_.data(), inputs_.target + begin, rows, w.vocab, w.scalars.ignore_index,
                               layout_.shard.begin, layout_.shard.end, inputs_.student_weight, Hs,
                               static_cast<float>(w.scalars.weight_hard), stream);
}

void ShardWork::grad_weight(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas, cudaStream_t stream) {
  const std::int64_t Hs = workload_->student_hidden, columns = layout_.shard.size();
  const bf16 *g = student_logits_.data();
  const double beta = begin == 0 ? 0.0 : 1.0;
  gpu::RowMajorGemm dw =
      gpu::gemm_atb(columns, Hs, rows, g, inputs_.student_input + begin * Hs, grad_weight_.data());
  dw.lda = layout_.ld;
  dw.output_type = ElementType::fp32;
  dw.beta = beta;
  gpu::matmul_aligned(blas, dw, stream);
  if (!grad_bias_.empty()) {
    gpu::RowMajorGemm db = gpu::gemm_ab(1, columns, rows, inputs_.ones, g, grad_bias_.data());
    db.ldb = layout_.ld;
    db.output_type = ElementType::fp32;
    db.beta = beta;
    gpu::matmul_aligned(blas, db, stream);
  }
}

void ShardWork::finish(const gpu::fused::TargetOrder &order, std::int64_t tokens,
                       const gpu::TokenCount *token_count, bf16 *grad_weight_rows, float *grad_bias_rows,
                       cudaStream_t stream) {
  const Workload &w = *workload_;
  const std::int64_t Hs = w.student_hidden, size = layout_.shard.size();
  subtract_shard_one_hot_weight(order, tokens, layout_.shard.begin, layout_.shard.end, inputs_.student_input, Hs,
                                static_cast<float>(w.scalars.weight_hard), grad_weight_.data(),
                                grad_bias_.empty() ? nullptr : grad_bias_.data(), stream);
  gpu::fused::scale_to_bf16(grad_weight_.data(), grad_weight_rows, size * Hs, token_count, stream);
  if (grad_bias_.empty()) return;
  if (grad_bias_rows == nullptr) throw std::logic_error("ShardWork::finish: no grad b output for a bias");
  CUDA_CHECK(cudaMemcpyAsync(grad_bias_rows, grad_bias_.data(), grad_bias_.bytes(), cudaMemcpyDeviceToDevice,
                             stream));
  gpu::fused::scale_in_place(grad_bias_rows, size, token_count, stream);
}

} // namespace kibench::vocab_parallel
