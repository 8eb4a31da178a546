#include "kernels/plugin/plugin_lane.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "kernels/plugin/abi_codes.hpp"
#include "lib/implementation/implementation_failure.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench::plugin {

namespace {

using Message = std::array<char, KIBENCH_PLUGIN_MESSAGE_BYTES>;

// The plugin's message as one line of at most 300 bytes of UTF-8: bytes
// that are not UTF-8 become U+FFFD, and a long message is cut between
// characters, never inside one.
std::string one_line(const char *message) {
  std::string line = io::repair_utf8(message != nullptr ? message : "");
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > 300) line = std::string(io::cut_utf8(line, 297)) + "...";
  return line;
}

std::string shape_text(const kibench_tensor &t) {
  if (t.rank == 0) return "[]";
  if (t.rank == 1) return fmt::format("[{}]", t.shape[0]);
  if (t.rank == 2) return fmt::format("[{}, {}]", t.shape[0], t.shape[1]);
  return fmt::format("rank {}", t.rank);
}

// One output as the plugin describes it.
struct Described {
  const char *name;
  const kibench_tensor *tensor;
  std::int64_t rows, columns; // the workload's shape (columns 0: rank 1)
};

bool overlaps(const void *a, std::size_t a_bytes, const void *b, std::size_t b_bytes) {
  const auto *x = static_cast<const unsigned char *>(a);
  const auto *y = static_cast<const unsigned char *>(b);
  return a_bytes != 0 && b_bytes != 0 && x < y + b_bytes && y < x + a_bytes;
}

} // namespace

kibench_workload_info workload_info(const Workload &w) {
  kibench_workload_info out{};
  out.tokens = w.tokens;
  out.vocab = w.vocab;
  out.hidden = w.hidden;
  out.student_hidden = w.student_hidden;
  out.has_student_bias = w.student_bias.has_value() ? 1 : 0;
  out.has_teacher_bias = w.teacher_bias.has_value() ? 1 : 0;
  out.beta = w.scalars.beta;
  out.temperature = w.scalars.temperature;
  out.weight_hard = w.scalars.weight_hard;
  out.weight_soft = w.scalars.weight_soft;
  out.ignore_index = w.scalars.ignore_index;
  out.max_relative_error = w.correctness.max_relative_error;
  out.max_absolute_error = w.correctness.max_absolute_error;
  out.gemm_flops_forward = w.gemm_flops(false);
  out.gemm_flops_full = w.gemm_flops(true);
  return out;
}

PluginLane::PluginLane(std::shared_ptr<const PluginEntry> entry) : entry_(std::move(entry)) {}

PluginLane::~PluginLane() {
  if (state_ == nullptr) return;
  if (prepared_) {
    Message message{};
    entry_->functions->release(state_, message.data());
  }
  entry_->functions->destroy(state_);
}

void PluginLane::check(std::int32_t status, std::string_view call, const char *message) const {
  if (status == KIBENCH_PLUGIN_OK) return;
  std::string reason = one_line(message);
  if (reason.empty()) reason = fmt::format("failed with status {} and no message", status);
  throw ImplementationFailure(abi::run_status_of(status), fmt::format("{}: {}: {}", entry_->name, call, reason));
}

std::optional<std::string> PluginLane::unsupported(const Workload &workload, Pass pass) const {
  const auto *f = entry_->functions;
  if (f->unsupported == nullptr) return std::nullopt;
  const kibench_workload_info info = workload_info(workload);
  Message message{};
  const std::int32_t status = f->unsupported(f->context, &info, abi::pass_code(pass), message.data());
  message.back() = '\0';
  if (status == KIBENCH_PLUGIN_UNSUPPORTED) {
    std::string reason = one_line(message.data());
    return reason.empty() ? std::string("the plugin cannot run it (no reason given)") : reason;
  }
  check(status, "unsupported", message.data());
  return std::nullopt;
}

