#include "lib/run/parallel_gpus.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char **environ;

namespace kibench {
namespace {

// CUDA_VISIBLE_DEVICES's entries ("0,1,3" or UUIDs), or none when unset or empty.
std::vector<std::string> listed_devices(const std::optional<std::string> &visible) {
  std::vector<std::string> out;
  if (!visible) return out;
  std::size_t from = 0;
  while (from <= visible->size()) {
    const std::size_t comma = visible->find(',', from);
    const std::string entry = visible->substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (!entry.empty()) out.push_back(entry);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

// The environment with CUDA_VISIBLE_DEVICES set to `device` (replaced where present).
std::vector<std::string> environment_with_device(const std::string &device) {
  std::vector<std::string> out;
  for (char **e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) out.emplace_back(*e);
  out.push_back("CUDA_VISIBLE_DEVICES=" + device);
  return out;
}

std::vector<char *> pointers(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int severity(int exit_code) {
  return exit_code == 0 ? 0 : exit_code == 1 ? 1 : 2; // 2 and 3 (and anything else) above a failed check
}

} // namespace

std::vector<GpuWorker> plan_gpu_workers(std::size_t gpus, const std::optional<Shard> &host,
                                        const std::optional<std::string> &visible_devices,
                                        const std::filesystem::path &log_folder) {
  if (gpus == 0) throw std::logic_error("plan_gpu_workers: no GPU");
  const std::vector<std::string> listed = listed_devices(visible_devices);
  const Shard base = host ? *host : Shard{0, 1, "--parallel-gpus"};
  std::vector<GpuWorker> workers;
  for (std::size_t g = 0; g < gpus; ++g) {
    GpuWorker w;
    w.gpu = g;
    w.device = g < listed.size() ? listed[g] : std::to_string(g);
    // Points i with i mod N = K, dealt to the G GPUs: i mod N·G = K + N·g.
    w.shard = Shard{base.index + base.count * g, base.count * gpus,
                    host ? fmt::format("--parallel-gpus within {} from {}", base.text(), base.source)
                         : std::string("--parallel-gpus")};
    w.log = log_folder / fmt::format("parallel-gpus.shard-{}-of-{}.log", w.shard.index, w.shard.count);
    workers.push_back(std::move(w));
  }
  return workers;
}

int run_gpu_workers(const std::vector<std::string> &command, std::vector<GpuWorker> &workers) {
  if (command.empty()) throw std::logic_error("run_gpu_workers: no command");
  std::vector<pid_t> pids(workers.size(), -1);
  for (std::size_t k = 0; k < workers.size(); ++k) {
    GpuWorker &w = workers[k];
    const int log = ::open(w.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", w.log.string(), std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, log, STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO);
    std::vector<std::string> argv = command;
    argv.push_back("--shard");
    argv.push_back(w.shard.text());
    std::vector<std::string> env = environment_with_device(w.device);
    std::vector<char *> args = pointers(argv), envp = pointers(env);
    const int error = ::posix_spawn(&pids[k], argv.front().c_str(), &actions, nullptr, args.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(log);
    if (error != 0) {
      w.exit_code = 3;
      pids[k] = -1;
      fmt::print(stderr, "kibench: --parallel-gpus: cannot start the worker for GPU {}: {}\n", w.gpu,
                 std::strerror(error));
    }
  }
  int worst = 0;
  for (std::size_t k = 0; k < workers.size(); ++k) {
    if (pids[k] > 0) {
      int status = 0;
      while (::waitpid(pids[k], &status, 0) < 0 && errno == EINTR) {
      }
      workers[k].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    }
    if (severity(workers[k].exit_code) > severity(worst)) worst = workers[k].exit_code;
  }
  return worst;
}

} // namespace kibench
