// NCCL, loaded at run time with dlopen, as NVML is (nvml.hpp): kibench does
// not link it, so build machines and CI need no NCCL, and a GPU machine
// uses the one its PyTorch installed (the nvidia-nccl wheel) or any other.
// Only the calls a single process driving several GPUs needs are resolved:
// ncclCommInitAll, grouped ncclAllReduce on fp32, the error strings.
//
// Where the library is looked for, in order (the first that loads wins):
//   $KIBENCH_NCCL_LIBRARY (a path; when set, the only place looked),
//   libnccl.so.2 as the dynamic loader finds it (LD_LIBRARY_PATH, a copy
//     already loaded into the process, e.g. by torch),
//   nvidia/nccl/lib/libnccl.so.2 under the Python package folders of
//     /usr/local/lib, /usr/lib, $VIRTUAL_ENV/lib and ~/.local/lib.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace kibench::gpu {

class Nccl {
public:
  // The process-wide instance; throws std::runtime_error naming every
  // place looked, when no NCCL loads.
  static const Nccl &instance();
  // The same without throwing: nullptr, and the reason in `why`.
  static const Nccl *find(std::string &why);
  // A fresh load by the search above (tests; instance() caches one).
  static std::unique_ptr<Nccl> load(std::string &why);

  ~Nccl();
  Nccl(const Nccl &) = delete;
  Nccl &operator=(const Nccl &) = delete;

  // "2.27.7" (nccl_version_string of ncclGetVersion's code).
  [[nodiscard]] std::string version() const;
  // The file it was loaded from.
  [[nodiscard]] const std::string &path() const { return path_; }

  using Comm = void *; // ncclComm_t
  enum class Op { sum, max };

  // One communicator per listed CUDA device, rank i on devices[i]
  // (ncclCommInitAll). Throws with NCCL's reason.
  [[nodiscard]] std::vector<Comm> init_all(const std::vector<int> &devices) const;
  void destroy(Comm comm) const noexcept;
  // In-place all-reduce of `count` floats of every rank, each on its
  // rank's stream, as one NCCL group: buffers[i] on comms[i]'s device.
  void all_reduce(const std::vector<Comm> &comms, const std::vector<float *> &buffers,
                  const std::vector<cudaStream_t> &streams, std::size_t count, Op op) const;
  // An error an earlier asynchronous operation of `comm` left, or "".
  [[nodiscard]] std::string async_error(Comm comm) const;

  struct Api; // resolved entry points (nccl.cpp)

private:
  Nccl(std::unique_ptr<Api> api, std::string path);
  std::unique_ptr<Api> api_;
  std::string path_;
};

// The NCCL version string, or "" where none loads (environment manifests).
std::string nccl_version_if_loadable();

// "X.Y.Z" from a version code as ncclGetVersion gives it (nccl.h's
// NCCL_VERSION): X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
[[nodiscard]] std::string nccl_version_string(int code);

// The nccl.h values the loader passes (nccl.h is not needed to build; the
// tests check these against it where it is installed). Its enums are C
// enums, passed as int.
namespace nccl_abi {
inline constexpr int kSuccess = 0; // ncclResult_t ncclSuccess
inline constexpr int kFloat32 = 7; // ncclDataType_t ncclFloat32
inline constexpr int kSum = 0;     // ncclRedOp_t ncclSum
inline constexpr int kMax = 2;     // ncclRedOp_t ncclMax
// The entry points as the loader declares them: nccl.h's prototypes with
// those enums as int and ncclComm_t as void *.
using GetVersion = int (*)(int *);
using CommInitAll = int (*)(void **, int, const int *);
using CommDestroy = int (*)(void *);
using AllReduce = int (*)(const void *, void *, std::size_t, int, int, void *, cudaStream_t);
using GroupStart = int (*)();
using GroupEnd = int (*)();
using GetErrorString = const char *(*)(int);
using CommGetAsyncError = int (*)(void *, int *);
} // namespace nccl_abi

// The variables whose values a multi-GPU run's environment manifest
// records: they change which transports and algorithms NCCL uses.
inline constexpr const char *kNcclVariablesRecorded[] = {
    "NCCL_NVLS_ENABLE", "NCCL_ALGO", "NCCL_PROTO", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",  "NCCL_NET",  "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "CUDA_VISIBLE_DEVICES"};

} // namespace kibench::gpu