void PluginLane::prepare(const kibench_plugin_inputs &inputs, std::vector<ByteRange> input_ranges) {
  const auto *f = entry_->functions;
  Message message{};
  if (state_ == nullptr) {
    state_ = f->create(f->context, message.data());
    message.back() = '\0';
    if (state_ == nullptr) {
      const std::string reason = one_line(message.data());
      throw ImplementationFailure(
          RunStatus::runtime_error,
          fmt::format("{}: create: {}", entry_->name, reason.empty() ? "returned NULL" : reason));
    }
  }
  release();
  inputs_ = std::move(input_ranges);
  has_run_ = false;
  output_bytes_ = 0;
  const std::int32_t status = f->prepare(state_, &inputs, message.data());
  message.back() = '\0';
  // A failed prepare may have allocated part of its state: release() frees it.
  prepared_ = true;
  check(status, "prepare", message.data());
}

void PluginLane::before_sample(Pass pass, void *stream) {
  const auto *f = entry_->functions;
  if (f->before_sample == nullptr) return;
  Message message{};
  const std::int32_t status = f->before_sample(state_, abi::pass_code(pass), stream, message.data());
  message.back() = '\0';
  check(status, "before_sample", message.data());
}

void PluginLane::run(Pass pass, void *stream) {
  Message message{};
  const std::int32_t status = entry_->functions->run(state_, abi::pass_code(pass), stream, message.data());
  message.back() = '\0';
  last_pass_ = pass;
  has_run_ = true;
  check(status, "run", message.data());
}

std::vector<ExposedOutput> PluginLane::checked_views(const kibench_outputs &raw) const {
  std::vector<ExposedOutput> views;
  const Described all[] = {{"grad_student_input", &raw.grad_student_input, 0, 0},
                           {"grad_student_weight", &raw.grad_student_weight, 0, 0},
                           {"grad_student_bias", &raw.grad_student_bias, 0, 0}};
  for (const auto &d : all) {
    const kibench_tensor &t = *d.tensor;
    if (t.data == nullptr) continue;
    const auto type = abi::float_type_of(t.dtype);
    if (!type)
      throw ImplementationFailure(RunStatus::incorrect_dtype,
                                  fmt::format("{}: outputs: {} is {}; kibench compares bf16, fp32 or fp64",
                                              entry_->name, d.name, abi::dtype_name(t.dtype)));
    if (t.rank < 0 || t.rank > 2 || t.shape[0] < 0 || (t.rank == 2 && t.shape[1] < 0))
      throw ImplementationFailure(RunStatus::incorrect_shape,
                                  fmt::format("{}: outputs: {} has {}", entry_->name, d.name, shape_text(t)));
    if ((t.on_device != 0) != entry_->needs_gpu)
      throw ImplementationFailure(
          RunStatus::runtime_error,
          fmt::format("{}: outputs: {} is in {} memory; a {} implementation returns {} "
                      "memory",
                      entry_->name, d.name, t.on_device ? "device" : "host",
                      entry_->needs_gpu ? "GPU" : "CPU", entry_->needs_gpu ? "device" : "host"));
    const std::int64_t count = t.rank == 0 ? 1 : t.rank == 1 ? t.shape[0] : t.shape[0] * t.shape[1];
    const std::size_t bytes = static_cast<std::size_t>(count) * element_bytes(*type);
    for (const auto &input : inputs_)
      if (overlaps(t.data, bytes, input.data, input.bytes))
        throw ImplementationFailure(
            RunStatus::runtime_error,
            fmt::format("{}: outputs: {} overlaps kibench's input {} (inputs are read-only)", entry_->name,
                        d.name, input.tensor));
    views.push_back({const_cast<void *>(t.data), bytes});
  }
  return views;
}

std::vector<ExposedOutput> PluginLane::exposed_outputs() {
  kibench_outputs raw{};
  Message message{};
  const std::int32_t status = entry_->functions->outputs(state_, &raw, message.data());
  message.back() = '\0';
  check(status, "outputs", message.data());
  return checked_views(raw);
}

