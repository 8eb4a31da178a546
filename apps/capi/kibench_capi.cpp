// The C API of kibench.h over the same pieces `kibench run` uses: the
// workload loader, InputSet (device inputs by GPU Philox), the registry's
// implementations, CudaEventTimer, L2Flush and the backend's comparator.
// Each entry point catches every exception and turns it into the
// thread-local message of kibench_last_error().
#include "include/kibench/kibench.h"
#include "include/kibench/kibench_plugin.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include "apps/kibench/cli.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/machine/backend.hpp"
#include "kernels/plugin/abi_codes.hpp"
#include "kernels/plugin/plugin_lane.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/error.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/run/backend.hpp"
#include "lib/workload/workload.hpp"

struct kibench_workload {
  kibench::Workload workload;
  kibench::InputSet inputs;
  std::unique_ptr<kibench::Backend> backend = kibench::make_backend();
  // For kibench_workload_flush_l2: made on first use, like the inputs.
  std::unique_ptr<kibench::gpu::DeviceAllocator> flush_allocator;
  std::unique_ptr<kibench::gpu::L2Flush> flush;

  explicit kibench_workload(kibench::Workload w) : workload(std::move(w)), inputs(workload) {}
  // InputSet keeps a reference to `workload`: the object must stay put.
  kibench_workload(const kibench_workload &) = delete;
  kibench_workload &operator=(const kibench_workload &) = delete;
};

struct kibench_impl {
  kibench_workload *owner = nullptr;
  std::unique_ptr<kibench::Implementation> impl;
  std::unique_ptr<kibench::Device> device; // impl's, opened once it is prepared
};

struct kibench_timer {
  std::unique_ptr<kibench::SampleTimer> timer;
};

namespace {

namespace abi = kibench::abi;
using kibench::ElementType;
using kibench::InputError;
using kibench::Pass;

thread_local std::string last_error;

// Runs `body`; any exception becomes the last error and `failed`.
template <typename Result, typename Body> Result guarded(Result failed, Body &&body) noexcept {
  try {
    return body();
  } catch (const std::exception &e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown error";
  }
  return failed;
}

template <typename Body> int guarded_status(Body &&body) noexcept {
  return guarded(1, [&] {
    body();
    return 0;
  });
}

template <typename T> T &require(T *handle, const char *what) {
  if (handle == nullptr) throw InputError(fmt::format("{} is NULL", what));
  return *handle;
}

Pass pass_of(int pass) {
  if (const auto known = abi::pass_of(pass)) return *known;
  throw InputError(fmt::format("pass {} is none of forward (0), backward (1), full (2)", pass));
}

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

ElementType element_type(std::int32_t code, const char *field) {
  if (const auto type = abi::float_type_of(code)) return *type;
  throw InputError(fmt::format("{}: dtype {} is not a floating type kibench compares", field, code));
}

using abi::tensor_view;

kibench_tensor tensor_of(const kibench::TensorRef &ref, std::int64_t rows, std::int64_t columns) {
  if (ref.empty()) return kibench_tensor{};
  return tensor_view(ref.data, abi::dtype_code(ref.type), ref.on_device, rows, columns);
}

// A caller's tensor as a TensorRef of the expected shape.
kibench::TensorRef tensor_ref(const kibench_tensor &t, const char *field, std::int64_t rows,
                              std::int64_t columns) {
  if (t.data == nullptr) return {};
  const std::int64_t want = rows * std::max<std::int64_t>(columns, 1);
  const std::int64_t have = t.rank == 2 ? t.shape[0] * t.shape[1] : t.rank == 1 ? t.shape[0] : 1;
  if (have != want)
    throw InputError(fmt::format("{}: {} elements, the workload's shape needs {}", field, have, want));
  return kibench::TensorRef{t.data, element_type(t.dtype, field), want, t.on_device != 0};
}

void fill_stats(const kibench::ErrorStats &from, kibench_error_stats &to) {
  to = kibench_error_stats{};
  const std::size_t n = std::min(from.output.size(), sizeof(to.output) - 1);
  std::memcpy(to.output, from.output.data(), n);
  to.output[n] = '\0';
  to.count = from.count;
  to.max_abs_error = from.max_abs_error;
  to.rel_l2_error = from.rel_l2_error;
  to.ref_l2_norm = from.ref_l2_norm;
  to.nonfinite = from.nonfinite;
  to.passed = from.passed ? 1 : 0;
}

// The worker command a hosting program gives (the Python package sets
// KIBENCH_WORKER_COMMAND to a JSON array of strings: its interpreter and
// arguments); none, and its plugin implementations run in process.
std::vector<std::string> worker_command_from_environment() {
  const char *text = std::getenv("KIBENCH_WORKER_COMMAND");
  if (text == nullptr || *text == '\0') return {};
  const kibench::json::Value value = kibench::json::parse(text, "KIBENCH_WORKER_COMMAND");
  std::vector<std::string> argv;
  if (value.is_array())
    for (const kibench::json::Value &v : value.as_array())
      if (v.is_string()) argv.push_back(v.as_string());
  if (argv.empty() || !value.is_array() || argv.size() != value.as_array().size())
    throw kibench::InputError("KIBENCH_WORKER_COMMAND: not a non-empty JSON array of strings");
  return argv;
}

} // namespace

