/* CUDA lanes that misbehave on purpose, for test/test_gpu_untrusted_plugin.cpp:
 * the classes of docs/protocol.md ("What the harness checks") on a GPU.
 * Each computes the example plugin's correct answer (example_gpu.cu, the
 * example-cuda-simt lane) and then breaks one rule:
 *
 *   gpu-cached-in-prepare        computes the pass once in prepare; run()
 *                                does nothing
 *   gpu-cached-after-first-call  computes on its first run() only
 *   gpu-right-three-times        zeroes part of grad W_s after its third run
 *   gpu-writes-teacher-weight    writes into kibench's teacher weight after
 *                                each run
 *   gpu-raises-in-sample         fails its fourth run with an error status
 *                                (a C plugin's BaseException)
 *   gpu-exits-in-sample          _exit(0) in its fourth run
 *   gpu-segfaults-in-sample      SIGSEGV in its fourth run
 *   gpu-aliases-input            exposes student_input as grad x_s */
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "example_plugin.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  const char *behaviour;
  void *inner; /* the example GPU lane's state */
  kibench_plugin_inputs in;
  int runs;
} lane_state;

static int is(const lane_state *s, const char *behaviour) {
  return strcmp(s->behaviour, behaviour) == 0;
}

static int32_t cuda_failure(cudaError_t e, char *message) {
  snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "%s", cudaGetErrorString(e));
  return KIBENCH_PLUGIN_RUNTIME_ERROR;
}

static void *create(void *context, char *message) {
  lane_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->behaviour = context;
  s->inner = example_gpu_create(NULL, message);
  if (s->inner == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

static void destroy(void *state) {
  lane_state *s = state;
  example_gpu_destroy(s->inner);
  free(s);
}

static int32_t release(void *state, char *message) {
  lane_state *s = state;
  return example_gpu_release(s->inner, message);
}

static int32_t memory(void *state, kibench_memory *memory, char *message) {
  lane_state *s = state;
  return example_gpu_memory(s->inner, memory, message);
}

static int32_t prepare(void *state, const kibench_plugin_inputs *inputs, char *message) {
  lane_state *s = state;
  s->in = *inputs;
  s->runs = 0;
  const int32_t status = example_gpu_prepare(s->inner, inputs, message);
  if (status != KIBENCH_PLUGIN_OK || !is(s, "gpu-cached-in-prepare")) return status;
  /* The answer for the inputs seen now, kept for every call. */
  return example_gpu_run(s->inner, inputs->pass, inputs->stream, message);
}

static int32_t run(void *state, int32_t pass, void *stream, char *message) {
  lane_state *s = state;
  s->runs += 1;
  if (is(s, "gpu-cached-in-prepare")) return KIBENCH_PLUGIN_OK;
  if (is(s, "gpu-cached-after-first-call") && s->runs > 1) return KIBENCH_PLUGIN_OK;
  if (s->runs >= 4) {
    if (is(s, "gpu-raises-in-sample")) {
      snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "deliberate failure in the fourth run");
      return KIBENCH_PLUGIN_RUNTIME_ERROR;
    }
    if (is(s, "gpu-exits-in-sample")) _exit(0);
    if (is(s, "gpu-segfaults-in-sample")) raise(SIGSEGV);
  }
  const int32_t status = example_gpu_run(s->inner, pass, stream, message);
  if (status != KIBENCH_PLUGIN_OK) return status;
  if (is(s, "gpu-writes-teacher-weight")) {
    /* The first 64 bytes of W_t: kibench's copy (or its worker's). */
    const cudaError_t e = cudaMemsetAsync(s->in.teacher_weight.data, 0, 64, (cudaStream_t)stream);
    if (e != cudaSuccess) return cuda_failure(e, message);
  }
  if (is(s, "gpu-right-three-times") && s->runs > 3 && pass != KIBENCH_PASS_FORWARD) {
    kibench_outputs out;
    const int32_t described = example_gpu_outputs(s->inner, &out, message);
    if (described != KIBENCH_PLUGIN_OK) return described;
    /* The first tenth of grad W_s (fp32) set to 0. */
    const size_t bytes = (size_t)(out.grad_student_weight.shape[0] * out.grad_student_weight.shape[1]) *
                         sizeof(float) / 10;
    const cudaError_t e = cudaMemsetAsync(out.grad_student_weight.data, 0, bytes, (cudaStream_t)stream);
    if (e != cudaSuccess) return cuda_failure(e, message);
  }
  return KIBENCH_PLUGIN_OK;
}

static int32_t outputs(void *state, kibench_outputs *out, char *message) {
  lane_state *s = state;
  const int32_t status = example_gpu_outputs(s->inner, out, message);
  if (status != KIBENCH_PLUGIN_OK) return status;
  if (is(s, "gpu-aliases-input")) {
    out->grad_student_input.data = (void *)s->in.student_input.data;
    out->grad_student_input.dtype = KIBENCH_DTYPE_BF16;
  }
  return KIBENCH_PLUGIN_OK;
}

static const char *const architectures[] = {"sm_90a", NULL};

#define LANE(lane_name)                                                                                      \
  {                                                                                                          \
    .name = lane_name, .summary = "untrusted GPU test lane: " lane_name, .needs_gpu = 1,                     \
    .computes_loss = 1,                                                                                      \
    .revision = {.name = "test-" lane_name,                                                                  \
                 .language = "cuda",                                                                         \
                 .version = "0.0.1",                                                                         \
                 .architectures = architectures},                                                            \
    .context = lane_name, .create = create, .destroy = destroy, .prepare = prepare, .run = run,              \
    .outputs = outputs, .memory = memory, .release = release                                                 \
  }

static const kibench_plugin_implementation lanes[] = {
    LANE("gpu-cached-in-prepare"),     LANE("gpu-cached-after-first-call"), LANE("gpu-right-three-times"),
    LANE("gpu-writes-teacher-weight"), LANE("gpu-raises-in-sample"),        LANE("gpu-exits-in-sample"),
    LANE("gpu-segfaults-in-sample"),   LANE("gpu-aliases-input"),
};

static const kibench_plugin plugin = {.abi_version = KIBENCH_PLUGIN_ABI_VERSION,
                                      .name = "kibench untrusted GPU test plugin",
                                      .implementation_count = (int32_t)(sizeof lanes / sizeof lanes[0]),
                                      .implementations = lanes};

EXPORT const kibench_plugin *kibench_plugin_entry(int32_t host_abi_version) {
  (void)host_abi_version;
  return &plugin;
}
