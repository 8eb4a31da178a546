#include "lib/run/calibration_step.hpp"

#include <fmt/core.h>

#include "lib/calibration/history.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench {

namespace {

// Label values hold at most 200 characters (cut on a character boundary).
std::string label_value(const std::string &text) { return std::string(io::cut_utf8(io::repair_utf8(text), 200)); }

} // namespace

CalibrationStep::CalibrationStep(const Backend &backend, Note note) : backend_(backend), note_(std::move(note)) {
  start_ = read("at the start");
}

std::optional<calibration::SentinelSet> CalibrationStep::read(const char *when) {
  try {
    return backend_.run_sentinels();
  } catch (const std::exception &e) {
    note_(fmt::format("calibration sentinels {} failed: {}; the runs carry no calibration", when, e.what()));
    return std::nullopt;
  }
}

CalibrationStep::WorkloadCalibration CalibrationStep::after_workload(const std::string &workload) {
  WorkloadCalibration out;
  const std::optional<calibration::SentinelSet> end = start_ ? read("at the end") : std::nullopt;
  if (!start_ || !end) {
    start_ = end;
    return out;
  }
  const auto dir = calibration::history_dir();
  const auto file = dir ? std::optional(calibration::history_file(*dir, end->device)) : std::nullopt;
  const std::vector<calibration::SentinelSet> history =
      file ? calibration::read_history(*file, end->device) : std::vector<calibration::SentinelSet>{};
  const calibration::Judgement judgement = calibration::judge(history, *start_, *end);
  out.caveats = judgement.caveats;
  out.labels.set("calibration_device", label_value(end->device));
  out.labels.set("calibration_start", label_value(calibration::describe(*start_)));
  out.labels.set("calibration_end", label_value(calibration::describe(*end)));
  out.labels.set("calibration_basis", label_value(judgement.basis));
  if (!judgement.caveats.empty()) {
    std::string joined;
    for (const auto &c : judgement.caveats) joined += (joined.empty() ? "" : "; ") + c;
    out.labels.set("calibration_caveat", label_value(joined));
    note_(fmt::format("{}: calibration: {} ({})", workload, joined, judgement.basis));
  } else if (file) {
    // Only clean runs make the history, so a loaded machine's runs do not
    // widen the limits that would catch the next one.
    try {
      calibration::append_history(*file, *end);
    } catch (const std::exception &e) {
      note_(fmt::format("calibration history not kept: {}", e.what()));
    }
  }
  start_ = end;
  return out;
}

} // namespace kibench
