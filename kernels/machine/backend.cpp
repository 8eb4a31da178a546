// The run pipeline's view of this machine: the registry, the environment
// (host facts plus the GPU's when there is one), and output comparison on
// the host or on the device.
#include <algorithm>
#include <limits>

#include <fmt/core.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_environment.hpp"
#include "kernels/cuda/input_fingerprint.hpp"
#include "kernels/cuda/nccl.hpp"
#include "kernels/cuda/nvml.hpp"
#include "kernels/cuda/nvml_clock_control.hpp"
#include "kernels/cuda/nvml_power_telemetry.hpp"
#include "kernels/cuda/sentinels.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/plugin/plugin_backend.hpp"
#include "kernels/plugin/plugin_implementation.hpp"
#include "kernels/registry.hpp"
#include "lib/environment/clock_control_set.hpp"
#include "lib/environment/gpu_topology.hpp"
#include "lib/environment/power_telemetry_set.hpp"
#include "lib/run/backend.hpp"
#include "lib/worker/remote_implementation.hpp"

namespace kibench {

namespace {

class MachineBackend final : public Backend {
public:
  MachineBackend(std::shared_ptr<const plugin::PluginCatalog> plugins, int run_gpus)
      : plugins_(std::move(plugins)), run_gpus_(run_gpus) {}

  [[nodiscard]] int run_gpus() const override { return run_gpus_; }
  [[nodiscard]] int gpu_count() const override {
    return gpu_unavailable_reason() ? 0 : gpu::gpu_availability().device_count;
  }

  [[nodiscard]] std::optional<std::string> gpu_unavailable_reason() const override {
    const auto &a = gpu::gpu_availability();
    if (a.available) return std::nullopt;
    return a.reason;
  }

  [[nodiscard]] std::vector<InputFingerprint> input_fingerprints(InputSet &inputs) const override {
    std::vector<InputFingerprint> out = inputs.host_fingerprints();
    if (!inputs.device_slot()) return out;
    const gpu::DeviceInputs &d = gpu::device_inputs(inputs);
    // Whatever a lane left queued on any stream has finished first.
    CUDA_CHECK(cudaDeviceSynchronize());
    gpu::Stream stream;
    std::vector<const char *> names;
    std::vector<std::pair<const void *, std::size_t>> buffers;
    const auto add = [&](const char *name, const auto &buffer) {
      if (buffer.empty()) return;
      names.push_back(name);
      buffers.emplace_back(buffer.data(), buffer.bytes());
    };
    add("student_input", d.student_input);
    add("student_weight", d.student_weight);
    add("teacher_input", d.teacher_input);
    add("teacher_weight", d.teacher_weight);
    add("target", d.target);
    add("student_bias", d.student_bias);
    add("teacher_bias", d.teacher_bias);
    add("student_log_probs", d.student_log_probs);
    add("teacher_log_probs", d.teacher_log_probs);
    const std::vector<std::uint64_t> values = gpu::fingerprint_device_buffers(buffers, stream.get());
    for (std::size_t k = 0; k < names.size(); ++k) out.push_back({names[k], "device", values[k]});
    return out;
  }

  void restore_inputs(InputSet &inputs) const override {
    inputs.restore_host();
    if (inputs.device_slot()) {
      CUDA_CHECK(cudaDeviceSynchronize());
      gpu::fill_device_inputs(gpu::device_inputs(inputs), inputs.generator_workload());
    }
  }

  [[nodiscard]] calibration::SentinelSet run_sentinels() const override {
    if (gpu_unavailable_reason()) return calibration::host_sentinels();
    return gpu::gpu_sentinels();
  }

  [[nodiscard]] std::optional<DeviceMemory> device_memory() const override {
    if (gpu_unavailable_reason()) return std::nullopt;
    int previous = 0;
    CUDA_CHECK(cudaGetDevice(&previous));
    CUDA_CHECK(cudaSetDevice(0));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    CUDA_CHECK(cudaSetDevice(previous));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    return DeviceMemory{prop.name, total_bytes, free_bytes, gpu::DeviceAllocator::process().reserved_bytes()};
  }

