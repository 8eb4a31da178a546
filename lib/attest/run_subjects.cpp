#include "lib/attest/run_subjects.hpp"

#include "lib/digest/digest.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/io/input_file.hpp"

namespace kibench::attest {

std::vector<std::filesystem::path> subject_files(const std::filesystem::path &run_dir) {
  std::vector<std::filesystem::path> files = json_files_in(run_dir);
  std::erase_if(files, [](const auto &file) { return file.filename() == attestation_file_name; });
  return files;
}

std::string read_file_bytes(const std::filesystem::path &file) {
  return io::read_file(file, io::file_kinds::manifest);
}

std::string sha256_hex(std::string_view bytes) {
  std::string digest = sha256_digest(bytes);
  return digest.substr(digest.find(':') + 1);
}

} // namespace kibench::attest
