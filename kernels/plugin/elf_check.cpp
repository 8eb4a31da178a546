#include "kernels/plugin/elf_check.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace kibench::plugin {

std::optional<std::string> elf_problem(const std::filesystem::path &path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return fmt::format("cannot read its size: {}", error.message());
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char *>(&header), sizeof header))
    return fmt::format("truncated: {} bytes, shorter than an ELF header", size);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return std::string("not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return std::string("not a 64-bit little-endian ELF file");
  const auto within = [&](std::uint64_t offset, std::uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  const std::uint64_t program_headers = std::uint64_t{header.e_phentsize} * header.e_phnum;
  if (header.e_phnum != 0 &&
      (header.e_phentsize != sizeof(Elf64_Phdr) || !within(header.e_phoff, program_headers)))
    return fmt::format("truncated: its program headers end past the file's {} bytes", size);
  const std::uint64_t section_headers = std::uint64_t{header.e_shentsize} * header.e_shnum;
  if (header.e_shnum != 0 && !within(header.e_shoff, section_headers))
    return fmt::format("truncated: its section headers end at byte {} of a {}-byte file",
                       header.e_shoff + section_headers, size);
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  if (header.e_phnum != 0 &&
      !in.read(reinterpret_cast<char *>(segments.data()), static_cast<std::streamsize>(program_headers)))
    return std::string("truncated: its program headers cannot be read");
  for (const Elf64_Phdr &segment : segments)
    if (segment.p_type == PT_LOAD && !within(segment.p_offset, segment.p_filesz))
      return fmt::format("truncated: a loadable segment ends at byte {} of a {}-byte file",
                         segment.p_offset + segment.p_filesz, size);
  return std::nullopt;
}

} // namespace kibench::plugin
