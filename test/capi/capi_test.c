/* The C API as a C program sees it (so kibench.h is checked as C11 too):
 * errors come back as statuses with a message, a CPU implementation's
 * outputs pass the CPU oracle's check and poisoned ones fail it. With a
 * GPU, the device path as scripts/side_by_side.py drives it: device inputs,
 * `fused` timed by its own timer after kibench's flush, a timer on a
 * caller's stream, and fused checked against oracle-fp64. Without a GPU
 * that part is skipped and says so. Exit 0 = every check held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kibench.h"

static int failures = 0;

#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,                \
              kibench_last_error());                                                                         \
      ++failures;                                                                                            \
    }                                                                                                        \
  } while (0)

static size_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
  case KIBENCH_DTYPE_BF16:
    return 2;
  case KIBENCH_DTYPE_FP32:
    return 4;
  default:
    return 8;
  }
}

static int64_t elements(const kibench_tensor *t) {
  return t->rank == 2 ? t->shape[0] * t->shape[1] : t->shape[0];
}

/* Checks `out` against truth's last outputs. Returns how many outputs
 * failed; *compared gets how many were compared. */
static int failed_outputs(kibench_impl *truth, const kibench_outputs *out, int *compared) {
  kibench_error_stats stats[8];
  int count = 0;
  CHECK(kibench_compare_outputs(truth, out, 1, stats, 8, &count) == 0);
  int failed = 0;
  for (int i = 0; i < count && i < 8; ++i) failed += stats[i].passed ? 0 : 1;
  *compared = count;
  return failed;
}

static void cpu_checks(kibench_workload *w, const kibench_workload_info *info) {
  kibench_impl *truth = kibench_impl_open(w, "cpu-fp64");
  kibench_impl *impl = kibench_impl_open(w, "cpu-reference");
  CHECK(truth != NULL && impl != NULL);
  if (truth == NULL || impl == NULL) return;
  CHECK(kibench_impl_run(truth, KIBENCH_PASS_FULL) == 0);

  CHECK(kibench_impl_run(impl, 7) != 0);
  CHECK(strstr(kibench_last_error(), "pass 7") != NULL);

  kibench_outputs out;
  CHECK(kibench_impl_poison_outputs(impl) == 0);
  CHECK(kibench_impl_run(impl, KIBENCH_PASS_FULL) == 0);
  CHECK(kibench_impl_outputs(impl, &out) == 0);
  CHECK(isfinite(out.loss) && out.loss > 0);
  CHECK(out.grad_student_weight.data != NULL && out.grad_student_weight.on_device == 0);
  CHECK(out.grad_student_weight.rank == 2 && out.grad_student_weight.shape[0] == info->vocab &&
        out.grad_student_weight.shape[1] == info->student_hidden);
  CHECK(out.grad_student_input.shape[0] == info->tokens);
  int compared = 0;
  CHECK(failed_outputs(truth, &out, &compared) == 0);
  CHECK(compared >= 3);

  /* A NaN-filled copy of grad W (all-ones bytes) must fail, the rest pass. */
  const size_t bytes =
      (size_t)elements(&out.grad_student_weight) * dtype_bytes(out.grad_student_weight.dtype);
  void *poisoned = malloc(bytes);
  memset(poisoned, 0xFF, bytes);
  kibench_outputs bad = out;
  bad.grad_student_weight.data = poisoned;
  CHECK(failed_outputs(truth, &bad, &compared) == 1);
  free(poisoned);

  /* A tensor of the wrong size is refused with a message, not read. */
  bad = out;
  bad.grad_student_input.rank = 1;
  bad.grad_student_input.shape[0] = 3;
  kibench_error_stats stats[8];
  int count = 0;
  CHECK(kibench_compare_outputs(truth, &bad, 1, stats, 8, &count) != 0);
  CHECK(strstr(kibench_last_error(), "grad_student_input") != NULL);

  size_t size = 0;
  CHECK(kibench_impl_revision(impl, NULL, 0, &size) == 0 && size > 0);
  char *text = malloc(size + 1);
  CHECK(kibench_impl_revision(impl, text, size + 1, &size) == 0);
  CHECK(strstr(text, "ImplementationRevision") != NULL);
  free(text);

  kibench_impl_close(impl);
  kibench_impl_close(truth);
}

