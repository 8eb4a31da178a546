// `kibench export --format csv`: one tidy row per BenchmarkRun — what was
// measured (workload axes, dtype, scalars), by what (implementation), how
// (protocol), where (environment), with what result (status, every
// latency statistic and measurement the run records) — for pandas, R or a
// spreadsheet. docs/guide.md lists the columns.
#pragma once

#include <string>
#include <vector>

#include "lib/export/exported_run.hpp"

namespace kibench::exports {

// The header and one CRLF-terminated record per run (RFC 4180). Numbers
// are written as JSON writes them, booleans as true/false, an absent value
// as an empty field.
std::string render_tidy_csv(const std::vector<ExportedRun> &runs);

} // namespace kibench::exports
