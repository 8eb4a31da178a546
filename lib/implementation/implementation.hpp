// One interface for everything kibench can run: the CPU paths, the GPU
// reference, the fused kernels, the cuBLAS floor and the oracles. Adding an
// implementation is one new file plus one line in kernels/registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "lib/implementation/device.hpp"
#include "lib/implementation/power_monitor.hpp"
#include "lib/implementation/revision_facts.hpp"
#include "lib/implementation/tensor_ref.hpp"
#include "lib/json/value.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

enum class Pass { forward, backward, full };
std::string_view to_string(Pass pass);
std::optional<Pass> pass_from_string(std::string_view text);
// Every name pass_from_string reads, as "a, b or c".
std::string pass_names();

// What an implementation produced in its last run. Gradients are empty
// for Pass::forward; grad_student_bias is empty when the workload has none.
// For jsd, grad_student_input is the gradient of the student log-probs
// [T, V] and the other two are empty; fused_linear_jsd has Hs = H and no bias.
struct OutputView {
  double loss = 0.0;
  TensorRef grad_student_input;  // [T, Hs]; jsd: [T, V]
  TensorRef grad_student_weight; // [V, Hs]
  TensorRef grad_student_bias;   // [V]
};

struct MemoryUse {
  std::uint64_t input_bytes = 0;     // inputs (shared by all implementations)
  std::uint64_t output_bytes = 0;    // loss and gradients
  std::uint64_t workspace_bytes = 0; // everything else the implementation holds
  std::uint64_t peak_bytes = 0;      // high-water mark of inputs+outputs+workspace
  // False where the workspace and the peak were not measured (a plugin
  // without memory(), a torch lane on the CPU): records say "unknown"
  // then, never 0; peak_bytes is inputs + outputs, a lower bound.
  bool measured = true;
};

class InputSet; // lib/inputs/input_set.hpp: host and device copies, made on demand

class Implementation {
public:
  virtual ~Implementation() = default;

  [[nodiscard]] virtual std::string name() const = 0;
  // What it is and where its code came from; lib/manifest/
  // implementation_manifest.hpp makes the ImplementationRevision of it.
  [[nodiscard]] virtual RevisionFacts revision() const = 0;
  // The same for its code that computes `kind` (an implementation of more
  // than one operation has a revision for each). Default: revision().
  [[nodiscard]] virtual RevisionFacts revision_for(OperationKind /*kind*/) const { return revision(); }
  [[nodiscard]] virtual bool needs_gpu() const = 0;
  // A pseudo-implementation (cublas-floor) times work without computing the
  // loss: it has no outputs to check.
  [[nodiscard]] virtual bool computes_loss() const { return true; }
  // Whether it computes `kind` at all (lib/operations/); the session skips
  // it, with the reason, on another operation's workloads. Each
  // implementation names the operations it computes (computes_one_of);
  // default: the default operation, distill_jsd_loss, only.
  [[nodiscard]] virtual bool runs(OperationKind kind) const { return kind == OperationKind(); }
  // nullopt when it can run this workload, else why not (one line).
  [[nodiscard]] virtual std::optional<std::string> unsupported(const Workload &w) const = 0;
  // The same for timing `pass` on `w`: an implementation that cannot time a
  // pass (a plugin without a backward-only path, say) says why. Default:
  // every pass it can run at all.
  [[nodiscard]] virtual std::optional<std::string> unsupported_for(const Workload &w, Pass /*pass*/) const {
    return unsupported(w);
  }

  // Allocates and binds inputs; not timed.
  virtual void prepare(const Workload &workload, InputSet &inputs) = 0;
  // Untimed work a sample of `pass` depends on (e.g. the forward before a
  // backward-only sample). Default: nothing.
  virtual void before_sample(Pass /*pass*/) {}
  // Fills every output with NaN so a run that skips an element is caught.
  virtual void poison_outputs() = 0;
  // One invocation; on a GPU it may return before the work completes.
  virtual void run(Pass pass) = 0;
  // Waits for the last run; views stay valid until the next run.
  virtual OutputView outputs() = 0;
  [[nodiscard]] virtual MemoryUse memory() const = 0;
  // What a reader of the record needs to know about this prepared run and
  // its revision cannot say, as BenchmarkRun labels (keys [a-z][a-z0-9_]*,
  // string values of at most 200 characters): e.g. fused's chunk plan and
  // the GEMM algorithms tuning chose. Valid after prepare(). Default: none.
  [[nodiscard]] virtual json::Object run_labels() const { return {}; }
  // The device its samples run on, with what the harness needs of it there
  // (lib/implementation/device.hpp): its timer, energy counter, cache
  // flush, idle wait and power load. Valid after prepare(); the harness
  // drops it before release().
  virtual std::unique_ptr<Device> open_device() = 0;
  // Frees everything prepare() allocated.
  virtual void release() = 0;
};

// The one-line reason `implementation` cannot run `w`'s operation, or
// nullopt when it runs it (then unsupported_for() has the last word).
std::optional<std::string> other_operation(const Implementation &implementation, const Workload &w);

} // namespace kibench
