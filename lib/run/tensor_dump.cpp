#include "lib/run/tensor_dump.hpp"

#include <fmt/core.h>

#include "lib/digest/digest.hpp"
#include "lib/io/npy.hpp"
#include "lib/json/canonical.hpp"

namespace kibench {

namespace {

struct StorageType {
  const char *logical;
  const char *descr;
};

StorageType storage_of(ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return {"bf16", "<u2"};
  case ElementType::fp32:
    return {"fp32", "<f4"};
  case ElementType::fp64:
    return {"fp64", "<f8"};
  }
  return {"fp64", "<f8"};
}

} // namespace

TensorDump::TensorDump(std::filesystem::path directory, const Backend &backend)
    : dir_(std::move(directory)), backend_(backend) {}

void TensorDump::add(const std::string &file, const std::string &tensor, const std::string &dtype,
                     std::string_view descr, const std::vector<std::int64_t> &shape, const void *data,
                     std::size_t bytes_per_element) {
  const std::string bytes = io::npy_bytes(descr, shape, data, bytes_per_element);
  dir_.write(file, bytes);
  json::Array dims;
  for (auto d : shape) dims.emplace_back(d);
  index_.emplace_back(json::Object{{"file", file},
                                   {"tensor", tensor},
                                   {"dtype", dtype},
                                   {"storage", std::string(descr)},
                                   {"shape", std::move(dims)},
                                   {"sha256", sha256_digest(bytes)}});
}

void TensorDump::add_inputs(InputSet &inputs) {
  const Workload &w = inputs.workload();
  const HostInputs &h = inputs.host();
  auto bf16 = [&](const char *name, const std::vector<std::uint16_t> &v, std::vector<std::int64_t> shape) {
    if (!v.empty()) add(fmt::format("input.{}.bf16.npy", name), name, "bf16", "<u2", shape, v.data(), 2);
  };
  bf16("student_input", h.student_input, {w.tokens, w.student_hidden});
  bf16("student_weight", h.student_weight, {w.vocab, w.student_hidden});
  bf16("teacher_input", h.teacher_input, {w.tokens, w.hidden});
  bf16("teacher_weight", h.teacher_weight, {w.vocab, w.hidden});
  bf16("student_bias", h.student_bias, {w.vocab});
  bf16("teacher_bias", h.teacher_bias, {w.vocab});
  add("input.target.int64.npy", "target", "int64", "<i8", {w.tokens}, h.target.data(), 8);
  auto fp32 = [&](const char *name, const std::vector<float> &v) {
    if (!v.empty()) add(fmt::format("input.{}.fp32.npy", name), name, "fp32", "<f4", {w.tokens, w.vocab}, v.data(), 4);
  };
  fp32("student_log_probs", h.student_log_probs);
  fp32("teacher_log_probs", h.teacher_log_probs);
}

void TensorDump::add_outputs(const std::string &who, const OutputView &out, const Workload &w) {
  const double loss = out.loss;
  add(fmt::format("{}.loss.fp64.npy", who), who + ".loss", "fp64", "<f8", {1}, &loss, 8);
  auto one = [&](const char *name, const TensorRef &t, std::vector<std::int64_t> shape) {
    if (t.empty()) return;
    const StorageType s = storage_of(t.type);
    const auto bytes = backend_.to_host_bytes(t);
    add(fmt::format("{}.{}.{}.npy", who, name, s.logical), fmt::format("{}.{}", who, name), s.logical,
        s.descr, shape, bytes.data(), element_bytes(t.type));
  };
  // The gradient of the operation's first input (jsd's: the student log-probs, [T, V]).
  one("grad_student_input", out.grad_student_input, w.operation_kind->grad_student_input_shape(w));
  one("grad_student_weight", out.grad_student_weight, {w.vocab, w.student_hidden});
  one("grad_student_bias", out.grad_student_bias, {w.vocab});
}

void TensorDump::commit() {
  json::Object index{{"format", "kibench.dev/tensors/v1"},
                     {"note", "bf16 tensors are stored as uint16 bit patterns: "
                              "np.load(f).astype(np.uint32) << 16, viewed as float32"},
                     {"tensors", index_}};
  dir_.write("index.json", json::pretty(index) + "\n");
  dir_.commit();
}

} // namespace kibench
