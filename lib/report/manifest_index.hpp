// The manifests behind a set of runs, by digest: compare reads a run's
// workload, protocol and environment only for their digests and names; the
// report also shows what they say (axes, titles, the hardware), so it
// reads the same files again and keeps them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/json/path.hpp"
#include "lib/json/value.hpp"

namespace kibench::report {

class ManifestIndex {
public:
  // Every manifest in the files the runs were read from and beside them
  // (a run directory's workload.json, environment.json, ...).
  explicit ManifestIndex(const std::vector<compare::ComparedRun> &runs);

  // The manifest of `kind` with identity digest `digest`; nullptr if none.
  // Two files may hold manifests of one digest that differ in metadata
  // (titles are not hashed): the one in `run`'s own folder wins.
  [[nodiscard]] const json::Value *find(std::string_view digest, std::string_view kind) const;
  [[nodiscard]] const json::Value *find(std::string_view digest, std::string_view kind,
                                        const compare::ComparedRun &run) const;

private:
  ManifestSet set_;
  std::multimap<std::string, std::size_t, std::less<>> by_digest_;
};

// member_at and string_at: json/path.hpp.
using json::member_at;
using json::string_at;

} // namespace kibench::report
