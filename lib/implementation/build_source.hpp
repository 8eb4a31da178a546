// The source this build of kibench was compiled from, recorded in every
// built-in implementation's revision: a pull request's build and main's
// never share an implementation digest. Defined in a file the build
// generates (cmake/source_revision.cmake).
#pragma once

#include "lib/implementation/revision_facts.hpp"

namespace kibench {

struct BuildSource {
  SourceRevision revision; // version, commit (when built from a git checkout), tree digest
  bool dirty = false;      // the sources differ from the commit
};

const BuildSource &build_source();

} // namespace kibench
