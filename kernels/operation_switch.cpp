#include "kernels/operation_switch.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"

namespace kibench {
namespace {

class OperationSwitch final : public Implementation {
public:
  OperationSwitch(std::string name, std::map<OperationKind, std::unique_ptr<Implementation>> parts)
      : name_(std::move(name)), parts_(std::move(parts)) {
    if (parts_.empty()) throw std::logic_error(fmt::format("{}: an operation switch needs a part", name_));
    for (const auto &[kind, part] : parts_) {
      if (!part || part->name() != name_)
        throw std::logic_error(
            fmt::format("{}: the part for {} is not named {}", name_, to_string(kind), name_));
    }
    active_ = parts_.begin()->second.get();
  }

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] RevisionFacts revision() const override { return active_->revision(); }
  [[nodiscard]] RevisionFacts revision_for(OperationKind kind) const override {
    // A part written for another operation (jsd's code computing a
    // registered variant of it) is retargeted: its digest is `kind`'s.
    return parts_.contains(kind) ? revision_on(parts_.at(kind)->revision_for(kind), kind) : revision();
  }
  [[nodiscard]] bool needs_gpu() const override { return active_->needs_gpu(); }
  [[nodiscard]] bool computes_loss() const override { return active_->computes_loss(); }
  [[nodiscard]] bool runs(OperationKind kind) const override { return parts_.contains(kind); }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (!runs(w.operation_kind))
      return fmt::format("{} does not compute {}", name_, to_string(w.operation_kind));
    return parts_.at(w.operation_kind)->unsupported(w);
  }
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    if (!runs(w.operation_kind)) return unsupported(w);
    return parts_.at(w.operation_kind)->unsupported_for(w, pass);
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    if (!runs(workload.operation_kind)) throw std::invalid_argument(*unsupported(workload));
    if (prepared_ != nullptr) prepared_->release();
    active_ = parts_.at(workload.operation_kind).get();
    prepared_ = active_;
    active_->prepare(workload, inputs);
  }
  void before_sample(Pass pass) override { prepared().before_sample(pass); }
  void poison_outputs() override { prepared().poison_outputs(); }
  void run(Pass pass) override { prepared().run(pass); }
  OutputView outputs() override { return prepared().outputs(); }
  [[nodiscard]] MemoryUse memory() const override { return active_->memory(); }
  [[nodiscard]] json::Object run_labels() const override { return active_->run_labels(); }
  std::unique_ptr<Device> open_device() override { return prepared().open_device(); }
  void release() override {
    if (prepared_ != nullptr) prepared_->release();
    prepared_ = nullptr;
  }

private:
  Implementation &prepared() {
    if (prepared_ == nullptr) throw std::logic_error(fmt::format("{}: used before prepare()", name_));
    return *prepared_;
  }

  std::string name_;
  std::map<OperationKind, std::unique_ptr<Implementation>> parts_;
  Implementation *active_ = nullptr;   // answers questions: the prepared part, else the first
  Implementation *prepared_ = nullptr; // the part prepare() was last called on, until release()
};

} // namespace

std::unique_ptr<Implementation>
make_operation_switch(std::string name, std::map<OperationKind, std::unique_ptr<Implementation>> parts) {
  return std::make_unique<OperationSwitch>(std::move(name), std::move(parts));
}

} // namespace kibench
