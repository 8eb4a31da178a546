#include "kernels/plugin/worker_server.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/plugin/plugin_backend.hpp"
#include "lib/error.hpp"
#include "lib/run/input_guard.hpp"
#include "lib/worker/channel.hpp"
#include "lib/worker/protocol.hpp"
#include "lib/worker/worker_process.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::plugin {

namespace {

using worker::Channel;
using worker::FileDescriptor;

// Shared memory the outputs are copied into; kibench maps it read-only.
// A new one (sent with the reply) only when the outputs outgrow it.
class SharedOutputs {
public:
  SharedOutputs() = default;
  SharedOutputs(const SharedOutputs &) = delete;
  SharedOutputs &operator=(const SharedOutputs &) = delete;
  ~SharedOutputs() { unmap(); }

  // True when a new region was made (its descriptor goes to kibench).
  bool reserve(std::size_t bytes) {
    if (fd_.valid() && bytes <= capacity_) return false;
    unmap();
    const std::size_t capacity = std::max<std::size_t>(bytes, 4096);
    FileDescriptor fd(::memfd_create("kibench-worker-outputs", MFD_CLOEXEC));
    if (!fd.valid()) throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (::ftruncate(fd.get(), static_cast<off_t>(capacity)) != 0)
      throw std::runtime_error(
          fmt::format("sizing the shared outputs to {} bytes: {}", capacity, std::strerror(errno)));
    void *p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(fmt::format("mapping the shared outputs: {}", std::strerror(errno)));
    fd_ = std::move(fd);
    data_ = static_cast<unsigned char *>(p);
    capacity_ = capacity;
    return true;
  }
  [[nodiscard]] unsigned char *data() { return data_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] int fd() const { return fd_.get(); }

private:
  void unmap() {
    if (data_ != nullptr) ::munmap(data_, capacity_);
    data_ = nullptr;
    capacity_ = 0;
  }
  FileDescriptor fd_;
  unsigned char *data_ = nullptr;
  std::size_t capacity_ = 0;
};

Pass pass_of(const json::Value &request) {
  const auto pass = pass_from_string(worker::string_member(request, "pass"));
  if (!pass) throw std::runtime_error("a request with an unknown pass");
  return *pass;
}

// One prepared workload: the worker's own inputs, generated here by
// kibench's generators, and their guard.
struct Prepared {
  Workload workload;
  std::unique_ptr<InputSet> inputs;
  std::unique_ptr<InputGuard> guard;
};

class Server {
public:
  Server(const Backend &backend, std::unique_ptr<Implementation> impl, Channel channel)
      : backend_(backend), impl_(std::move(impl)), channel_(std::move(channel)) {}

  int serve() {
    for (;;) {
      worker::Message request;
      try {
        request = channel_.receive();
      } catch (const worker::ChannelClosed &) {
        return 0; // kibench is gone: nothing left to answer
      }
      std::string op;
      json::Object reply{{"ok", true}};
      int attach = -1;
      try {
        op = worker::string_member(request.body, "op");
        if (op == "exit") {
          channel_.send(json::Value(std::move(reply)));
          return 0;
        }
        handle(op, request.body, reply, attach);
      } catch (const std::exception &e) {
        reply = worker::failure_to_json(failure_of(e));
        attach = -1;
      }
      try {
        try {
          channel_.send(json::Value(std::move(reply)), attach);
        } catch (const worker::ChannelClosed &) {
          throw;
        } catch (const std::exception &e) {
          // A reply that cannot be sent (a figure JSON cannot hold) is the
          // lane's failure, not the worker's end.
          channel_.send(json::Value(worker::failure_to_json(
              {RunStatus::runtime_error, fmt::format("its worker's reply to {}: {}", op, e.what())})));
        }
      } catch (const worker::ChannelClosed &) {
        return 0;
      }
    }
  }

private:
  void handle(const std::string &op, const json::Value &request, json::Object &reply, int &attach) {
    if (op == "prepare") return prepare(request, reply);
    if (op == "release" && !prepared_) return; // after a prepare that failed: nothing to free
    if (!prepared_) throw std::logic_error(fmt::format("worker: {} before prepare", op));
    if (op == "poison") {
      impl_->poison_outputs();
    } else if (op == "before_sample") {
      impl_->before_sample(pass_of(request));
    } else if (op == "run") {
      impl_->run(pass_of(request));
    } else if (op == "timed_run") {
      const Pass pass = pass_of(request);
      // kibench's timer around the call alone, as in kibench's own process.
      timer_->start();
      impl_->run(pass);
      timer_->stop();
      worker::RemoteSample sample{timer_->elapsed_ns(), timer_->clock_mhz(), timer_->power_w()};
      for (auto &[key, value] : worker::sample_to_json(sample)) reply.set(key, value);
    } else if (op == "sustained") {
      // The sustained phase here, back to back with this process's timer
      // and power monitor (lib/harness/sustained.hpp).
      ProtocolSettings settings;
      settings.pass = pass_of(request);
      settings.sustained_time_s = worker::number_member(request, "sustained_time_s");
      const auto sustained =
          measure_sustained(*impl_, *device_, settings, worker::number_member(request, "median_ns"));
      for (auto &[key, value] : worker::sustained_to_json(sustained)) reply.set(key, value);
    } else if (op == "outputs") {
      outputs(reply, attach);
    } else if (op == "memory") {
      for (auto &[key, value] : worker::memory_to_json(impl_->memory())) reply.set(key, value);
    } else if (op == "flush") {
      device_->flush_caches();
    } else if (op == "wait_idle") {
      device_->wait_idle();
    } else if (op == "power_load") {
      device_->enqueue_power_load(worker::number_member(request, "seconds"));
    } else if (op == "inputs") {
      // Another of the workload's input sets, generated in place (the
      // lane holds views of these buffers), and guarded afresh.
      const double variant = worker::number_member(request, "variant");
      if (!(variant >= 0.0 && variant <= 1.0e6) || variant != static_cast<int>(variant))
        throw std::runtime_error("worker: an input variant that is not a small whole number");
      prepared_->inputs->set_variant(static_cast<int>(variant));
      backend_.restore_inputs(*prepared_->inputs);
      prepared_->guard->expect_current();
      return;
    } else if (op == "release") {
      timer_.reset();
      device_.reset();
      impl_->release();
      prepared_.reset();
      return;
    } else {
      throw std::logic_error(fmt::format("worker: unknown request \"{}\"", op));
    }
    check_inputs(op);
  }

