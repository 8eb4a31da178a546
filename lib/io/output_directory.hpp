// A folder a command is about to write into (`kibench run --out`,
// `--save-tensors`), made ready and proven writable before any work, so that
// a file in the way, a dangling link or a read-only folder is refused at
// once (exit 2) instead of after minutes of measurement.
#pragma once

#include <filesystem>
#include <string_view>

namespace kibench::io {

// Creates `directory` (and its parents) if missing, creates and removes a
// probe file in it, and sweeps the stale staging directories of killed
// writers there (staging_lock.hpp). InputError "<flag> <directory>: <why>".
void prepare_output_directory(const std::filesystem::path &directory, std::string_view flag);

} // namespace kibench::io
