#include "kernels/plugin/elf_check.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

namespace kibench::plugin {

namespace {

// An ELF file open, with its program headers, once they and everything
// they point at lie within the file.
struct ElfLayout {
  std::ifstream in;
  std::vector<Elf64_Phdr> segments;
};

std::variant<ElfLayout, std::string> read_layout(const std::filesystem::path &path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return fmt::format("cannot read its size: {}", error.message());
  ElfLayout layout{std::ifstream(path, std::ios::binary), {}};
  std::ifstream &in = layout.in;
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
  layout.segments.resize(header.e_phnum);
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  if (header.e_phnum != 0 && !in.read(reinterpret_cast<char *>(layout.segments.data()),
                                      static_cast<std::streamsize>(program_headers)))
    return std::string("truncated: its program headers cannot be read");
  for (const Elf64_Phdr &segment : layout.segments)
    if (segment.p_type == PT_LOAD && !within(segment.p_offset, segment.p_filesz))
      return fmt::format("truncated: a loadable segment ends at byte {} of a {}-byte file",
                         segment.p_offset + segment.p_filesz, size);
  return layout;
}

} // namespace

std::optional<std::string> elf_problem(const std::filesystem::path &path) {
  auto layout = read_layout(path);
  if (auto *why = std::get_if<std::string>(&layout)) return std::move(*why);
  return std::nullopt;
}

std::optional<std::string> elf_build_id(const std::filesystem::path &path) {
  auto read = read_layout(path);
  auto *layout = std::get_if<ElfLayout>(&read);
  if (layout == nullptr) return std::nullopt;
  std::ifstream &in = layout->in;
  for (const Elf64_Phdr &segment : layout->segments) {
    // A note segment: records of (namesz, descsz, type, name, desc), each
    // part padded to 4 bytes. At most 64 KiB of them are read.
    if (segment.p_type != PT_NOTE || segment.p_filesz > (std::uint64_t{1} << 16)) continue;
    std::vector<unsigned char> notes(segment.p_filesz);
    in.clear();
    in.seekg(static_cast<std::streamoff>(segment.p_offset));
    if (!in.read(reinterpret_cast<char *>(notes.data()), static_cast<std::streamsize>(notes.size()))) continue;
    const auto padded = [](std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; };
    for (std::uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
      Elf64_Nhdr note{};
      std::memcpy(&note, notes.data() + at, sizeof note);
      const std::uint64_t name_at = at + sizeof note;
      const std::uint64_t desc_at = name_at + padded(note.n_namesz);
      const std::uint64_t next = desc_at + padded(note.n_descsz);
      if (next > notes.size() || next <= at) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(notes.data() + name_at, "GNU", 4) == 0 && note.n_descsz > 0 && note.n_descsz <= 64) {
        std::string hex;
        for (std::uint64_t k = 0; k < note.n_descsz; ++k) hex += fmt::format("{:02x}", notes[desc_at + k]);
        return hex;
      }
      at = next;
    }
  }
  return std::nullopt;
}

} // namespace kibench::plugin