extern "C" {

int kibench_capi_version(void) {
  return KIBENCH_CAPI_VERSION;
}

const char *kibench_last_error(void) {
  return last_error.c_str();
}

kibench_workload *kibench_workload_open(const char *spec_path) {
  return guarded<kibench_workload *>(nullptr, [&] {
    if (spec_path == nullptr) throw InputError("spec_path is NULL");
    return new kibench_workload(kibench::load_workload(spec_path));
  });
}

void kibench_workload_close(kibench_workload *workload) {
  delete workload;
}

int kibench_workload_get_info(kibench_workload *workload, kibench_workload_info *info) {
  return guarded_status([&] {
    const kibench::Workload &w = require(workload, "workload").workload;
    kibench_workload_info &out = require(info, "info");
    out = kibench::plugin::workload_info(w);
  });
}

int kibench_workload_input(kibench_workload *workload, const char *name, kibench_tensor *tensor) {
  return guarded_status([&] {
    kibench_workload &wl = require(workload, "workload");
    kibench_tensor &out = require(tensor, "tensor");
    const std::string which = name != nullptr ? name : "";
    if (!kibench::gpu::gpu_available())
      throw InputError(fmt::format("no GPU: {}", kibench::gpu::gpu_availability().reason));
    const kibench::gpu::DeviceInputs &in = kibench::gpu::device_inputs(wl.inputs);
    const std::int64_t T = in.tokens, V = in.vocab, H = in.hidden, Hs = in.student_hidden;
    if (which == "student_input") {
      out = tensor_view(in.student_input.data(), KIBENCH_DTYPE_BF16, true, T, Hs);
    } else if (which == "student_weight") {
      out = tensor_view(in.student_weight.data(), KIBENCH_DTYPE_BF16, true, V, Hs);
    } else if (which == "teacher_input") {
      out = tensor_view(in.teacher_input.data(), KIBENCH_DTYPE_BF16, true, T, H);
    } else if (which == "teacher_weight") {
      out = tensor_view(in.teacher_weight.data(), KIBENCH_DTYPE_BF16, true, V, H);
    } else if (which == "target") {
      out = tensor_view(in.target.data(), KIBENCH_DTYPE_INT64, true, T, 0);
    } else if (which == "student_bias") {
      out = in.has_student_bias() ? tensor_view(in.student_bias.data(), KIBENCH_DTYPE_BF16, true, V, 0)
                                  : kibench_tensor{};
    } else if (which == "teacher_bias") {
      out = in.has_teacher_bias() ? tensor_view(in.teacher_bias.data(), KIBENCH_DTYPE_BF16, true, V, 0)
                                  : kibench_tensor{};
    } else {
      throw InputError(fmt::format("no input named \"{}\"", which));
    }
  });
}

int kibench_workload_flush_l2(kibench_workload *workload, void *cuda_stream) {
  return guarded_status([&] {
    kibench_workload &wl = require(workload, "workload");
    if (!wl.flush) {
      wl.flush_allocator = std::make_unique<kibench::gpu::DeviceAllocator>("capi-l2-flush");
      wl.flush = std::make_unique<kibench::gpu::L2Flush>(*wl.flush_allocator, current_device());
    }
    wl.flush->flush(static_cast<cudaStream_t>(cuda_stream));
  });
}

kibench_impl *kibench_impl_open(kibench_workload *workload, const char *name) {
  return guarded<kibench_impl *>(nullptr, [&] {
    kibench_workload &wl = require(workload, "workload");
    const std::string which = name != nullptr ? name : "";
    auto impl = wl.backend->make(which);
    if (!impl) throw InputError(fmt::format("no implementation named \"{}\" (see `kibench list`)", which));
    auto why = kibench::other_operation(*impl, wl.workload);
    if (!why) why = impl->unsupported(wl.workload);
    if (why) throw InputError(fmt::format("{} cannot run {}: {}", which, wl.workload.name, *why));
    impl->prepare(wl.workload, wl.inputs);
    auto device = impl->open_device();
    return new kibench_impl{&wl, std::move(impl), std::move(device)};
  });
}

void kibench_impl_close(kibench_impl *impl) {
  if (impl != nullptr && impl->impl) guarded_status([&] {
      impl->device.reset();
      impl->impl->release();
    });
  delete impl;
}

int kibench_impl_revision(kibench_impl *impl, char *buffer, size_t capacity, size_t *size) {
  return guarded_status([&] {
    const std::string text =
        kibench::json::pretty(kibench::implementation_manifest(
            require(impl, "impl").impl->revision_for(impl->owner->workload.operation_kind)));
    if (size != nullptr) *size = text.size();
    if (capacity == 0) return;
    if (buffer == nullptr) throw InputError("buffer is NULL");
    if (capacity <= text.size())
      throw InputError(fmt::format("buffer of {} bytes; the revision needs {}", capacity, text.size() + 1));
    std::memcpy(buffer, text.c_str(), text.size() + 1);
  });
}

int kibench_impl_poison_outputs(kibench_impl *impl) {
  return guarded_status([&] { require(impl, "impl").impl->poison_outputs(); });
}

int kibench_impl_flush_caches(kibench_impl *impl) {
  return guarded_status([&] { require(impl, "impl").device->flush_caches(); });
}

int kibench_impl_before_sample(kibench_impl *impl, int pass) {
  return guarded_status([&] { require(impl, "impl").impl->before_sample(pass_of(pass)); });
}

int kibench_impl_run(kibench_impl *impl, int pass) {
  return guarded_status([&] { require(impl, "impl").impl->run(pass_of(pass)); });
}

int kibench_impl_outputs(kibench_impl *impl, kibench_outputs *outputs) {
  return guarded_status([&] {
    kibench_impl &h = require(impl, "impl");
    kibench_outputs &out = require(outputs, "outputs");
    const kibench::Workload &w = h.owner->workload;
    const kibench::OutputView view = h.impl->outputs();
    out = kibench_outputs{};
    out.loss = view.loss;
    out.grad_student_input = tensor_of(view.grad_student_input, w.tokens, w.student_hidden);
    out.grad_student_weight = tensor_of(view.grad_student_weight, w.vocab, w.student_hidden);
    out.grad_student_bias = tensor_of(view.grad_student_bias, w.vocab, 0);
  });
}

int kibench_impl_memory(kibench_impl *impl, kibench_memory *memory) {
  return guarded_status([&] {
    const kibench::MemoryUse use = require(impl, "impl").impl->memory();
    kibench_memory &out = require(memory, "memory");
    out = {use.input_bytes, use.output_bytes, use.workspace_bytes, use.peak_bytes};
  });
}

kibench_timer *kibench_timer_for_impl(kibench_impl *impl) {
  return guarded<kibench_timer *>(
      nullptr, [&] { return new kibench_timer{require(impl, "impl").device->make_timer()}; });
}

kibench_timer *kibench_timer_for_stream(void *cuda_stream) {
  return guarded<kibench_timer *>(nullptr, [&] {
    return new kibench_timer{std::make_unique<kibench::gpu::CudaEventTimer>(
        static_cast<cudaStream_t>(cuda_stream), current_device())};
  });
}

void kibench_timer_close(kibench_timer *timer) {
  delete timer;
}

int kibench_timer_start(kibench_timer *timer) {
  return guarded_status([&] { require(timer, "timer").timer->start(); });
}

int kibench_timer_stop(kibench_timer *timer) {
  return guarded_status([&] { require(timer, "timer").timer->stop(); });
}

int kibench_timer_elapsed(kibench_timer *timer, double *ns, double *clock_mhz) {
  return guarded_status([&] {
    kibench::SampleTimer &t = *require(timer, "timer").timer;
    const double elapsed = t.elapsed_ns();
    if (ns != nullptr) *ns = elapsed;
    if (clock_mhz != nullptr) *clock_mhz = t.clock_mhz().value_or(std::numeric_limits<double>::quiet_NaN());
  });
}

int kibench_cli_run(int argc, const char *const *argv, const struct kibench_plugin *const *plugins,
                    int plugin_count, const char *host) {
  kibench::cli::CliContext context;
  const std::string origin = host != nullptr ? host : "host";
  for (int k = 0; plugins != nullptr && k < plugin_count; ++k)
    context.in_process.push_back({plugins[k], origin});
  try {
    context.worker_command = worker_command_from_environment();
    return kibench::cli::run_cli(argc, argv, context);
  } catch (const kibench::InputError &e) {
    std::fprintf(stderr, "kibench: %s\n", e.what());
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kibench: error: %s\n", e.what());
    return 3;
  }
}

int kibench_compare_outputs(kibench_impl *truth, const kibench_outputs *candidate, int with_gradients,
                            kibench_error_stats *stats, int capacity, int *count) {
  return guarded_status([&] {
    kibench_impl &t = require(truth, "truth");
    const kibench_outputs &c = require(candidate, "candidate");
    const kibench::Workload &w = t.owner->workload;
    kibench::OutputView view;
    view.loss = c.loss;
    view.grad_student_input =
        tensor_ref(c.grad_student_input, "candidate.grad_student_input", w.tokens, w.student_hidden);
    view.grad_student_weight =
        tensor_ref(c.grad_student_weight, "candidate.grad_student_weight", w.vocab, w.student_hidden);
    view.grad_student_bias = tensor_ref(c.grad_student_bias, "candidate.grad_student_bias", w.vocab, 0);
    const kibench::OutputView reference = t.impl->outputs();
    std::vector<kibench::ErrorStats> errors = t.owner->backend->compare(view, reference, with_gradients != 0);
    for (auto &e : errors) kibench::apply_policy(e, w.correctness);
    if (count != nullptr) *count = static_cast<int>(errors.size());
    for (std::size_t i = 0; i < errors.size() && static_cast<int>(i) < capacity; ++i) {
      if (stats == nullptr) throw InputError("stats is NULL");
      fill_stats(errors[i], stats[i]);
    }
  });
}

} // extern "C"
