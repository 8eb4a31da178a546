#include "kernels/cuda/nccl.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

namespace kibench::gpu {

namespace {

// The few nccl.h values used (nccl.hpp).
using nccl_abi::kFloat32;
using nccl_abi::kMax;
using nccl_abi::kSuccess;
using nccl_abi::kSum;

constexpr const char *kSoname = "libnccl.so.2";

// nvidia/nccl/lib/libnccl.so.2 under the usual Python package folders.
std::vector<std::string> python_package_candidates() {
  namespace fs = std::filesystem;
  std::vector<fs::path> prefixes = {"/usr/local/lib", "/usr/lib"};
  if (const char *venv = std::getenv("VIRTUAL_ENV")) prefixes.emplace_back(fs::path(venv) / "lib");
  if (const char *home = std::getenv("HOME")) prefixes.emplace_back(fs::path(home) / ".local" / "lib");
  std::vector<std::string> out;
  for (const fs::path &prefix : prefixes) {
    std::error_code ec;
    if (!fs::is_directory(prefix, ec)) continue;
    for (const auto &entry : fs::directory_iterator(prefix, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("python3", 0) != 0) continue;
      for (const char *packages : {"dist-packages", "site-packages"}) {
        const fs::path candidate = entry.path() / packages / "nvidia" / "nccl" / "lib" / kSoname;
        if (fs::exists(candidate, ec)) out.push_back(candidate.string());
      }
    }
  }
  return out;
}

template <class F> bool resolve(void *library, const char *symbol, F &target) {
  target = reinterpret_cast<F>(dlsym(library, symbol));
  return target != nullptr;
}

} // namespace

struct Nccl::Api {
  void *library = nullptr;
  nccl_abi::GetVersion get_version = nullptr;
  nccl_abi::CommInitAll comm_init_all = nullptr;
  nccl_abi::CommDestroy comm_destroy = nullptr;
  nccl_abi::AllReduce all_reduce = nullptr;
  nccl_abi::GroupStart group_start = nullptr;
  nccl_abi::GroupEnd group_end = nullptr;
  nccl_abi::GetErrorString error_string = nullptr;
  nccl_abi::CommGetAsyncError comm_get_async_error = nullptr;

  ~Api() {
    if (library != nullptr) dlclose(library);
  }

  [[nodiscard]] std::string error(int status) const {
    const char *text = error_string != nullptr ? error_string(status) : nullptr;
    return text != nullptr ? text : fmt::format("NCCL error {}", status);
  }
};

Nccl::Nccl(std::unique_ptr<Api> api, std::string path) : api_(std::move(api)), path_(std::move(path)) {}

Nccl::~Nccl() = default;

std::unique_ptr<Nccl> Nccl::load(std::string &why) {
  std::vector<std::string> candidates;
  if (const char *forced = std::getenv("KIBENCH_NCCL_LIBRARY"); forced != nullptr && *forced != '\0') {
    candidates.emplace_back(forced);
  } else {
    candidates.emplace_back(kSoname);
    for (std::string &c : python_package_candidates()) candidates.push_back(std::move(c));
  }
  std::vector<std::string> failures;
  for (const std::string &candidate : candidates) {
    auto api = std::make_unique<Api>();
    api->library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api->library == nullptr) {
      const char *error = dlerror();
      failures.push_back(fmt::format("{} ({})", candidate, error != nullptr ? error : "not loadable"));
      continue;
    }
    const bool ok = resolve(api->library, "ncclGetVersion", api->get_version) &&
                    resolve(api->library, "ncclCommInitAll", api->comm_init_all) &&
                    resolve(api->library, "ncclCommDestroy", api->comm_destroy) &&
                    resolve(api->library, "ncclAllReduce", api->all_reduce) &&
                    resolve(api->library, "ncclGroupStart", api->group_start) &&
                    resolve(api->library, "ncclGroupEnd", api->group_end) &&
                    resolve(api->library, "ncclGetErrorString", api->error_string) &&
                    resolve(api->library, "ncclCommGetAsyncError", api->comm_get_async_error);
    if (!ok) {
      failures.push_back(fmt::format("{} (lacks an NCCL 2 entry point)", candidate));
      continue;
    }
    // The path the loader resolved, where it says (a bare soname otherwise).
    std::string path = candidate;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(api->get_version), &info) != 0 && info.dli_fname != nullptr)
      path = info.dli_fname;
    return std::unique_ptr<Nccl>(new Nccl(std::move(api), std::move(path)));
  }
  why = fmt::format("NCCL not found: tried {}; set KIBENCH_NCCL_LIBRARY to libnccl.so.2's path",
                    fmt::join(failures, ", "));
  return nullptr;
}

