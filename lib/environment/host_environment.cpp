#include <fstream>
#include <sstream>
#include <string>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>
#include <simdjson.h>
#include <sodium.h>

#include "lib/environment/environment.hpp"

namespace kibench {

namespace {

std::string read_key(const char *file, std::string_view key, char separator) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto pos = line.find(separator);
    if (pos == std::string::npos) continue;
    std::string value = line.substr(pos + 1);
    const auto first = value.find_first_not_of(" \t\"");
    const auto last = value.find_last_not_of(" \t\"");
    return first == std::string::npos ? "" : value.substr(first, last - first + 1);
  }
  return "";
}

std::string cpu_vendor(const std::string &vendor_id) {
  if (vendor_id == "GenuineIntel") return "intel";
  if (vendor_id == "AuthenticAMD") return "amd";
  return "unknown";
}

std::string compiler_name() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

} // namespace

EnvironmentFacts probe_host_environment() {
  EnvironmentFacts f;
  utsname names{};
  ::uname(&names);
  f.vendor = cpu_vendor(read_key("/proc/cpuinfo", "vendor_id", ':'));
  f.product = read_key("/proc/cpuinfo", "model name", ':');
  if (f.product.empty()) f.product = names.machine;
  f.architecture = names.machine;
  for (char &c : f.architecture) c = (c == '-') ? '_' : c;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0)
    f.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  f.operating_system = read_key("/etc/os-release", "PRETTY_NAME", '=');
  f.kernel = names.release;
  f.compiler = compiler_name();
  f.libraries["kibench"] = KIBENCH_VERSION;
  f.libraries["fmt"] =
      fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100);
  f.libraries["libsodium"] = sodium_version_string();
  f.libraries["simdjson"] = fmt::format("{}.{}.{}", static_cast<int>(simdjson::SIMDJSON_VERSION_MAJOR),
                                        static_cast<int>(simdjson::SIMDJSON_VERSION_MINOR),
                                        static_cast<int>(simdjson::SIMDJSON_VERSION_REVISION));
  f.labels["host_threads"] = std::to_string(std::thread::hardware_concurrency());
  return f;
}

} // namespace kibench
