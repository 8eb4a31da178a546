#include "lib/worker/remote_implementation.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>

#include <fmt/core.h>
#include <sys/mman.h>

#include "lib/implementation/implementation_failure.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/worker/protocol.hpp"
#include "lib/worker/worker_process.hpp"

namespace kibench::worker {

namespace {

// A read-only mapping of the worker's output memory.
class OutputMapping {
public:
  OutputMapping() = default;
  OutputMapping(const OutputMapping &) = delete;
  OutputMapping &operator=(const OutputMapping &) = delete;
  ~OutputMapping() { unmap(); }

  void map(const FileDescriptor &fd, std::size_t bytes) {
    unmap();
    if (bytes == 0) return;
    void *p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(fmt::format("mapping the worker's outputs: {}", std::strerror(errno)));
    data_ = p;
    bytes_ = bytes;
  }
  void unmap() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = nullptr;
    bytes_ = 0;
  }
  [[nodiscard]] const unsigned char *data() const { return static_cast<const unsigned char *>(data_); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

private:
  void *data_ = nullptr;
  std::size_t bytes_ = 0;
};

class RemoteImplementation;

// kibench's timer, run by the worker: start() and stop() bracket the one
// request that times the call there.
class RemoteTimer final : public SampleTimer {
public:
  explicit RemoteTimer(RemoteImplementation &owner) : owner_(owner) {}
  void start() override;
  void stop() override;
  double elapsed_ns() override;
  std::optional<double> clock_mhz() override;
  std::optional<double> power_w() override;
  [[nodiscard]] std::string name() const override;

private:
  RemoteImplementation &owner_;
};

// The worker's device, reached through requests: the flush, the idle wait
// and the power load run there, and its timer is a RemoteTimer.
class RemoteDevice final : public Device {
public:
  explicit RemoteDevice(RemoteImplementation &owner) : owner_(owner) {}
  std::unique_ptr<SampleTimer> make_timer() override;
  void flush_caches() override;
  void wait_idle() override;
  void enqueue_power_load(double seconds) override;

private:
  RemoteImplementation &owner_;
};

class RemoteImplementation final : public Implementation, public OwnInputs, public RemoteSustained {
public:
  RemoteImplementation(std::unique_ptr<Implementation> description, WorkerLaunch launch)
      : description_(std::move(description)), launch_(std::move(launch)) {}
  ~RemoteImplementation() override { end_worker(); }

  [[nodiscard]] std::string name() const override { return description_->name(); }
  [[nodiscard]] RevisionFacts revision() const override { return description_->revision(); }
  [[nodiscard]] RevisionFacts revision_for(OperationKind kind) const override {
    return description_->revision_for(kind);
  }
  [[nodiscard]] bool needs_gpu() const override { return description_->needs_gpu(); }
  [[nodiscard]] bool computes_loss() const override { return description_->computes_loss(); }
  [[nodiscard]] bool runs(OperationKind kind) const override { return description_->runs(kind); }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return description_->unsupported(w);
  }
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    return description_->unsupported_for(w, pass);
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    end_worker();
    process_ = std::make_unique<WorkerProcess>(launch_.argv);
    json::Object request{{"op", "prepare"}};
    request.set("workload", workload.manifest);
    request.set("operation", workload.operation);
    request.set("source", workload.source.string());
    // The worker generates the inputs itself; the host copy's fingerprints
    // (where this process has one) say what it must get.
    if (inputs.has_host()) request.set("inputs", fingerprints_to_json(inputs.host_fingerprints()));
    const json::Value reply =
        call(std::move(request), launch_.timeout_s * kPrepareAllowance + kStartupAllowanceS);
    variant_ = 0;
    timer_name_ = string_member(reply, "timer");
    labels_ = object_member(reply, "labels");
    labels_.set("isolation", "worker_process");
  }
  void before_sample(Pass pass) override {
    call({{"op", "before_sample"}, {"pass", std::string(to_string(pass))}});
  }
  void poison_outputs() override { call({{"op", "poison"}}); }
  void run(Pass pass) override {
    const std::string op = timing_ ? "timed_run" : "run";
    const json::Value reply = call({{"op", op}, {"pass", std::string(to_string(pass))}});
    if (timing_) last_sample_ = sample_from_json(reply);
  }
  std::optional<SustainedMeasurement> measure_sustained_there(const ProtocolSettings &settings,
                                                              double median_ns) override {
    // The phase runs for about sustained_time_s (more where a pass is
    // slower than its median says), with a quarter again of warm-up.
    const double expected_s =
        1.25 * static_cast<double>(sustained_invocations(settings, median_ns)) * median_ns * 1e-9;
    return sustained_from_json(call({{"op", "sustained"},
                                     {"pass", std::string(to_string(settings.pass))},
                                     {"sustained_time_s", settings.sustained_time_s},
                                     {"median_ns", median_ns}},
                                    launch_.timeout_s + 2.0 * expected_s));
  }
  OutputView outputs() override {
    Message reply = exchange({{"op", "outputs"}}, launch_.timeout_s + 10.0, "outputs");
    if (reply.attached.valid()) {
      shared_fd_ = std::move(reply.attached);
      mapping_.map(shared_fd_, static_cast<std::size_t>(number_member(reply.body, "capacity")));
    }
    return output_view_from_json(reply.body, mapping_.data(), mapping_.bytes());
  }
  [[nodiscard]] MemoryUse memory() const override {
    if (!process_) return {};
    MemoryUse m = memory_from_json(const_cast<RemoteImplementation *>(this)->call({{"op", "memory"}}));
    // The worker's copy of the inputs is its own, not the copy every lane
    // of this process shares: it counts as the lane's.
    m.workspace_bytes += m.input_bytes;
    m.input_bytes = 0;
    return m;
  }
  [[nodiscard]] json::Object run_labels() const override { return labels_; }
  std::unique_ptr<Device> open_device() override { return std::make_unique<RemoteDevice>(*this); }
  void release() override {
    if (!process_) return;
    std::exception_ptr failure;
    if (!dead_) {
      try {
        call({{"op", "release"}});
        call({{"op", "exit"}});
        exit_sent_ = true;
      } catch (const std::exception &) {
        failure = std::current_exception();
      }
    }
    end_worker();
    if (failure) std::rethrow_exception(failure);
  }

