// The file a manifest's {uri, digest} reference names (spec.timing.rawSamples,
// spec.evidence.logs): a path relative to the manifest's directory, or a
// file:// URI. Only a file inside that directory is ever resolved, symbolic
// links followed, so a manifest cannot make kibench read /dev/zero, another
// run's files or anything else on the machine.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace kibench {

// nullopt for a URI of another scheme (https://...): not a local file.
// InputError "<label>: <field>.uri: <uri>: <problem>" when the URI names the
// directory itself or anything outside it.
std::optional<std::filesystem::path> local_file_of(std::string_view uri,
                                                   const std::filesystem::path &manifest_file,
                                                   std::string_view label, std::string_view field);

} // namespace kibench
