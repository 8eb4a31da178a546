/* Plugins that misbehave on purpose, for test/test_plugin_*.cpp. Built
 * several times with one of these defined:
 *
 *   TEST_PLUGIN_LANES       "faulty" lanes, each failing one way while the
 *                           others are measured: raises-in-prepare,
 *                           raises-in-run, raises-in-sample (fails on its
 *                           fourth run), wrong-shape, wrong-dtype,
 *                           nan-outputs, aliases-input, host-on-gpu-lane,
 *                           exits-in-sample (_exit(0) on its fourth
 *                           run), segfaults-in-sample (SIGSEGV there)
 *   TEST_PLUGIN_OTHER_ABI   reports ABI version 999
 *   TEST_PLUGIN_NO_ENTRY    exports no entry symbol
 *   TEST_PLUGIN_BAD_FACTS   a lane whose callable.language is "C++"
 *   TEST_PLUGIN_TAKEN_NAME  a lane named "cpu-reference"
 *   TEST_PLUGIN_NO_RUN      a lane without a run function
 *
 * The lanes compute nothing real: every output they expose is zero (or
 * NaN, or of the wrong shape or type), so a lane that got as far as the
 * check would fail it; each fails earlier, the way its name says. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "kibench_plugin.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  const char *behaviour;
  kibench_plugin_inputs in;
  float *grad_input, *grad_weight;
  double *loss_tensor;
  int runs;
} lane_state;

static void say(char *message, const char *text) {
  snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "%s", text);
}

static void *create(void *context, char *message) {
  (void)message;
  lane_state *s = calloc(1, sizeof *s);
  if (s != NULL) s->behaviour = context;
  return s;
}

static int32_t release(void *state, char *message) {
  (void)message;
  lane_state *s = state;
  free(s->grad_input);
  free(s->grad_weight);
  s->grad_input = s->grad_weight = NULL;
  return KIBENCH_PLUGIN_OK;
}

static void destroy(void *state) {
  char message[KIBENCH_PLUGIN_MESSAGE_BYTES];
  release(state, message);
  free(state);
}

static int is(const lane_state *s, const char *behaviour) {
  return strcmp(s->behaviour, behaviour) == 0;
}

static int32_t prepare(void *state, const kibench_plugin_inputs *inputs, char *message) {
  lane_state *s = state;
  s->in = *inputs;
  s->runs = 0;
  if (is(s, "raises-in-prepare")) {
    say(message, "deliberate failure in prepare\nsecond line");
    return KIBENCH_PLUGIN_RUNTIME_ERROR;
  }
  const size_t inputs_count = (size_t)(inputs->info.tokens * inputs->info.student_hidden);
  const size_t weights_count = (size_t)(inputs->info.vocab * inputs->info.student_hidden);
  s->grad_input = calloc(inputs_count, sizeof(float));
  s->grad_weight = calloc(weights_count, sizeof(float));
  if (is(s, "nan-outputs")) {
    for (size_t k = 0; k < inputs_count; ++k) s->grad_input[k] = NAN;
  }
  return KIBENCH_PLUGIN_OK;
}

static int32_t run(void *state, int32_t pass, void *stream, char *message) {
  (void)pass;
  (void)stream;
  lane_state *s = state;
  s->runs += 1;
  if (is(s, "raises-in-run")) {
    say(message, "deliberate failure in run");
    return KIBENCH_PLUGIN_RUNTIME_ERROR;
  }
  if (is(s, "raises-in-sample") && s->runs >= 4) {
    say(message, "deliberate failure in the fourth run");
    return KIBENCH_PLUGIN_TIMEOUT;
  }
  if (is(s, "exits-in-sample") && s->runs >= 4) _exit(0);
  if (is(s, "segfaults-in-sample") && s->runs >= 4) raise(SIGSEGV);
  return KIBENCH_PLUGIN_OK;
}

static int32_t outputs(void *state, kibench_outputs *out, char *message) {
  (void)message;
  lane_state *s = state;
  const kibench_workload_info *info = &s->in.info;
  memset(out, 0, sizeof *out);
  out->loss = is(s, "nan-outputs") ? NAN : 0.0;
  kibench_tensor *gx = &out->grad_student_input, *gw = &out->grad_student_weight;
  gx->data = s->grad_input;
  gx->dtype = KIBENCH_DTYPE_FP32;
  gx->rank = 2;
  gx->shape[0] = info->tokens;
  gx->shape[1] = info->student_hidden;
  *gw = *gx;
  gw->data = s->grad_weight;
  gw->shape[0] = info->vocab;
  if (is(s, "wrong-shape")) gw->shape[1] = info->student_hidden - 1;
  if (is(s, "wrong-dtype")) gw->dtype = KIBENCH_DTYPE_INT64;
  if (is(s, "aliases-input")) gx->data = s->in.student_input.data, gx->dtype = KIBENCH_DTYPE_BF16;
  if (is(s, "host-on-gpu-lane")) gx->on_device = 1;
  return KIBENCH_PLUGIN_OK;
}

static const char *const architectures[] = {"x86_64", NULL};

#define LANE(lane_name, facts_name, code_language)                                                           \
  {                                                                                                          \
    .name = lane_name, .summary = "test plugin lane: " lane_name, .needs_gpu = 0, .computes_loss = 1,        \
    .revision = {.name = facts_name,                                                                         \
                 .language = code_language,                                                                  \
                 .version = "0.0.1",                                                                         \
                 .architectures = architectures},                                                            \
    .context = lane_name, .create = create, .destroy = destroy, .prepare = prepare, .run = run,              \
    .outputs = outputs, .release = release                                                                   \
  }

#if defined(TEST_PLUGIN_LANES)
static const kibench_plugin_implementation lanes[] = {
    LANE("raises-in-prepare", "test-raises-in-prepare", "c"),
    LANE("raises-in-run", "test-raises-in-run", "c"),
    LANE("raises-in-sample", "test-raises-in-sample", "c"),
    LANE("wrong-shape", "test-wrong-shape", "c"),
    LANE("wrong-dtype", "test-wrong-dtype", "c"),
    LANE("nan-outputs", "test-nan-outputs", "c"),
    LANE("aliases-input", "test-aliases-input", "c"),
    LANE("host-on-gpu-lane", "test-host-on-gpu-lane", "c"),
    LANE("exits-in-sample", "test-exits-in-sample", "c"),
    LANE("segfaults-in-sample", "test-segfaults-in-sample", "c"),
};
#define ABI KIBENCH_PLUGIN_ABI_VERSION
#elif defined(TEST_PLUGIN_OTHER_ABI)
static const kibench_plugin_implementation lanes[] = {LANE("other-abi", "test-other-abi", "c")};
#define ABI 999
#elif defined(TEST_PLUGIN_BAD_FACTS)
static const kibench_plugin_implementation lanes[] = {LANE("bad-facts", "test-bad-facts", "C++")};
#define ABI KIBENCH_PLUGIN_ABI_VERSION
#elif defined(TEST_PLUGIN_TAKEN_NAME)
static const kibench_plugin_implementation lanes[] = {LANE("cpu-reference", "test-taken-name", "c")};
#define ABI KIBENCH_PLUGIN_ABI_VERSION
#elif defined(TEST_PLUGIN_NO_RUN)
static kibench_plugin_implementation lanes[] = {LANE("no-run", "test-no-run", "c")};
#define ABI KIBENCH_PLUGIN_ABI_VERSION
#endif

#if !defined(TEST_PLUGIN_NO_ENTRY)
static const kibench_plugin plugin = {.abi_version = ABI,
                                      .name = "kibench test plugin",
                                      .implementation_count = (int32_t)(sizeof lanes / sizeof lanes[0]),
                                      .implementations = lanes};

EXPORT const kibench_plugin *kibench_plugin_entry(int32_t host_abi_version) {
  (void)host_abi_version;
#if defined(TEST_PLUGIN_NO_RUN)
  lanes[0].run = NULL;
#endif
  return &plugin;
}
#else
EXPORT int kibench_test_plugin_without_entry(void) {
  return 0;
}
#endif
