#include "lib/environment/environment.hpp"
#include "lib/manifest/envelope.hpp"

namespace kibench {

json::Value environment_manifest(const EnvironmentFacts &f) {
  json::Object hardware{{"vendor", f.vendor}, {"product", f.product}, {"architecture", f.architecture}};
  if (!f.form_factor.empty()) hardware.set("formFactor", f.form_factor);
  if (f.memory_bytes) hardware.set("memoryBytes", *f.memory_bytes);
  hardware.set("count", f.count);
  if (!f.interconnect.empty()) hardware.set("interconnect", f.interconnect.substr(0, 200));

  json::Object software;
  auto set_if = [&](const char *key, const std::string &value) {
    if (!value.empty()) software.set(key, value);
  };
  set_if("operatingSystem", f.operating_system);
  set_if("kernel", f.kernel);
  set_if("driver", f.driver);
  set_if("cudaToolkit", f.cuda_toolkit);
  set_if("compiler", f.compiler);
  json::Object libraries;
  for (const auto &[name, version] : f.libraries) libraries.set(name, version);
  if (!libraries.empty()) software.set("libraries", std::move(libraries));

  json::Object settings{{"clocksLocked", f.clocks_locked}};
  if (f.ecc_enabled) settings.set("eccEnabled", *f.ecc_enabled);
  if (f.persistence_mode) settings.set("persistenceMode", *f.persistence_mode);
  if (f.power_limit_watts && *f.power_limit_watts > 0) settings.set("powerLimitWatts", *f.power_limit_watts);
  if (!f.environment_variables.empty()) {
    json::Object variables;
    for (const auto &[name, value] : f.environment_variables) variables.set(name, value.substr(0, 500));
    settings.set("environmentVariables", std::move(variables));
  }

  json::Object labels;
  for (const auto &[key, value] : f.labels) labels.set(key, value.substr(0, 200));
  const std::string name = kebab("kibench-" + f.product + "-" + f.form_factor + "-" + f.driver);
  json::Object metadata{{"name", name}, {"title", "kibench host · " + f.product}};
  if (!labels.empty()) metadata.set("labels", std::move(labels));
  return make_manifest("ExecutionEnvironment", std::move(metadata),
                       json::Object{{"hardware", std::move(hardware)},
                                    {"software", std::move(software)},
                                    {"settings", std::move(settings)}});
}

} // namespace kibench
