// Strict JSON reading through simdjson: duplicate keys, NaN/Infinity and
// trailing garbage are rejected; errors name the source and the JSON path.
// Text that is not UTF-8 (a byte order mark, UTF-16, UTF-32, a stray byte)
// is refused with a message that says which encoding it is and where.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "lib/io/input_file.hpp"
#include "lib/json/value.hpp"

namespace kibench::json {

// Throws InputError("<source>: <json path>: <problem>"), e.g.
// "workloads/x.json: $.spec.axes: duplicate key \"vocab\"".
Value parse(std::string_view text, std::string_view source);

// Reads and parses a regular file of at most kind.max_bytes
// (lib/io/input_file.hpp); an unreadable, irregular or oversized file is an
// InputError too.
Value parse_file(const std::filesystem::path &path, const io::FileKind &kind = io::file_kinds::manifest);

} // namespace kibench::json
