#pragma once

#include <string>

#include "harness/protocol_settings.hpp"
#include "json/value.hpp"

namespace kibench {

// The BenchmarkProtocol for these settings; `oracle` names what outputs are
// checked against (e.g. "oracle-fp64").
json::Value protocol_manifest(const ProtocolSettings &settings, const std::string &oracle);

} // namespace kibench