static void gpu_checks(kibench_workload *w, const kibench_workload_info *info) {
  kibench_tensor x;
  if (kibench_workload_input(w, "student_input", &x) != 0) {
    printf("SKIPPED: the GPU part (%s)\n", kibench_last_error());
    return;
  }
  CHECK(x.on_device == 1 && x.dtype == KIBENCH_DTYPE_BF16 && x.shape[0] == info->tokens);
  kibench_tensor y;
  CHECK(kibench_workload_input(w, "target", &y) == 0 && y.dtype == KIBENCH_DTYPE_INT64);
  CHECK(kibench_workload_input(w, "no_such_input", &y) != 0);

  kibench_impl *truth = kibench_impl_open(w, "oracle-fp64");
  kibench_impl *fused = kibench_impl_open(w, "fused");
  CHECK(truth != NULL && fused != NULL);
  if (truth == NULL || fused == NULL) return;
  CHECK(kibench_impl_run(truth, KIBENCH_PASS_FULL) == 0);

  kibench_timer *timer = kibench_timer_for_impl(fused);
  CHECK(timer != NULL);
  CHECK(kibench_impl_poison_outputs(fused) == 0);
  CHECK(kibench_impl_flush_caches(fused) == 0);
  CHECK(kibench_timer_start(timer) == 0);
  CHECK(kibench_impl_run(fused, KIBENCH_PASS_FULL) == 0);
  CHECK(kibench_timer_stop(timer) == 0);
  double ns = 0, mhz = 0;
  CHECK(kibench_timer_elapsed(timer, &ns, &mhz) == 0 && ns > 0);
  const double fused_ns = ns;
  kibench_outputs out;
  CHECK(kibench_impl_outputs(fused, &out) == 0 && out.grad_student_weight.on_device == 1);
  int compared = 0;
  CHECK(failed_outputs(truth, &out, &compared) == 0 && compared >= 3);

  kibench_memory memory;
  CHECK(kibench_impl_memory(fused, &memory) == 0 && memory.workspace_bytes > 0);

  kibench_timer *stream_timer = kibench_timer_for_stream(NULL);
  CHECK(stream_timer != NULL);
  CHECK(kibench_workload_flush_l2(w, NULL) == 0);
  CHECK(kibench_timer_start(stream_timer) == 0);
  CHECK(kibench_workload_flush_l2(w, NULL) == 0);
  CHECK(kibench_timer_stop(stream_timer) == 0);
  CHECK(kibench_timer_elapsed(stream_timer, &ns, &mhz) == 0 && ns > 0);
  printf("GPU part: fused %.3f ms (SM clock %.0f MHz), one L2 flush %.1f us\n", fused_ns / 1e6, mhz,
         ns / 1e3);

  kibench_timer_close(stream_timer);
  kibench_timer_close(timer);
  kibench_impl_close(fused);
  kibench_impl_close(truth);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WORKLOAD.json\n", argv[0]);
    return 2;
  }
  CHECK(kibench_capi_version() == KIBENCH_CAPI_VERSION);

  CHECK(kibench_workload_open("no/such/workload.json") == NULL);
  CHECK(strstr(kibench_last_error(), "no/such/workload.json") != NULL);

  kibench_workload *w = kibench_workload_open(argv[1]);
  CHECK(w != NULL);
  if (w == NULL) return 1;
  kibench_workload_info info;
  CHECK(kibench_workload_get_info(w, &info) == 0);
  CHECK(info.tokens > 0 && info.vocab > 0 && info.student_hidden > 0 && info.max_relative_error > 0);
  CHECK(kibench_impl_open(w, "no-such-implementation") == NULL);
  CHECK(strstr(kibench_last_error(), "no-such-implementation") != NULL);

  cpu_checks(w, &info);
  gpu_checks(w, &info);
  kibench_workload_close(w);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("capi: all checks passed\n");
  return 0;
}
