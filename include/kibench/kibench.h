/* kibench as a C library, for harnesses outside kibench (Python through
 * ctypes, other benchmark tools): load a workload spec, generate its inputs
 * on the GPU exactly as `kibench run` does, run any registered
 * implementation on them, time samples with kibench's own CUDA-event timer
 * and L2 flush, and check any outputs - also another program's - against an
 * implementation's with kibench's comparator and the workload's policy.
 *
 * Every function that can fail returns 0 (or a non-null handle) on success
 * and otherwise stores a one-line message that kibench_last_error() returns
 * (per thread, valid until the next failing call). Handles are not
 * thread-safe. A workload must outlive the implementations opened on it. */
#ifndef KIBENCH_CAPI_H
#define KIBENCH_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KIBENCH_CAPI_VERSION 1

typedef struct kibench_workload kibench_workload;
typedef struct kibench_impl kibench_impl;
typedef struct kibench_timer kibench_timer;

typedef enum { KIBENCH_PASS_FORWARD = 0, KIBENCH_PASS_BACKWARD = 1, KIBENCH_PASS_FULL = 2 } kibench_pass;

typedef enum {
  KIBENCH_DTYPE_BF16 = 0,
  KIBENCH_DTYPE_FP32 = 1,
  KIBENCH_DTYPE_FP64 = 2,
  KIBENCH_DTYPE_INT64 = 3
} kibench_dtype;

/* A dense row-major tensor; data is NULL for an absent one. */
typedef struct {
  const void *data;
  int32_t dtype;     /* kibench_dtype */
  int32_t on_device; /* 1: a CUDA device pointer, 0: host memory */
  int32_t rank;      /* 0 (a scalar), 1 or 2 */
  int64_t shape[2];
} kibench_tensor;

typedef struct {
  double loss;
  kibench_tensor grad_student_input;  /* [T, Hs]; jsd: grad of the student log-probabilities [T, V] */
  kibench_tensor grad_student_weight; /* [V, Hs] */
  kibench_tensor grad_student_bias;   /* [V], absent without a bias */
} kibench_outputs;

typedef struct {
  int64_t tokens, vocab, hidden, student_hidden;
  int32_t has_student_bias, has_teacher_bias;
  double beta, temperature, weight_hard, weight_soft;
  int64_t ignore_index;
  double max_relative_error, max_absolute_error; /* the workload's correctness policy */
  double gemm_flops_forward, gemm_flops_full;
} kibench_workload_info;

typedef struct {
  char output[32]; /* "loss", "grad_student_input", ... */
  int64_t count;
  double max_abs_error, rel_l2_error, ref_l2_norm;
  int64_t nonfinite;
  int32_t passed; /* under the workload's policy */
} kibench_error_stats;

typedef struct {
  uint64_t input_bytes, output_bytes, workspace_bytes, peak_bytes;
} kibench_memory;

int kibench_capi_version(void);
const char *kibench_last_error(void);

/* Reads and validates a workload file (as `kibench run` does). */
kibench_workload *kibench_workload_open(const char *spec_path);
void kibench_workload_close(kibench_workload *workload);
int kibench_workload_get_info(kibench_workload *workload, kibench_workload_info *info);
/* One input on the device, generated on first use: "student_input",
 * "student_weight", "teacher_input", "teacher_weight", "target",
 * "student_bias", "teacher_bias" (bf16, the target int64). The memory
 * belongs to the workload. */
int kibench_workload_input(kibench_workload *workload, const char *name, kibench_tensor *tensor);
/* Enqueues kibench's L2 flush (a write of twice the L2's size) on a CUDA
 * stream (NULL: the legacy default stream). */
int kibench_workload_flush_l2(kibench_workload *workload, void *cuda_stream);

/* A registered implementation (see `kibench list`), prepared on the
 * workload's inputs; fails with the reason when it cannot run it. */
kibench_impl *kibench_impl_open(kibench_workload *workload, const char *name);
void kibench_impl_close(kibench_impl *impl);
/* The ImplementationRevision manifest as JSON; *size gets the length
 * without the terminating NUL (call with capacity 0 to ask). */
int kibench_impl_revision(kibench_impl *impl, char *buffer, size_t capacity, size_t *size);
int kibench_impl_poison_outputs(kibench_impl *impl);
int kibench_impl_flush_caches(kibench_impl *impl);
int kibench_impl_before_sample(kibench_impl *impl, int pass);
int kibench_impl_run(kibench_impl *impl, int pass); /* may return before the GPU is done */
int kibench_impl_outputs(kibench_impl *impl, kibench_outputs *outputs); /* waits; valid until the next run */
int kibench_impl_memory(kibench_impl *impl, kibench_memory *memory);

/* The implementation's own sample timer (CUDA events on its stream). */
kibench_timer *kibench_timer_for_impl(kibench_impl *impl);
/* A CUDA-event timer on a caller's stream (NULL: the legacy default stream). */
kibench_timer *kibench_timer_for_stream(void *cuda_stream);
void kibench_timer_close(kibench_timer *timer);
int kibench_timer_start(kibench_timer *timer);
int kibench_timer_stop(kibench_timer *timer); /* also reads the SM clock (NVML) */
/* Waits for the stop; *clock_mhz is NaN when NVML gave no reading. */
int kibench_timer_elapsed(kibench_timer *timer, double *ns, double *clock_mhz);

/* Errors of `candidate` against the outputs of `truth` (last run), with
 * the comparator and policy of truth's workload. Gradients are compared
 * when with_gradients is nonzero. Fills up to `capacity` entries; *count
 * gets how many outputs were compared. */
int kibench_compare_outputs(kibench_impl *truth, const kibench_outputs *candidate, int with_gradients,
                            kibench_error_stats *stats, int capacity, int *count);

/* Runs kibench's command line exactly as the kibench executable does
 * (argv[0] is a program name, then e.g. "run", workloads and flags), with
 * the implementations of `plugins` (kibench_plugin.h descriptions, kept
 * alive by the caller for the call) offered beside the built-in ones and
 * those of --plugin; `host` names them in messages (e.g. "python").
 * Returns the exit code (0 success, 1 a failed check or implementation, 2
 * bad input, 3 an internal error); messages go to stderr, results to
 * stdout. The Python package's `python -m kibench run` is this call. */
struct kibench_plugin;
int kibench_cli_run(int argc, const char *const *argv, const struct kibench_plugin *const *plugins,
                    int plugin_count, const char *host);

#ifdef __cplusplus
}
#endif

#endif /* KIBENCH_CAPI_H */
