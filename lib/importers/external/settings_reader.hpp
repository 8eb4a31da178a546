// `settings` of an external result: the ProtocolSettings the harness
// measured with, spelled as kibench spells them.
#pragma once

#include "lib/harness/protocol_settings.hpp"
#include "lib/workload/field_reader.hpp"

namespace kibench::importers::external {

// Every member is required; an InputError names the first bad one.
ProtocolSettings read_protocol_settings(const detail::Field &field);

} // namespace kibench::importers::external