  [[nodiscard]] EnvironmentFacts environment() const override {
    EnvironmentFacts facts = probe_host_environment();
    if (gpu_unavailable_reason()) return facts;
    const gpu::GpuEnvironment g = gpu::probe_gpu_environment(0);
    facts.labels["host_cpu"] = facts.product;
    facts.vendor = "nvidia";
    facts.product = g.name;
    facts.architecture = fmt::format("sm_{}{}", g.compute_capability_major, g.compute_capability_minor);
    facts.form_factor.clear();
    facts.memory_bytes = g.total_memory_bytes;
    facts.count = gpu::gpu_availability().device_count;
    facts.driver = g.nvml_driver_version.value_or(gpu::cuda_version_string(g.driver_version));
    facts.cuda_toolkit = gpu::cuda_version_string(g.runtime_version);
    facts.libraries["cublaslt"] = std::to_string(g.cublaslt_version);
    facts.ecc_enabled = g.ecc_enabled;
    facts.persistence_mode = g.persistence_mode;
    // The cap sets the clock of GEMM-bound work (docs/perf.md): runs under
    // different caps are different environments.
    facts.power_limit_watts = g.power_limit_watts;
    // Readings that drift between runs stay out of the identity.
    facts.labels["sm_count"] = std::to_string(g.sm_count);
    facts.labels["l2_bytes"] = std::to_string(g.l2_bytes);
    if (g.max_sm_clock_mhz) facts.labels["max_sm_clock_mhz"] = std::to_string(*g.max_sm_clock_mhz);
    if (g.max_memory_clock_mhz)
      facts.labels["max_memory_clock_mhz"] = std::to_string(*g.max_memory_clock_mhz);
    // The board's peak DRAM bandwidth, as nvbench takes it: two transfers
    // per memory clock (DDR) over the bus width. H100 SXM: 2 x 2619 MHz x
    // 5120 bit / 8 = 3.35 TB/s.
    if (g.max_memory_clock_mhz && g.memory_bus_width_bits > 0) {
      facts.peak_memory_bandwidth_gbps =
          2.0 * *g.max_memory_clock_mhz * 1e6 * (g.memory_bus_width_bits / 8.0) * 1e-9;
      facts.labels["peak_memory_bandwidth"] =
          fmt::format("{:.0f} GB/s (2 x {} MHz x {}-bit bus)", *facts.peak_memory_bandwidth_gbps,
                      *g.max_memory_clock_mhz, g.memory_bus_width_bits);
    }
    if (g.sm_clock_mhz) facts.labels["sm_clock_mhz_at_probe"] = std::to_string(*g.sm_clock_mhz);
    facts.labels["gpu_uuid"] = g.uuid;
    if (run_gpus_ > 1) add_multi_gpu_facts(facts, g);
    facts.labels["nvml"] = g.nvml_status;
    // Locked clocks are a different environment (spec); how that is known,
    // a label.
    if (const auto control = clock_control()) {
      const ClockState clocks = clock_state(control->read());
      facts.clocks_locked = clocks.locked;
      facts.labels["clock_state"] = clocks.description;
    }
    return facts;
  }

  // Every GPU of the run locked and read together.
  [[nodiscard]] std::unique_ptr<ClockControl> clock_control() const override {
    return on_run_gpus<ClockControl, gpu::NvmlClockControl, ClockControlSet>();
  }

  // Every GPU of the run: a sample starts rested when all of them are.
  [[nodiscard]] std::unique_ptr<PowerTelemetry> power_telemetry() const override {
    return on_run_gpus<PowerTelemetry, gpu::NvmlPowerTelemetry, PowerTelemetrySet>();
  }

  [[nodiscard]] std::vector<ImplementationEntry> implementations() const override {
    std::vector<ImplementationEntry> out;
    for (const auto &r : implementation_registry())
      out.push_back({r.name, r.summary, r.needs_gpu, r.is_oracle, r.is_diagnostic});
    if (plugins_)
      for (const auto &p : plugins_->entries())
        out.push_back({p->name, fmt::format("{} [plugin: {}]", p->summary, p->origin), p->needs_gpu, false});
    return out;
  }

  [[nodiscard]] std::unique_ptr<Implementation> make(std::string_view name) const override {
    if (const RegisteredImplementation *r = find_implementation(name))
      return r->make_for_gpus ? r->make_for_gpus(run_gpus_) : r->make();
    if (plugins_)
      if (auto entry = plugins_->find(name)) {
        const plugin::PluginRunSettings &settings = plugins_->settings();
        auto local = plugin::make_plugin_implementation(entry, settings);
        if (!plugin::runs_in_worker(settings)) return local;
        return worker::make_remote_implementation(std::move(local),
                                                  {plugin::worker_argv(*entry, settings), settings.timeout_s});
      }
    return nullptr;
  }

  [[nodiscard]] std::optional<DeviceCopy> copy_to_device(const TensorRef &host) const override {
    if (gpu_unavailable_reason() || host.on_device) return std::nullopt;
    const std::size_t bytes = static_cast<std::size_t>(host.count) * element_bytes(host.type);
    auto buffer = std::make_shared<gpu::DeviceBuffer<std::byte>>(gpu::DeviceAllocator::process(), bytes);
    if (bytes > 0) CUDA_CHECK(cudaMemcpy(buffer->data(), host.data, bytes, cudaMemcpyHostToDevice));
    return DeviceCopy{buffer, TensorRef{buffer->data(), host.type, host.count, true}};
  }