namespace {

struct Loaded {
  std::unique_ptr<Nccl> nccl;
  std::string why;
};

Loaded &loaded() {
  static Loaded instance = [] {
    Loaded l;
    l.nccl = Nccl::load(l.why);
    return l;
  }();
  return instance;
}

} // namespace

const Nccl *Nccl::find(std::string &why) {
  Loaded &l = loaded();
  why = l.why;
  return l.nccl.get();
}

const Nccl &Nccl::instance() {
  std::string why;
  const Nccl *nccl = find(why);
  if (nccl == nullptr) throw std::runtime_error(why);
  return *nccl;
}

std::string Nccl::version() const {
  int code = 0;
  if (const int status = api_->get_version(&code); status != kSuccess)
    throw std::runtime_error("ncclGetVersion: " + api_->error(status));
  return nccl_version_string(code);
}

std::vector<Nccl::Comm> Nccl::init_all(const std::vector<int> &devices) const {
  std::vector<Comm> comms(devices.size(), nullptr);
  if (const int status = api_->comm_init_all(comms.data(), static_cast<int>(devices.size()), devices.data());
      status != kSuccess)
    throw std::runtime_error(
        fmt::format("ncclCommInitAll over devices {}: {}", fmt::join(devices, ","), api_->error(status)));
  return comms;
}

void Nccl::destroy(Comm comm) const noexcept {
  if (comm != nullptr) (void)api_->comm_destroy(comm);
}

void Nccl::all_reduce(const std::vector<Comm> &comms, const std::vector<float *> &buffers,
                      const std::vector<cudaStream_t> &streams, std::size_t count, Op op) const {
  if (buffers.size() != comms.size() || streams.size() != comms.size())
    throw std::invalid_argument(fmt::format("Nccl::all_reduce: {} communicators, {} buffers, {} streams",
                                            comms.size(), buffers.size(), streams.size()));
  if (count == 0) return;
  const int nccl_op = op == Op::sum ? kSum : kMax;
  if (const int status = api_->group_start(); status != kSuccess)
    throw std::runtime_error("ncclGroupStart: " + api_->error(status));
  int first_failure = kSuccess;
  for (std::size_t r = 0; r < comms.size(); ++r) {
    const int status = api_->all_reduce(buffers[r], buffers[r], count, kFloat32, nccl_op, comms[r], streams[r]);
    if (status != kSuccess && first_failure == kSuccess) first_failure = status;
  }
  // The group is always closed, also after a failed call inside it.
  const int end = api_->group_end();
  if (first_failure != kSuccess) throw std::runtime_error("ncclAllReduce: " + api_->error(first_failure));
  if (end != kSuccess) throw std::runtime_error("ncclGroupEnd: " + api_->error(end));
}

std::string Nccl::async_error(Comm comm) const {
  int error = kSuccess;
  if (const int status = api_->comm_get_async_error(comm, &error); status != kSuccess)
    return "ncclCommGetAsyncError: " + api_->error(status);
  return error == kSuccess ? std::string() : api_->error(error);
}

std::string nccl_version_string(int code) {
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

std::string nccl_version_if_loadable() {
  std::string why;
  const Nccl *nccl = Nccl::find(why);
  return nccl != nullptr ? nccl->version() : std::string();
}

} // namespace kibench::gpu
