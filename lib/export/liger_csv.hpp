// `kibench export --format liger-csv`: runs as rows of Liger-Kernel's
// benchmark/data/all_benchmark_data.csv, so Liger's visualizer and
// notebooks read them, and `kibench import liger` reads them back as far
// as the format carries them (docs/guide.md, "kibench export").
//
// One speed row per run that passed and has a median:
//   kernel_name            the Liger kernel whose OperationSpec the workload names (by digest,
//                          against the curated operations of the Liger import)
//   kernel_provider        the implementation (an imported row: its provider again)
//   kernel_operation_mode  the timed pass: full, forward or backward
//   metric_name, _unit     speed, ms
//   x_name, x_label        BT, B x T; x_value the tokens
//   y_value_50, _20, _80   median, p20, p80 in ms (p20/p80 empty when the run has none)
//   extra_benchmark_config_str  the config Liger's script writes for the kernel (H, V, mode,
//                          dtype as torch.*, bias, loss weights, ignore_index), with the
//                          workload's beta and temperature beside them
//   gpu_name               the environment's hardware.product (an imported row: its CSV name)
//   timestamp              observedAt, "YYYY-MM-DD HH:MM:SS" UTC
//   liger_version          an imported row's, the Liger package version of a Liger lane, else empty
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lib/export/exported_run.hpp"

namespace kibench::exports {

struct LigerCsv {
  std::string text; // header and rows, RFC 4180
  std::size_t rows = 0;
  std::vector<std::string> notes; // "<run id>: not exported: <why>", one per run left out
};

// `curated` holds the Liger import's curated manifests
// (importers::liger::CuratedTables). InputError when no run can be written.
LigerCsv render_liger_csv(const std::vector<ExportedRun> &runs, const std::filesystem::path &curated);

} // namespace kibench::exports
