#include "kernels/cuda/tensor_map.hpp"

#include <stdexcept>

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 function = [] {
    void *pointer = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pointer, 12000, cudaEnableDefault,
                                                &found));
    if (found != cudaDriverEntryPointSuccess || pointer == nullptr)
      throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs driver 12.0+)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pointer);
  }();
  return function;
}

} // namespace

bool can_map_bf16(const void *base, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && (ld * 2) % 16 == 0;
}

CUtensorMap bf16_tensor_map(const void *base, std::int64_t rows, std::int64_t columns, std::int64_t ld,
                            int box_rows) {
  if (!can_map_bf16(base, ld) || rows <= 0 || columns <= 0 || ld < columns || box_rows <= 0 || box_rows > 256)
    throw std::invalid_argument(
        fmt::format("bf16_tensor_map: [{}, {}] with ld {} in boxes of {} rows is not a TMA tensor", rows,
                    columns, ld, box_rows));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2}; // bytes between rows
  const cuuint32_t box[2] = {kTensorMapBoxColumns, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status =
      encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(base), dims, strides, box,
                     element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    throw std::runtime_error(fmt::format("cuTensorMapEncodeTiled failed ({}) for [{}, {}] ld {}",
                                         static_cast<int>(status), rows, columns, ld));
  return map;
}

} // namespace kibench::gpu
