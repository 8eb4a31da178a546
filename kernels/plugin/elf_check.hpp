// A plugin library's ELF structure, checked before dlopen: the dynamic
// loader maps the file's segments as their headers say, and a truncated
// file (a copy cut short, a build interrupted) then faults with SIGBUS
// inside dlopen, taking kibench with it, instead of failing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kibench::plugin {

// nullopt when `path` is a 64-bit little-endian ELF file whose program
// headers, section headers and loadable segments all lie within the file;
// else why not, in a few words ("truncated: a loadable segment ends at byte
// 81920 of a 40960-byte file").
std::optional<std::string> elf_problem(const std::filesystem::path &path);

// The GNU build-id of an ELF file that elf_problem() accepted (its
// NT_GNU_BUILD_ID note, as the linker's --build-id wrote it), in lower-case
// hex; nullopt where it has none. It names the build: debuggers and crash
// tools find the matching symbols by it.
std::optional<std::string> elf_build_id(const std::filesystem::path &path);

} // namespace kibench::plugin