void PluginLane::poison(void *stream) {
  const auto *f = entry_->functions;
  if (f->poison == nullptr) return;
  Message message{};
  const std::int32_t status = f->poison(state_, stream, message.data());
  message.back() = '\0';
  check(status, "poison", message.data());
}

OutputView PluginLane::outputs(const Workload &w) {
  kibench_outputs raw{};
  Message message{};
  const std::int32_t status = entry_->functions->outputs(state_, &raw, message.data());
  message.back() = '\0';
  check(status, "outputs", message.data());
  const auto views = checked_views(raw);
  output_bytes_ = sizeof(double);
  for (const auto &v : views) output_bytes_ += v.bytes;

  OutputView out;
  out.loss = raw.loss;
  if (!has_run_ || last_pass_ == Pass::forward) return out;
  // jsd's one gradient is that of the student log-probabilities [T, V], in
  // grad_student_input; the LM-head operations' are those of x_s, W_s and b_s.
  const bool one_gradient = !w.operation_kind->has_lm_heads(); // jsd
  const Described wanted[] = {
      {"grad_student_input", &raw.grad_student_input, w.tokens, w.operation_kind->grad_student_input_shape(w)[1]},
      {"grad_student_weight", &raw.grad_student_weight, w.vocab, w.student_hidden},
      {"grad_student_bias", &raw.grad_student_bias, w.vocab, 0}};
  TensorRef *into[] = {&out.grad_student_input, &out.grad_student_weight, &out.grad_student_bias};
  for (std::size_t k = 0; k < 3; ++k) {
    const Described &d = wanted[k];
    const kibench_tensor &t = *d.tensor;
    const bool expected = k == 0 || (!one_gradient && (k == 1 || w.student_bias.has_value()));
    const std::string shape =
        d.columns > 0 ? fmt::format("[{}, {}]", d.rows, d.columns) : fmt::format("[{}]", d.rows);
    if (!expected) {
      if (t.data != nullptr)
        throw ImplementationFailure(RunStatus::incorrect_shape,
                                    fmt::format("{}: outputs: {} given, but {}", entry_->name, d.name,
                                                one_gradient ? "a jsd workload has one gradient, of the student "
                                                      "log-probabilities (grad_student_input)"
                                                    : "the workload has no student bias"));
      continue;
    }
    if (t.data == nullptr)
      throw ImplementationFailure(RunStatus::incorrect_shape,
                                  fmt::format("{}: outputs: {} is absent; a {} pass returns it ({})",
                                              entry_->name, d.name, to_string(last_pass_), shape));
    const bool matches = d.columns > 0 ? (t.rank == 2 && t.shape[0] == d.rows && t.shape[1] == d.columns)
                                       : (t.rank == 1 && t.shape[0] == d.rows);
    if (!matches)
      throw ImplementationFailure(RunStatus::incorrect_shape,
                                  fmt::format("{}: outputs: {} has shape {}, the workload's is {}",
                                              entry_->name, d.name, shape_text(t), shape));
    const std::int64_t count = d.columns > 0 ? d.rows * d.columns : d.rows;
    *into[k] = TensorRef{t.data, *abi::float_type_of(t.dtype), count, t.on_device != 0};
  }
  return out;
}

std::optional<kibench_memory> PluginLane::memory() const {
  const auto *f = entry_->functions;
  if (f->memory == nullptr || state_ == nullptr) return std::nullopt;
  kibench_memory m{};
  Message message{};
  const std::int32_t status = f->memory(state_, &m, message.data());
  message.back() = '\0';
  check(status, "memory", message.data());
  return m;
}

void PluginLane::release() {
  if (!prepared_) return;
  prepared_ = false;
  inputs_.clear();
  Message message{};
  const std::int32_t status = entry_->functions->release(state_, message.data());
  message.back() = '\0';
  check(status, "release", message.data());
}

} // namespace kibench::plugin
