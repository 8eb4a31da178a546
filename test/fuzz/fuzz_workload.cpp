// libFuzzer target: arbitrary bytes through json::parse and
// workload_from_json with the real distill_jsd_loss OperationSpec. Built and
// run by run_fuzz.sh (clang, ASan + UBSan).
//
// Allowed: an InputError (bad input). A bug: any crash, sanitizer report,
// other exception, a workload_from_json message that spans lines, an
// accepted workload that breaks the rules docs/workloads.md promises, or
// one that does not read back from what `kibench run` writes of it (the
// pretty JSON of workload.json, the canonical JSON its digest hashes), as
// `digest --verify` and `compare` read it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/workload/workload.hpp"

namespace {

const kibench::json::Value &distill_operation() {
  static const kibench::json::Value operation = kibench::json::parse_file(
      std::filesystem::path(KIBENCH_SOURCE_DIR) / "workloads" / "operations" / "distill_jsd_loss.json");
  return operation;
}

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void check_generator(const kibench::GeneratorSpec &g) {
  require(std::isfinite(g.low) && std::isfinite(g.high) && g.low < g.high);
  require(g.ignore_fraction >= 0.0 && g.ignore_fraction <= 1.0);
}

// What every accepted workload guarantees to the code that runs it.
void check_accepted(const kibench::Workload &w) {
  constexpr std::int64_t max_axis = 2147483647;
  for (const std::int64_t axis : {w.tokens, w.vocab, w.hidden, w.student_hidden}) {
    require(axis >= 1 && axis <= max_axis);
  }
  require(w.student_hidden == w.hidden / 2);
  require(w.scalars.beta >= 0.0 && w.scalars.beta <= 1.0);
  require(std::isfinite(w.scalars.temperature) && w.scalars.temperature != 0.0);
  require(std::isfinite(w.scalars.weight_hard) && w.scalars.weight_hard >= 0.0);
  require(std::isfinite(w.scalars.weight_soft) && w.scalars.weight_soft >= 0.0);
  require(w.scalars.ignore_index < 0 || w.scalars.ignore_index >= w.vocab);
  for (const auto *g :
       {&w.student_input, &w.student_weight, &w.teacher_input, &w.teacher_weight, &w.target}) {
    check_generator(*g);
  }
  if (w.student_bias) check_generator(*w.student_bias);
  if (w.teacher_bias) check_generator(*w.teacher_bias);
  require(w.target.low >= 0.0 && w.target.high <= static_cast<double>(w.vocab));
  require(w.correctness.max_relative_error >= 0.0 && w.correctness.max_absolute_error >= 0.0);
  require(w.input_bytes() > 0);
  require(std::isfinite(w.gemm_flops(true)) && w.gemm_flops(true) > w.gemm_flops(false));
}

// Anything `run` accepts, `digest --verify` and `compare` read back.
void check_reads_back(const kibench::json::Value &manifest) {
  try {
    const std::string written = kibench::json::pretty(manifest);
    require(kibench::json::parse(written, "workload.json") == manifest);
    const std::string canonical = kibench::json::canonical(manifest);
    require(kibench::json::canonical(kibench::json::parse(canonical, "canonical")) == canonical);
  } catch (const kibench::InputError &) {
    require(false);
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)distill_operation(); // fail at start-up, not mid-run, if it is missing
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  kibench::json::Value manifest;
  try {
    manifest = kibench::json::parse(text, "fuzz.json");
  } catch (const kibench::InputError &) {
    return 0;
  }
  try {
    check_accepted(kibench::workload_from_json(manifest, distill_operation(), "fuzz.json"));
    check_reads_back(manifest);
  } catch (const kibench::InputError &e) {
    require(std::strchr(e.what(), '\n') == nullptr);
  }
  return 0;
}
