// Strict JSON reading through simdjson: duplicate keys, NaN/Infinity and
// trailing garbage are rejected; errors name the source and the JSON path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench::json {

// Throws InputError("<source>: <json path>: <problem>"), e.g.
// "workloads/x.json: $.spec.axes: duplicate key \"vocab\"".
Value parse(std::string_view text, std::string_view source);

// Reads and parses a file; unreadable files are InputError too.
Value parse_file(const std::filesystem::path &path);

} // namespace kibench::json
