// The operation switch forwards every per-sample hook to the part it was
// prepared with: a hook it fails to forward falls back to Implementation's
// default, and a run with that protocol setting breaks only on the device.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/operation_switch.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/operations/registry.hpp"
#include "test/harness_test_support.hpp"

namespace kibench {
namespace {

class RecordingPart final : public test::NullImplementation {
public:
  RecordingPart(OperationKind kind, std::vector<std::string> &calls) : kind_(kind), calls_(calls) {}
  [[nodiscard]] std::string name() const override { return "switched"; }
  [[nodiscard]] bool runs(OperationKind kind) const override { return kind == kind_; }
  // The revision of code written for kind_.
  [[nodiscard]] RevisionFacts revision() const override {
    RevisionFacts facts;
    facts.operation_digest = kind_->digest();
    return facts;
  }
  void run(Pass) override { calls_.push_back(tag("run")); }
  void before_sample(Pass) override { calls_.push_back(tag("before_sample")); }
  // Its device, which records what the harness asks of it.
  std::unique_ptr<Device> open_device() override {
    auto device = std::make_unique<test::TestDevice>([] { return nullptr; });
    device->flush = [this] { calls_.push_back(tag("flush_caches")); };
    device->idle = [this] { calls_.push_back(tag("wait_idle")); };
    device->load = [this](double seconds) { calls_.push_back(tag("enqueue_power_load " + std::to_string(seconds))); };
    return device;
  }

private:
  std::string tag(const std::string &call) const {
    return (kind_ == operation_named("jsd") ? "jsd:" : "distill:") + call;
  }
  OperationKind kind_;
  std::vector<std::string> &calls_;
};

} // namespace

TEST_CASE("the operation switch forwards every per-sample hook, and its device, to the prepared part") {
  std::vector<std::string> calls;
  std::map<OperationKind, std::unique_ptr<Implementation>> parts;
  parts[operation_named("distill_jsd_loss")] =
      std::make_unique<RecordingPart>(operation_named("distill_jsd_loss"), calls);
  parts[operation_named("jsd")] = std::make_unique<RecordingPart>(operation_named("jsd"), calls);
  const auto impl = make_operation_switch("switched", std::move(parts));

  Workload workload;
  workload.operation_kind = operation_named("jsd");
  InputSet inputs(workload);
  impl->prepare(workload, inputs);
  const auto device = impl->open_device();
  device->flush_caches();
  impl->before_sample(Pass::full);
  device->wait_idle();
  device->enqueue_power_load(0.5);
  impl->run(Pass::full);
  CHECK(calls == std::vector<std::string>{"jsd:flush_caches", "jsd:before_sample", "jsd:wait_idle",
                                          "jsd:enqueue_power_load " + std::to_string(0.5), "jsd:run"});
  impl->release();
}

} // namespace kibench

namespace kibench {

TEST_CASE("a part reused for another operation gets that operation's revision digest") {
  std::vector<std::string> calls;
  std::map<OperationKind, std::unique_ptr<Implementation>> parts;
  // jsd's part also serves fused_linear_jsd here: its own revision names jsd.
  parts[operation_named("jsd")] = std::make_unique<RecordingPart>(operation_named("jsd"), calls);
  parts[operation_named("fused_linear_jsd")] = std::make_unique<RecordingPart>(operation_named("jsd"), calls);
  const auto impl = make_operation_switch("switched", std::move(parts));
  for (const char *name : {"jsd", "fused_linear_jsd"}) {
    INFO(name);
    CHECK(impl->revision_for(operation_named(name)).operation_digest == operation_named(name)->digest());
  }
}

} // namespace kibench
