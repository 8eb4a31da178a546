// The calls into one plugin implementation, shared by its GPU and CPU
// adapters: the state's lifetime, each function's status turned into an
// ImplementationFailure with the fitting RunStatus, the inputs handed to
// prepare(), and the outputs checked against the workload before kibench
// reads them (shape, element type, device, no overlap with the inputs).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/plugin/plugin_catalog.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::plugin {

// Where the workload's inputs live, so an output that overlaps one (and
// would be poisoned with it) is refused.
struct ByteRange {
  const void *data = nullptr;
  std::size_t bytes = 0;
  std::string tensor;
};

// One output the plugin exposes, as kibench will poison it.
struct ExposedOutput {
  void *data = nullptr;
  std::size_t bytes = 0;
};

class PluginLane {
public:
  explicit PluginLane(std::shared_ptr<const PluginEntry> entry);
  ~PluginLane();
  PluginLane(const PluginLane &) = delete;
  PluginLane &operator=(const PluginLane &) = delete;

  [[nodiscard]] const PluginEntry &entry() const { return *entry_; }
  // The plugin's own answer (nullopt without an unsupported() function).
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &workload, Pass pass) const;

  // Creates the state on first use, then prepare(). `inputs` views stay
  // valid until release(); `input_ranges` are their bytes.
  void prepare(const kibench_plugin_inputs &inputs, std::vector<ByteRange> input_ranges);
  void before_sample(Pass pass, void *stream);
  void run(Pass pass, void *stream);
  // The outputs of the last run, checked: a full-pass run must expose every
  // student gradient of the workload's shape (for jsd the one of the
  // student log-probabilities, [T, V], as grad_student_input), each bf16, fp32 or fp64, on
  // the device exactly when the implementation runs on the GPU.
  OutputView outputs(const Workload &workload);
  // What outputs() exposes now (before any run: what the plugin has
  // allocated), for poisoning; overlaps with an input are refused.
  std::vector<ExposedOutput> exposed_outputs();
  // The optional poison() function.
  void poison(void *stream);
  // The plugin's own count, nullopt without a memory() function.
  std::optional<kibench_memory> memory() const;
  // Bytes of the outputs the last outputs() call exposed.
  [[nodiscard]] std::uint64_t output_bytes() const { return output_bytes_; }
  void release();

private:
  void check(std::int32_t status, std::string_view call, const char *message) const;
  std::vector<ExposedOutput> checked_views(const kibench_outputs &raw) const;

  std::shared_ptr<const PluginEntry> entry_;
  void *state_ = nullptr;
  bool prepared_ = false;
  std::vector<ByteRange> inputs_;
  Pass last_pass_ = Pass::full;
  bool has_run_ = false;
  std::uint64_t output_bytes_ = 0;
};

// kibench_workload_info of a workload, as kibench.h's C API fills it.
kibench_workload_info workload_info(const Workload &workload);

} // namespace kibench::plugin
