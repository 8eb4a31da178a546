#include "lib/inputs/input_set.hpp"

#include <algorithm>
#include <stdexcept>

#include "lib/inputs/fingerprint.hpp"
#include "lib/inputs/generate.hpp"

namespace kibench {

Workload input_variant(const Workload &workload, int variant) {
  Workload w = workload;
  const std::uint64_t shift = static_cast<std::uint64_t>(variant) * kFingerprintGolden;
  for (GeneratorSpec *g : {&w.student_input, &w.student_weight, &w.teacher_input, &w.teacher_weight,
                           &w.student_log_probs, &w.teacher_log_probs, &w.target})
    g->seed += shift;
  for (auto *bias : {&w.student_bias, &w.teacher_bias})
    if (*bias) (*bias)->seed += shift;
  return w;
}

void InputSet::set_variant(int variant) {
  if (variant == variant_) return;
  if (variant < 0) throw std::logic_error("InputSet: a negative input variant");
  variant_ = variant;
  variant_workload_ = variant == 0 ? nullptr : std::make_unique<Workload>(input_variant(workload_, variant));
  restore_host();
}

const HostInputs &InputSet::host() {
  if (!host_) host_ = std::make_unique<HostInputs>(generate_host_inputs(generator_workload()));
  return *host_;
}

namespace {

// Every tensor of HostInputs by name: f(name, h.tensor...) for one set, or
// for the same tensor of several sets side by side.
template <typename F, typename... Inputs> void for_each_tensor(F &&f, Inputs &...h) {
  f("student_input", h.student_input...);
  f("student_weight", h.student_weight...);
  f("teacher_input", h.teacher_input...);
  f("teacher_weight", h.teacher_weight...);
  f("target", h.target...);
  f("student_bias", h.student_bias...);
  f("teacher_bias", h.teacher_bias...);
  f("student_log_probs", h.student_log_probs...);
  f("teacher_log_probs", h.teacher_log_probs...);
}

std::vector<InputFingerprint> fingerprints_of(HostInputs &h) {
  std::vector<InputFingerprint> out;
  for_each_tensor(
      [&](const char *name, const auto &v) {
        if (!v.empty()) out.push_back({name, "host", fingerprint_bytes(v.data(), v.size() * sizeof(v[0]))});
      },
      h);
  return out;
}

} // namespace

std::vector<InputFingerprint> InputSet::host_fingerprints() const {
  if (!host_) return {};
  return fingerprints_of(*host_);
}

std::vector<InputFingerprint> InputSet::generated_host_fingerprints() const {
  HostInputs fresh = generate_host_inputs(generator_workload());
  return fingerprints_of(fresh);
}

void InputSet::restore_host() {
  if (!host_) return;
  HostInputs fresh = generate_host_inputs(generator_workload());
  for_each_tensor(
      [](const char *, const auto &from, auto &to) { std::copy(from.begin(), from.end(), to.begin()); },
      fresh, *host_);
}

} // namespace kibench
