#include "kernels/plugin/plugin_implementation.hpp"

#include <cstdio>
#include <cstring>

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include "kernels/cpu/host_implementation.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/plugin/abi_codes.hpp"
#include "kernels/plugin/plugin_lane.hpp"
#include "lib/inputs/input_set.hpp"

namespace kibench::plugin {

namespace {

// The inputs as kibench_tensor views, and their byte ranges. `bias` views
// stay NULL without a bias.
struct InputViews {
  kibench_plugin_inputs inputs{};
  std::vector<ByteRange> ranges;

  void add(kibench_tensor &slot, const void *data, std::int32_t dtype, std::size_t element_size,
           bool on_device, std::int64_t rows, std::int64_t columns, const char *name) {
    if (data == nullptr) return;
    slot = abi::tensor_view(data, dtype, on_device, rows, columns);
    const std::int64_t count = columns > 0 ? rows * columns : rows;
    ranges.push_back({data, static_cast<std::size_t>(count) * element_size, name});
  }
};

// Every tensor of the workload's operation: jsd's log-probabilities or the
// LM-head tensors (the others are empty and stay NULL), and the target
// unless a jsd or fused_linear_jsd workload has no labels.
template <typename Get> InputViews input_views(const Workload &w, Pass pass, bool on_device, Get &&pointer) {
  InputViews v;
  v.inputs.info = workload_info(w);
  v.inputs.pass = abi::pass_code(pass);
  v.inputs.operation = operation_code(w.operation_kind);
  v.inputs.operation_name = operation_name(w.operation_kind);
  const std::int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
  auto &in = v.inputs;
  if (!w.operation_kind->has_lm_heads()) {
    v.add(in.student_log_probs, pointer("student_log_probs"), KIBENCH_DTYPE_FP32, 4, on_device, T, V,
          "student_log_probs");
    v.add(in.teacher_log_probs, pointer("teacher_log_probs"), KIBENCH_DTYPE_FP32, 4, on_device, T, V,
          "teacher_log_probs");
    if (w.has_target) v.add(in.target, pointer("target"), KIBENCH_DTYPE_INT64, 8, on_device, T, 0, "target");
    return v;
  }
  v.add(in.student_input, pointer("student_input"), KIBENCH_DTYPE_BF16, 2, on_device, T, Hs, "student_input");
  v.add(in.student_weight, pointer("student_weight"), KIBENCH_DTYPE_BF16, 2, on_device, V, Hs,
        "student_weight");
  v.add(in.teacher_input, pointer("teacher_input"), KIBENCH_DTYPE_BF16, 2, on_device, T, H, "teacher_input");
  v.add(in.teacher_weight, pointer("teacher_weight"), KIBENCH_DTYPE_BF16, 2, on_device, V, H,
        "teacher_weight");
  if (w.has_target) v.add(in.target, pointer("target"), KIBENCH_DTYPE_INT64, 8, on_device, T, 0, "target");
  v.add(in.student_bias, pointer("student_bias"), KIBENCH_DTYPE_BF16, 2, on_device, V, 0, "student_bias");
  v.add(in.teacher_bias, pointer("teacher_bias"), KIBENCH_DTYPE_BF16, 2, on_device, V, 0, "teacher_bias");
  return v;
}

// What the plugin holds beside kibench's inputs: its own count, else the
// outputs it exposed.
MemoryUse memory_use(std::uint64_t input_bytes, const PluginLane &lane) {
  MemoryUse use;
  use.input_bytes = input_bytes;
  const auto m = lane.memory();
  if (m && m->workspace_bytes != KIBENCH_MEMORY_UNKNOWN && m->peak_bytes != KIBENCH_MEMORY_UNKNOWN) {
    use.output_bytes = m->output_bytes;
    use.workspace_bytes = m->workspace_bytes;
    use.peak_bytes = input_bytes + std::max(m->peak_bytes, m->output_bytes + m->workspace_bytes);
  } else {
    use.output_bytes = m && m->output_bytes != KIBENCH_MEMORY_UNKNOWN ? m->output_bytes : lane.output_bytes();
    use.peak_bytes = input_bytes + use.output_bytes;
    use.measured = false;
  }
  return use;
}

class GpuPluginImplementation final : public gpu::GpuImplementation {
public:
  GpuPluginImplementation(std::shared_ptr<const PluginEntry> entry, const PluginRunSettings &settings)
      : GpuImplementation(entry->name), lane_(entry), settings_(settings) {}
  ~GpuPluginImplementation() override {
    try {
      release();
    } catch (const std::exception &e) {
      std::fprintf(stderr, "kibench: %s\n", e.what());
    }
  }