  void prepare(const json::Value &request, json::Object &reply) {
    if (prepared_) throw std::logic_error("worker: prepare twice");
    const json::Value *workload = request.as_object().find("workload");
    const json::Value *operation = request.as_object().find("operation");
    if (workload == nullptr || operation == nullptr)
      throw std::runtime_error("worker: prepare without a workload");
    auto p = std::make_unique<Prepared>(
        Prepared{workload_from_json(*workload, *operation, worker::string_member(request, "source")), nullptr,
                 nullptr});
    p->inputs = std::make_unique<InputSet>(p->workload);
    impl_->prepare(p->workload, *p->inputs);
    // The inputs the lane got are kibench's: the same fingerprints as the
    // copy kibench holds, where it sent them.
    if (const json::Value *expected = request.as_object().find("inputs")) {
      const auto want = worker::fingerprints_from_json(*expected);
      for (const InputFingerprint &got : backend_.input_fingerprints(*p->inputs))
        for (const InputFingerprint &w : want)
          if (w.tensor == got.tensor && w.value != got.value)
            throw std::logic_error(
                fmt::format("worker: its {} ({} copy) is not kibench's", got.tensor, got.copy));
    }
    p->guard = std::make_unique<InputGuard>(backend_, *p->inputs);
    // The device it runs on, and the timer every timed sample of this
    // preparation uses, made once.
    device_ = impl_->open_device();
    timer_ = device_->make_timer();
    prepared_ = std::move(p);
    reply.set("timer", timer_->name());
    reply.set("labels", impl_->run_labels());
  }

  // The lane's outputs, copied into the shared memory.
  void outputs(json::Object &reply, int &attach) {
    const OutputView out = impl_->outputs();
    if (shared_.reserve(worker::gradient_bytes(out))) attach = shared_.fd();
    json::Object tensors;
    std::size_t at = 0;
    for (const worker::OutputSlot &slot : worker::kOutputSlots) {
      const TensorRef &t = out.*slot.member;
      if (t.empty()) continue;
      const std::vector<unsigned char> host = backend_.to_host_bytes(t);
      std::memcpy(shared_.data() + at, host.data(), host.size());
      tensors.set(slot.name, json::Object{{"type", std::string(worker::element_type_name(t.type))},
                                          {"count", static_cast<std::int64_t>(t.count)},
                                          {"offset", static_cast<std::uint64_t>(at)}});
      at += host.size();
    }
    reply.set("loss", worker::double_to_json(out.loss));
    reply.set("tensors", std::move(tensors));
    reply.set("capacity", static_cast<std::uint64_t>(shared_.capacity()));
  }

  // A call that wrote into the worker's copy of the inputs fails the lane;
  // the copy is restored, so the lane's later calls (if any) see kibench's.
  void check_inputs(const std::string &op) {
    if (const auto changed = prepared_->guard->check_and_restore())
      throw ImplementationFailure(
          RunStatus::runtime_error,
          fmt::format(
              "wrote into its copy of the shared input {} during a call to {}, in its worker process: "
              "implementations must not change their inputs (kibench's own copy is out of its reach)",
              *changed, op));
  }

  const Backend &backend_;
  std::unique_ptr<Implementation> impl_;
  Channel channel_;
  std::unique_ptr<Prepared> prepared_;
  std::unique_ptr<Device> device_; // the prepared implementation's (open_device())
  std::unique_ptr<SampleTimer> timer_;
  SharedOutputs shared_;
};

} // namespace

int serve_worker(const WorkerOptions &options, const std::vector<InProcessPlugin> &in_process) {
  struct stat socket_stat {};
  if (::fstat(worker::kWorkerSocketFd, &socket_stat) != 0 || !S_ISSOCK(socket_stat.st_mode))
    throw InputError(fmt::format("kibench worker: descriptor {} is not a socket: kibench starts its workers "
                                 "itself (kibench run --isolation)",
                                 worker::kWorkerSocketFd));
  // Ends with kibench, whatever ends kibench.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  PluginRunSettings settings = options.settings;
  settings.isolation = Isolation::in_process; // this is the process it is isolated in
  const std::vector<std::filesystem::path> libraries(options.libraries.begin(), options.libraries.end());
  const auto catalog =
      std::make_shared<const PluginCatalog>(libraries, in_process, builtin_implementation_names(), settings);
  if (!catalog->find(options.lane))
    throw InputError(
        fmt::format("kibench worker: --lane {}: no plugin implementation of that name", options.lane));
  const auto backend = make_backend(catalog);
  auto impl = backend->make(options.lane);
  Server server(*backend, std::move(impl), Channel(FileDescriptor(worker::kWorkerSocketFd)));
  return server.serve();
}

} // namespace kibench::plugin