  [[nodiscard]] std::vector<unsigned char> to_host_bytes(const TensorRef &t) const override {
    const std::size_t bytes = static_cast<std::size_t>(t.count) * element_bytes(t.type);
    std::vector<unsigned char> out(bytes);
    if (bytes == 0) return out;
    if (t.on_device) {
      CUDA_CHECK(cudaMemcpy(out.data(), t.data, bytes, cudaMemcpyDeviceToHost));
    } else {
      std::memcpy(out.data(), t.data, bytes);
    }
    return out;
  }

  [[nodiscard]] std::vector<ErrorStats> compare(const OutputView &out, const OutputView &ref,
                                                bool with_gradients) const override {
    std::vector<ErrorStats> errors{compare_scalar("loss", out.loss, ref.loss)};
    if (!with_gradients) return errors;
    auto one = [&](const char *name, const TensorRef &o, const TensorRef &r) {
      if (r.empty() && o.empty()) return;
      if (o.count != r.count) {
        // A missing or mis-sized output is a failed check, not a crash.
        ErrorStats missing;
        missing.output = name;
        missing.count = r.count;
        missing.nonfinite = std::max(r.count, o.count);
        missing.max_abs_error = missing.rel_l2_error = std::numeric_limits<double>::infinity();
        errors.push_back(missing);
        return;
      }
      if (o.on_device || r.on_device) {
        errors.push_back(gpu::compare_device(name, o, r));
      } else {
        errors.push_back(compare_host(name, o, r));
      }
    };
    one("grad_student_input", out.grad_student_input, ref.grad_student_input);
    one("grad_student_weight", out.grad_student_weight, ref.grad_student_weight);
    one("grad_student_bias", out.grad_student_bias, ref.grad_student_bias);
    return errors;
  }

private:
  // NVML's `PerDevice` for GPU 0, or a `Set` of one for each GPU of the
  // run; nullptr without a usable GPU or NVML.
  template <class Interface, class PerDevice, class Set>
  [[nodiscard]] std::unique_ptr<Interface> on_run_gpus() const {
    if (gpu_unavailable_reason()) return nullptr;
    const gpu::Nvml *nvml = gpu::Nvml::instance();
    if (nvml == nullptr) return nullptr;
    if (run_gpus_ == 1) return std::make_unique<PerDevice>(*nvml, 0);
    std::vector<std::unique_ptr<Interface>> devices;
    for (int d = 0; d < run_gpus_; ++d) devices.push_back(std::make_unique<PerDevice>(*nvml, d));
    return std::make_unique<Set>(std::move(devices));
  }

  // A run over GPUs 0 .. n − 1: each one's identity, how they are linked,
  // the NCCL that joins them and the variables it reads. Only then: a
  // single-GPU run's environment (and digest) stays what it was.
  void add_multi_gpu_facts(EnvironmentFacts &facts, const gpu::GpuEnvironment &first) const {
    facts.labels["run_gpus"] = std::to_string(run_gpus_);
    for (int d = 1; d < run_gpus_ && d < gpu_count(); ++d) {
      const gpu::GpuEnvironment g = gpu::probe_gpu_environment(d);
      facts.labels[fmt::format("gpu{}_uuid", d)] = g.uuid;
      // One product per environment: a mixed set is said, not hidden.
      if (g.name != first.name) facts.labels[fmt::format("gpu{}_product", d)] = g.name;
    }
    if (const auto links = probe_interconnect(run_gpus_)) facts.interconnect = *links;
    if (const std::string nccl = gpu::nccl_version_if_loadable(); !nccl.empty())
      facts.libraries["nccl"] = nccl;
    for (const char *variable : gpu::kNcclVariablesRecorded)
      if (const char *value = std::getenv(variable)) facts.environment_variables[variable] = value;
  }

  std::shared_ptr<const plugin::PluginCatalog> plugins_;
  int run_gpus_ = 1;
};

} // namespace

std::unique_ptr<Backend> make_backend() {
  return std::make_unique<MachineBackend>(nullptr, 1);
}

std::unique_ptr<Backend> make_backend(std::shared_ptr<const plugin::PluginCatalog> plugins, int run_gpus) {
  if (run_gpus < 1) throw std::invalid_argument("make_backend: " + std::to_string(run_gpus) + " GPUs");
  // NVLink SHARP multicast stays off: kibench's all-reduces are a few MB,
  // and a multicast object on a shared host can outlive the process. Set
  // before NCCL is first initialized, which reads it then.
  if (run_gpus > 1) ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  return std::make_unique<MachineBackend>(std::move(plugins), run_gpus);
}

std::vector<std::string> builtin_implementation_names() {
  std::vector<std::string> names;
  for (const auto &r : implementation_registry()) names.push_back(r.name);
  return names;
}

} // namespace kibench