  [[nodiscard]] RevisionFacts revision() const override { return lane_.entry().facts; }
  [[nodiscard]] RevisionFacts revision_for(OperationKind kind) const override {
    return lane_.entry().facts_for(kind);
  }
  [[nodiscard]] bool runs(OperationKind kind) const override { return lane_.entry().runs(kind); }
  [[nodiscard]] bool computes_loss() const override { return lane_.entry().computes_loss; }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return lane_.unsupported(w, Pass::full);
  }
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    return lane_.unsupported(w, pass);
  }
  void before_sample(Pass pass) override { lane_.before_sample(pass, stream().get()); }
  void poison_outputs() override {
    require_prepared();
    for (const auto &o : lane_.exposed_outputs())
      CUDA_CHECK(cudaMemsetAsync(o.data, 0xFF, o.bytes, stream().get()));
    lane_.poison(stream().get());
  }
  void run(Pass pass) override { lane_.run(pass, stream().get()); }
  OutputView outputs() override {
    require_prepared();
    return lane_.outputs(workload());
  }
  [[nodiscard]] MemoryUse memory() const override {
    return memory_use(GpuImplementation::memory().input_bytes, lane_);
  }

protected:
  void prepare_device(const Workload &w) override {
    const gpu::DeviceInputs &d = inputs();
    auto views = input_views(w, settings_.pass, true, [&](std::string_view name) -> const void * {
      if (name == "student_input") return d.student_input.data();
      if (name == "student_weight") return d.student_weight.data();
      if (name == "teacher_input") return d.teacher_input.data();
      if (name == "teacher_weight") return d.teacher_weight.data();
      if (name == "target") return d.target.data();
      if (name == "student_log_probs") return d.student_log_probs.data();
      if (name == "teacher_log_probs") return d.teacher_log_probs.data();
      if (name == "student_bias") return d.has_student_bias() ? d.student_bias.data() : nullptr;
      return d.has_teacher_bias() ? d.teacher_bias.data() : nullptr;
    });
    views.inputs.device = device();
    views.inputs.stream = stream().get();
    views.inputs.timeout_s = settings_.timeout_s;
    lane_.prepare(views.inputs, std::move(views.ranges));
  }
  void release_device() override { lane_.release(); }

private:
  PluginLane lane_;
  PluginRunSettings settings_;
};

class HostPluginImplementation final : public cpu::HostImplementation {
public:
  HostPluginImplementation(std::shared_ptr<const PluginEntry> entry, const PluginRunSettings &settings)
      : HostImplementation(entry->name), lane_(entry), settings_(settings) {}
  ~HostPluginImplementation() override {
    try {
      release();
    } catch (const std::exception &e) {
      std::fprintf(stderr, "kibench: %s\n", e.what());
    }
  }

  [[nodiscard]] RevisionFacts revision() const override { return lane_.entry().facts; }
  [[nodiscard]] RevisionFacts revision_for(OperationKind kind) const override {
    return lane_.entry().facts_for(kind);
  }
  [[nodiscard]] bool runs(OperationKind kind) const override { return lane_.entry().runs(kind); }
  [[nodiscard]] bool computes_loss() const override { return lane_.entry().computes_loss; }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return unsupported_for(w, Pass::full);
  }
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    if (auto too_big = HostImplementation::unsupported(w)) return too_big;
    return lane_.unsupported(w, pass);
  }

  void prepare(const Workload &w, InputSet &inputs) override {
    const HostInputs &h = inputs.host();
    input_bytes_ = cpu::host_input_bytes(h);
    workload_ = &w;
    auto data = [](const auto &v) -> const void * { return v.empty() ? nullptr : v.data(); };
    auto views = input_views(w, settings_.pass, false, [&](std::string_view name) -> const void * {
      if (name == "student_input") return data(h.student_input);
      if (name == "student_weight") return data(h.student_weight);
      if (name == "teacher_input") return data(h.teacher_input);
      if (name == "teacher_weight") return data(h.teacher_weight);
      if (name == "target") return data(h.target);
      if (name == "student_log_probs") return data(h.student_log_probs);
      if (name == "teacher_log_probs") return data(h.teacher_log_probs);
      if (name == "student_bias") return data(h.student_bias);
      return data(h.teacher_bias);
    });
    views.inputs.device = -1;
    views.inputs.timeout_s = settings_.timeout_s;
    lane_.prepare(views.inputs, std::move(views.ranges));
  }
  void before_sample(Pass pass) override { lane_.before_sample(pass, nullptr); }
  void poison_outputs() override {
    for (const auto &o : lane_.exposed_outputs()) std::memset(o.data, 0xFF, o.bytes);
    lane_.poison(nullptr);
  }
  void run(Pass pass) override { lane_.run(pass, nullptr); }
  OutputView outputs() override {
    if (workload_ == nullptr) throw std::logic_error(name() + ": used before prepare()");
    return lane_.outputs(*workload_);
  }
  [[nodiscard]] MemoryUse memory() const override { return memory_use(input_bytes_, lane_); }
  void release() override {
    workload_ = nullptr;
    lane_.release();
  }

protected:
  // Unknown until it runs: the CPU limits are checked on the inputs alone.
  [[nodiscard]] std::uint64_t planned_own_bytes(const Workload &) const override { return 0; }

private:
  PluginLane lane_;
  PluginRunSettings settings_;
  const Workload *workload_ = nullptr;
  std::uint64_t input_bytes_ = 0;
};

} // namespace

std::unique_ptr<Implementation> make_plugin_implementation(std::shared_ptr<const PluginEntry> entry,
                                                           const PluginRunSettings &settings) {
  if (entry->needs_gpu) return std::make_unique<GpuPluginImplementation>(std::move(entry), settings);
  return std::make_unique<HostPluginImplementation>(std::move(entry), settings);
}

} // namespace kibench::plugin
