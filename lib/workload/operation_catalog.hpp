// Where a workload's OperationSpec comes from: the workload names it only by
// digest (spec.operationSpecDigest), and the OperationSpec files live in
// `operations/` folders of the workloads tree.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::detail {

// The `operations/` folders searched for a workload file, nearest first:
// beside the file, then each parent's up to the workloads root (when the
// file lies inside it), then the workloads root's own. Only existing
// folders are listed, each once.
std::vector<std::filesystem::path> operation_search_dirs(const std::filesystem::path &workload_file,
                                                         const std::filesystem::path &workloads_root);

// The first OperationSpec (kind "OperationSpec", *.json, files in name
// order) in `dirs` whose identity digest is `digest`. A file there that is
// not valid JSON is an InputError naming it.
std::optional<json::Value> find_operation(std::string_view digest,
                                          const std::vector<std::filesystem::path> &dirs);

} // namespace kibench::detail
