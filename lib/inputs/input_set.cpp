#include "lib/inputs/input_set.hpp"

#include <algorithm>

#include "lib/inputs/fingerprint.hpp"
#include "lib/inputs/generate.hpp"

namespace kibench {

const HostInputs &InputSet::host() {
  if (!host_) host_ = std::make_unique<HostInputs>(generate_host_inputs(workload_));
  return *host_;
}

namespace {

template <typename F> void for_each_tensor(HostInputs &h, F &&f) {
  f("student_input", h.student_input);
  f("student_weight", h.student_weight);
  f("teacher_input", h.teacher_input);
  f("teacher_weight", h.teacher_weight);
  f("target", h.target);
  f("student_bias", h.student_bias);
  f("teacher_bias", h.teacher_bias);
  f("student_log_probs", h.student_log_probs);
  f("teacher_log_probs", h.teacher_log_probs);
}

std::vector<InputFingerprint> fingerprints_of(HostInputs &h) {
  std::vector<InputFingerprint> out;
  for_each_tensor(h, [&](const char *name, const auto &v) {
    if (!v.empty()) out.push_back({name, "host", fingerprint_bytes(v.data(), v.size() * sizeof(v[0]))});
  });
  return out;
}

} // namespace

std::vector<InputFingerprint> InputSet::host_fingerprints() const {
  if (!host_) return {};
  return fingerprints_of(*host_);
}

std::vector<InputFingerprint> InputSet::generated_host_fingerprints() const {
  HostInputs fresh = generate_host_inputs(workload_);
  return fingerprints_of(fresh);
}

void InputSet::restore_host() {
  if (!host_) return;
  HostInputs fresh = generate_host_inputs(workload_);
  auto copy = [](auto &from, auto &to) { std::copy(from.begin(), from.end(), to.begin()); };
  copy(fresh.student_input, host_->student_input);
  copy(fresh.student_weight, host_->student_weight);
  copy(fresh.teacher_input, host_->teacher_input);
  copy(fresh.teacher_weight, host_->teacher_weight);
  copy(fresh.target, host_->target);
  copy(fresh.student_bias, host_->student_bias);
  copy(fresh.teacher_bias, host_->teacher_bias);
  copy(fresh.student_log_probs, host_->student_log_probs);
  copy(fresh.teacher_log_probs, host_->teacher_log_probs);
}

} // namespace kibench