  void use_input_variant(int variant) override {
    if (variant == variant_) return;
    call({{"op", "inputs"}, {"variant", variant}});
    variant_ = variant;
  }

  // RemoteDevice's and RemoteTimer's side.
  void device_request(json::Object request) { call(std::move(request)); }
  void arm() { timing_ = true; }
  void disarm() { timing_ = false; }
  [[nodiscard]] const RemoteSample &last_sample() const { return last_sample_; }
  [[nodiscard]] const std::string &timer_name() const { return timer_name_; }

private:
  json::Value call(json::Object request, std::optional<double> timeout_s = std::nullopt) {
    const std::string op = string_member(json::Value(request), "op");
    return exchange(std::move(request), timeout_s.value_or(launch_.timeout_s + 10.0), op).body;
  }

  // What a request asked the implementation to do, for messages.
  static std::string doing(const std::string &op) {
    if (op == "timed_run") return "a timed sample";
    if (op == "run") return "an untimed call (its check or a warm-up)";
    if (op == "outputs") return "reading its outputs";
    if (op == "sustained") return "its sustained phase (back to back)";
    if (op == "before_sample") return "the untimed work before a sample";
    if (op == "poison") return "poisoning its outputs";
    if (op == "inputs") return "generating its next input set";
    return op;
  }

  // One request and its reply; a worker that failed, ended or went quiet
  // is a failure of the lane (ImplementationFailure), never of the run.
  Message exchange(json::Object request, double timeout_s, const std::string &op) {
    if (!process_ || dead_)
      throw ImplementationFailure(RunStatus::runtime_error,
                                  fmt::format("its worker process is not running (asked for {})", doing(op)));
    try {
      process_->channel().send(json::Value(std::move(request)));
      Message reply = process_->channel().receive(std::chrono::duration<double>(timeout_s));
      if (const auto failure = failure_from_reply(reply.body))
        throw ImplementationFailure(failure->status, failure->reason);
      return reply;
    } catch (const ChannelTimeout &) {
      dead_ = true;
      process_->kill();
      throw ImplementationFailure(
          RunStatus::timeout,
          fmt::format("its worker process did not finish {} within {:g} s (killed)", doing(op), timeout_s));
    } catch (const ChannelClosed &) {
      dead_ = true;
      const std::string how = process_->wait_for_end();
      throw ImplementationFailure(
          RunStatus::runtime_error,
          fmt::format("its worker process {} during {}: the implementation crashed or ended its process "
                      "(exit, os._exit, a signal); kibench went on without it",
                      how, doing(op)));
    }
  }

  // Ends the worker: told to exit where release() has not (a prepare
  // again, or destruction), then waited for, and killed after 5 s.
  void end_worker() {
    mapping_.unmap();
    shared_fd_ = FileDescriptor();
    if (process_ && !dead_) {
      if (!exit_sent_) {
        try {
          process_->channel().send(json::Value(json::Object{{"op", "exit"}}));
        } catch (const std::exception &) {
          // Gone already: waiting reaps it.
        }
      }
      process_->wait_for_end(5.0);
    }
    process_.reset();
    dead_ = false;
    timing_ = false;
    exit_sent_ = false;
  }

  std::unique_ptr<Implementation> description_;
  WorkerLaunch launch_;
  std::unique_ptr<WorkerProcess> process_;
  bool dead_ = false;
  bool timing_ = false;
  bool exit_sent_ = false;
  int variant_ = 0; // the input set the worker holds
  RemoteSample last_sample_;
  std::string timer_name_ = "worker";
  json::Object labels_;
  FileDescriptor shared_fd_;
  OutputMapping mapping_;
};

std::unique_ptr<SampleTimer> RemoteDevice::make_timer() {
  return std::make_unique<RemoteTimer>(owner_);
}
void RemoteDevice::flush_caches() {
  owner_.device_request({{"op", "flush"}});
}
void RemoteDevice::wait_idle() {
  owner_.device_request({{"op", "wait_idle"}});
}
void RemoteDevice::enqueue_power_load(double seconds) {
  owner_.device_request({{"op", "power_load"}, {"seconds", seconds}});
}

void RemoteTimer::start() {
  owner_.arm();
}
void RemoteTimer::stop() {
  owner_.disarm();
}
double RemoteTimer::elapsed_ns() {
  return owner_.last_sample().ns;
}
std::optional<double> RemoteTimer::clock_mhz() {
  return owner_.last_sample().clock_mhz;
}
std::optional<double> RemoteTimer::power_w() {
  return owner_.last_sample().power_w;
}
std::string RemoteTimer::name() const {
  return owner_.timer_name();
}

} // namespace

std::unique_ptr<Implementation> make_remote_implementation(std::unique_ptr<Implementation> description,
                                                           WorkerLaunch launch) {
  return std::make_unique<RemoteImplementation>(std::move(description), std::move(launch));
}

} // namespace kibench::worker
