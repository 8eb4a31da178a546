// What an attestation of a run directory covers: every regular *.json file
// in it (the manifests, the raw samples, summary.json) except the
// attestation itself, by file name, with the SHA-256 of its bytes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kibench::attest {

inline constexpr std::string_view attestation_file_name = "attestation.dsse.json";

// Sorted by name; InputError when the directory cannot be read.
std::vector<std::filesystem::path> subject_files(const std::filesystem::path &run_dir);

// The whole file (a regular file, at most io::file_kinds::manifest's cap);
// InputError naming it when it cannot be read.
std::string read_file_bytes(const std::filesystem::path &file);

// Lowercase hex SHA-256, as in-toto digest sets write it (no "sha256:").
std::string sha256_hex(std::string_view bytes);

} // namespace kibench::attest
