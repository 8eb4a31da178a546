#include "lib/digest/file_reference.hpp"

#include <fmt/core.h>

#include "lib/error.hpp"

namespace kibench {

namespace fs = std::filesystem;

std::optional<fs::path> local_file_of(std::string_view uri, const fs::path &manifest_file,
                                      std::string_view label, std::string_view field) {
  std::string_view location = uri;
  if (location.starts_with("file://")) {
    location.remove_prefix(std::string_view("file://").size());
  } else if (location.find("://") != std::string_view::npos) {
    return std::nullopt;
  }
  const auto refuse = [&](std::string_view problem) {
    return InputError(fmt::format("{}: {}.uri: {}: {}", label, field, uri, problem));
  };
  if (location.empty()) throw refuse("names no file");
  const fs::path directory = manifest_file.has_parent_path() ? manifest_file.parent_path() : fs::path(".");
  fs::path path(location);
  if (path.is_relative()) path = directory / path;

  // Both sides with every symbolic link resolved: a link inside the
  // directory that leads out of it is outside too.
  std::error_code error;
  const fs::path base = fs::weakly_canonical(directory, error);
  if (error) throw refuse(fmt::format("cannot resolve {}: {}", directory.string(), error.message()));
  const fs::path target = fs::weakly_canonical(path, error);
  if (error) throw refuse(fmt::format("cannot resolve {}: {}", path.string(), error.message()));
  const fs::path inside = target.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..")
    throw refuse(
        fmt::format("outside {} (only files in the manifest's directory are read)", directory.string()));
  if (inside == ".") throw refuse("names the manifest's directory, not a file");
  return path;
}

} // namespace kibench
