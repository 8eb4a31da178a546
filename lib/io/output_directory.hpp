// The folders a command is about to write into (`kibench run --out`,
// `--save-tensors`), made ready and proven writable before any work, so that
// a file in the way, a dangling link or a read-only folder is refused at
// once (exit 2) instead of after minutes of measurement.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace kibench::io {

struct OutputFolder {
  std::filesystem::path path;
  std::string_view flag; // "--out": names it in messages
};

// For each folder: creates it (and its parents) if missing, creates and
// removes a probe file in it, and sweeps the stale staging directories of
// killed writers there (staging_lock.hpp). InputError "<flag> <path>: <why>"
// for the first that fails; the folders this call created are then removed
// again, so a refusal leaves nothing behind.
void prepare_output_directories(const std::vector<OutputFolder> &folders);

} // namespace kibench::io
