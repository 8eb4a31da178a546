// The one builder of ImplementationRevision manifests: every
// implementation (built in, a plugin, a Python callable, another harness's
// import) describes itself with RevisionFacts, and this turns the facts
// into KernelIndex's format.
#pragma once

#include "lib/implementation/revision_facts.hpp"
#include "lib/json/value.hpp"

namespace kibench {

// Throws InputError naming the field when a fact breaks the schema's
// patterns (a name outside [a-z0-9][a-z0-9._-]*, a commit that is not 40
// hex digits, a digest that is not sha256, an empty version, language or
// operation): facts may come from outside kibench.
[[nodiscard]] json::Value implementation_manifest(const RevisionFacts &facts);

} // namespace kibench
