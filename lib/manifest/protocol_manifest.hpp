#pragma once

#include <string>

#include "lib/harness/protocol_settings.hpp"
#include "lib/json/value.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// The program that took the samples: spec.harness, and the first word of
// the protocol's metadata.name and title. The method (comparability.family,
// the notes) is the settings' whoever measured; the harness is part of the
// digest, so another program's runs never share kibench run's protocol.
struct ProtocolHarness {
  std::string name = "kibench";
  std::string version = KIBENCH_VERSION;
};

// The BenchmarkProtocol for these settings; `oracle` names what outputs are
// checked against (e.g. "oracle-fp64") and `policy` how (its comparator, and
// the rule in words in spec.correctness.reference).
json::Value protocol_manifest(const ProtocolSettings &settings, const std::string &oracle,
                              const CorrectnessPolicy &policy, const ProtocolHarness &harness = {});

} // namespace kibench
