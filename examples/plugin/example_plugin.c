/* An example kibench plugin (include/kibench/kibench_plugin.h): two
 * implementations of the distillation loss (docs/loss-math.md) that
 * `kibench run --plugin libkibench_example_plugin.so --impl ...` checks
 * against the fp64 oracle and times beside kibench's own.
 *
 *   example-cpu-fp32   this file: the loss and the student gradients on the
 *                      host in plain C, fp32 throughout (bf16 inputs widened
 *                      to fp32, fp32 logits and row math, fp32 gradients),
 *                      one token row at a time. Small workloads only.
 *   example-cuda-simt  example_gpu.cu: the same math on the GPU with
 *                      straightforward CUDA: tiled fp32 SIMT GEMMs (no
 *                      tensor cores) over chunks of 1024 tokens and one
 *                      block per row for the loss and its gradient.
 *
 * Neither is fast; they show the ABI: revision facts, prepare / run /
 * outputs / release on kibench's inputs, a reason when a pass is not
 * supported, and outputs kibench can poison. Build: CMake target
 * kibench_example_plugin (examples/plugin/CMakeLists.txt). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_plugin.h"

/* ---------------------------------------------------------------- facts */

static const char *const host_architectures[] = {
#if defined(__x86_64__)
    "x86_64",
#elif defined(__aarch64__)
    "aarch64",
#endif
    NULL};
static const char *const gpu_architectures[] = {"sm_90a", NULL};
static const char *const dtypes[] = {"bf16", NULL};
static const kibench_plugin_pair labels[] = {{"precision", "fp32 logits, row math and gradients"}};

/* ------------------------------------------------------------ utilities */

void example_message(char *message, const char *text) {
  snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "%s", text);
}

float example_bf16_to_float(uint16_t bits) {
  const uint32_t widened = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &widened, sizeof value);
  return value;
}

int32_t example_unsupported(void *context, const kibench_workload_info *info, int32_t pass, char *message) {
  (void)context;
  (void)info;
  if (pass == KIBENCH_PASS_BACKWARD) {
    example_message(message, "computes the loss and its gradients in one sweep, so it has no backward of its "
                             "own to time: use --pass full");
    return KIBENCH_PLUGIN_UNSUPPORTED;
  }
  return KIBENCH_PLUGIN_OK;
}

/* The row math of docs/loss-math.md in fp32: log-sum-exps of the raw and
 * the tempered logits, cross-entropy on the raw logits, and the
 * generalized JSD (forward KL at beta = 0, reverse KL at beta = 1). */
example_row_t example_row_loss(const float *z_s, const float *z_t, int64_t V, int64_t y, float beta,
                               float temperature) {
  example_row_t r;
  float max_z = z_s[0], max_t = z_t[0];
  for (int64_t k = 1; k < V; ++k) {
    max_z = fmaxf(max_z, z_s[k]);
    max_t = fmaxf(max_t, z_t[k]);
  }
  float sum_z = 0.0f, sum_a = 0.0f, sum_b = 0.0f;
  for (int64_t k = 0; k < V; ++k) {
    sum_z += expf(z_s[k] - max_z);
    sum_a += expf((z_s[k] - max_z) / temperature);
    sum_b += expf((z_t[k] - max_t) / temperature);
  }
  r.lse_raw = max_z + logf(sum_z);
  r.lse_student = max_z / temperature + logf(sum_a);
  r.lse_teacher = max_t / temperature + logf(sum_b);
  r.cross_entropy = r.lse_raw - z_s[y];
  const float log_one_minus_beta = logf(1.0f - beta), log_beta = logf(beta);
  float kl_pm = 0.0f, kl_qm = 0.0f, kl_pq = 0.0f, kl_qp = 0.0f;
  for (int64_t k = 0; k < V; ++k) {
    const float log_q = z_s[k] / temperature - r.lse_student, log_p = z_t[k] / temperature - r.lse_teacher;
    const float q = expf(log_q), p = expf(log_p);
    if (beta > 0.0f && beta < 1.0f) {
      const float u = log_q + log_one_minus_beta, v = log_p + log_beta;
      const float log_m = fmaxf(u, v) + log1pf(expf(-fabsf(u - v)));
      kl_pm += p * (log_p - log_m);
      kl_qm += q * (log_q - log_m);
    } else {
      kl_pq += p * (log_p - log_q);
      kl_qp += q * (log_q - log_p);
    }
  }
  r.kl_student = beta <= 0.0f ? kl_pq : beta >= 1.0f ? kl_qp : kl_qm;
  r.jsd = beta <= 0.0f ? kl_pq : beta >= 1.0f ? kl_qp : beta * kl_pm + (1.0f - beta) * kl_qm;
  return r;
}

/* Overwrites z_s with d loss / d z_s for the row: hard_scale * (softmax(z_s)
 * - onehot(y)) + soft_scale * dJ/dz_s (scales w_h / N and w_s / N). */
void example_row_gradient(float *z_s, const float *z_t, int64_t V, int64_t y, float beta, float temperature,
                          example_row_t row, float hard_scale, float soft_scale) {
  const float log_one_minus_beta = logf(1.0f - beta), log_beta = logf(beta);
  for (int64_t k = 0; k < V; ++k) {
    const float log_q = z_s[k] / temperature - row.lse_student,
                log_p = z_t[k] / temperature - row.lse_teacher;
    const float q = expf(log_q);
    float d_jsd;
    if (beta > 0.0f && beta < 1.0f) {
      const float u = log_q + log_one_minus_beta, v = log_p + log_beta;
      const float log_m = fmaxf(u, v) + log1pf(expf(-fabsf(u - v)));
      d_jsd = (1.0f - beta) / temperature * q * (log_q - log_m - row.kl_student);
    } else if (beta <= 0.0f) {
      d_jsd = (q - expf(log_p)) / temperature;
    } else {
      d_jsd = q * (log_q - log_p - row.kl_student) / temperature;
    }
    const float softmax = expf(z_s[k] - row.lse_raw) - (k == y ? 1.0f : 0.0f);
    z_s[k] = hard_scale * softmax + soft_scale * d_jsd;
  }
}

/* ------------------------------------------------------------- CPU lane */

typedef struct {
  kibench_plugin_inputs in;
  float *grad_input;                        /* [T, Hs] */
  float *grad_weight;                       /* [V, Hs] */
  float *grad_bias;                         /* [V], NULL without a bias */
  float *x_s, *w_s, *x_t, *w_t, *b_s, *b_t; /* the inputs widened to fp32 */
  float *z_s, *z_t;                         /* one row of logits, [V] each */
  double loss;
  int32_t last_pass;
  size_t held_bytes;
} cpu_state;

static void *cpu_create(void *context, char *message) {
  (void)context;
  cpu_state *s = calloc(1, sizeof *s);
  if (s == NULL) example_message(message, "out of host memory");
  return s;
}

static int32_t cpu_release(void *state, char *message) {
  (void)message;
  cpu_state *s = state;
  float **buffers[] = {&s->grad_input, &s->grad_weight, &s->grad_bias, &s->x_s, &s->w_s, &s->x_t,
                       &s->w_t,        &s->b_s,         &s->b_t,       &s->z_s, &s->z_t};
  for (size_t k = 0; k < sizeof buffers / sizeof buffers[0]; ++k) {
    free(*buffers[k]);
    *buffers[k] = NULL;
  }
  s->held_bytes = 0;
  return KIBENCH_PLUGIN_OK;
}

static void cpu_destroy(void *state) {
  char message[KIBENCH_PLUGIN_MESSAGE_BYTES];
  cpu_release(state, message);
  free(state);
}

/* Room for a bf16 input widened to fp32 (NULL for an absent tensor). */
static float *widening_buffer(const kibench_tensor *t, int64_t count, size_t *held) {
  if (t->data == NULL) return NULL;
  float *out = malloc((size_t)count * sizeof *out);
  if (out != NULL) *held += (size_t)count * sizeof *out;
  return out;
}

/* Widens at every call: kibench may put another of the workload's input
 * sets into the same buffers between calls (docs/protocol.md), and a lane
 * that answers for the inputs it saw in prepare fails its check. */
static void widen(const kibench_tensor *t, int64_t count, float *out) {
  if (t->data == NULL) return;
  const uint16_t *bits = t->data;
  for (int64_t k = 0; k < count; ++k) out[k] = example_bf16_to_float(bits[k]);
}

static int32_t cpu_prepare(void *state, const kibench_plugin_inputs *inputs, char *message) {
  cpu_state *s = state;
  s->in = *inputs;
  const int64_t T = inputs->info.tokens, V = inputs->info.vocab, H = inputs->info.hidden,
                Hs = inputs->info.student_hidden;
  s->x_s = widening_buffer(&inputs->student_input, T * Hs, &s->held_bytes);
  s->w_s = widening_buffer(&inputs->student_weight, V * Hs, &s->held_bytes);
  s->x_t = widening_buffer(&inputs->teacher_input, T * H, &s->held_bytes);
  s->w_t = widening_buffer(&inputs->teacher_weight, V * H, &s->held_bytes);
  s->b_s = widening_buffer(&inputs->student_bias, V, &s->held_bytes);
  s->b_t = widening_buffer(&inputs->teacher_bias, V, &s->held_bytes);
  s->grad_input = malloc((size_t)(T * Hs) * sizeof(float));
  s->grad_weight = malloc((size_t)(V * Hs) * sizeof(float));
  s->grad_bias = inputs->student_bias.data != NULL ? malloc((size_t)V * sizeof(float)) : NULL;
  s->z_s = malloc((size_t)V * sizeof(float));
  s->z_t = malloc((size_t)V * sizeof(float));
  s->held_bytes += (size_t)(T * Hs + V * Hs + 2 * V + (s->grad_bias ? V : 0)) * sizeof(float);
  if (s->x_s == NULL || s->w_s == NULL || s->x_t == NULL || s->w_t == NULL || s->grad_input == NULL ||
      s->grad_weight == NULL || s->z_s == NULL || s->z_t == NULL ||
      (inputs->student_bias.data != NULL && (s->b_s == NULL || s->grad_bias == NULL)) ||
      (inputs->teacher_bias.data != NULL && s->b_t == NULL)) {
    example_message(message, "out of host memory");
    return KIBENCH_PLUGIN_RESOURCE_EXCEEDED;
  }
  return KIBENCH_PLUGIN_OK;
}

/* One row of logits: z[k] = x . w[k] (+ b[k]), fp32 accumulation. */
static void logits_row(const float *x, const float *w, const float *b, int64_t V, int64_t K, float *z) {
  for (int64_t k = 0; k < V; ++k) {
    const float *wk = w + k * K;
    float sum = 0.0f;
    for (int64_t h = 0; h < K; ++h) sum += x[h] * wk[h];
    z[k] = b != NULL ? sum + b[k] : sum;
  }
}

static int32_t cpu_run(void *state, int32_t pass, void *stream, char *message) {
  (void)stream;
  (void)message;
  cpu_state *s = state;
  const kibench_workload_info *info = &s->in.info;
  const int64_t T = info->tokens, V = info->vocab, H = info->hidden, Hs = info->student_hidden;
  const int64_t *y = s->in.target.data;
  const int gradients = pass != KIBENCH_PASS_FORWARD;
  s->last_pass = pass;
  widen(&s->in.student_input, T * Hs, s->x_s);
  widen(&s->in.student_weight, V * Hs, s->w_s);
  widen(&s->in.teacher_input, T * H, s->x_t);
  widen(&s->in.teacher_weight, V * H, s->w_t);
  widen(&s->in.student_bias, V, s->b_s);
  widen(&s->in.teacher_bias, V, s->b_t);
  if (gradients) {
    memset(s->grad_input, 0, (size_t)(T * Hs) * sizeof(float));
    memset(s->grad_weight, 0, (size_t)(V * Hs) * sizeof(float));
    if (s->grad_bias != NULL) memset(s->grad_bias, 0, (size_t)V * sizeof(float));
  }
  int64_t valid = 0;
  for (int64_t i = 0; i < T; ++i) valid += y[i] != info->ignore_index;
  const float n = (float)(valid > 0 ? valid : 1);
  float hard = 0.0f, soft = 0.0f;
  for (int64_t i = 0; i < T; ++i) {
    if (y[i] == info->ignore_index) continue; /* no loss and a zero gradient row */
    logits_row(s->x_s + i * Hs, s->w_s, s->b_s, V, Hs, s->z_s);
    logits_row(s->x_t + i * H, s->w_t, s->b_t, V, H, s->z_t);
    example_row_t row =
        example_row_loss(s->z_s, s->z_t, V, y[i], (float)info->beta, (float)info->temperature);
    hard += row.cross_entropy;
    soft += row.jsd;
    if (!gradients) continue;
    /* z_s now holds the row's gradient of the loss w.r.t. the logits. */
    example_row_gradient(s->z_s, s->z_t, V, y[i], (float)info->beta, (float)info->temperature, row,
                         (float)info->weight_hard / n, (float)info->weight_soft / n);
    const float *x = s->x_s + i * Hs;
    float *gx = s->grad_input + i * Hs;
    for (int64_t k = 0; k < V; ++k) {
      const float g = s->z_s[k];
      const float *wk = s->w_s + k * Hs;
      float *gw = s->grad_weight + k * Hs;
      for (int64_t h = 0; h < Hs; ++h) {
        gx[h] += g * wk[h];
        gw[h] += g * x[h];
      }
      if (s->grad_bias != NULL) s->grad_bias[k] += g;
    }
  }
  s->loss = (double)((float)info->weight_hard * hard / n + (float)info->weight_soft * soft / n);
  return KIBENCH_PLUGIN_OK;
}

static kibench_tensor tensor(const void *data, int64_t rows, int64_t columns, int on_device) {
  kibench_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = KIBENCH_DTYPE_FP32;
  t.on_device = on_device;
  t.rank = columns > 0 ? 2 : 1;
  t.shape[0] = rows;
  t.shape[1] = columns > 0 ? columns : 0;
  return t;
}

void example_fill_outputs(kibench_outputs *out, double loss, const kibench_workload_info *info,
                          const float *grad_input, const float *grad_weight, const float *grad_bias,
                          int on_device) {
  memset(out, 0, sizeof *out);
  out->loss = loss;
  out->grad_student_input = tensor(grad_input, info->tokens, info->student_hidden, on_device);
  out->grad_student_weight = tensor(grad_weight, info->vocab, info->student_hidden, on_device);
  if (grad_bias != NULL) out->grad_student_bias = tensor(grad_bias, info->vocab, 0, on_device);
}

static int32_t cpu_outputs(void *state, kibench_outputs *outputs, char *message) {
  (void)message;
  cpu_state *s = state;
  /* The gradient buffers exist from prepare() on, so kibench can poison
   * them before the first run; after a forward run they are stale, and
   * kibench reads only the loss. */
  example_fill_outputs(outputs, s->loss, &s->in.info, s->grad_input, s->grad_weight, s->grad_bias, 0);
  return KIBENCH_PLUGIN_OK;
}

static int32_t cpu_memory(void *state, kibench_memory *memory, char *message) {
  (void)message;
  cpu_state *s = state;
  const kibench_workload_info *info = &s->in.info;
  const uint64_t outputs =
      (uint64_t)(info->tokens * info->student_hidden + info->vocab * info->student_hidden +
                 (s->grad_bias != NULL ? info->vocab : 0)) *
      sizeof(float);
  memory->output_bytes = outputs;
  memory->workspace_bytes = s->held_bytes - outputs;
  memory->peak_bytes = s->held_bytes;
  return KIBENCH_PLUGIN_OK;
}

/* ---------------------------------------------------------------- entry */

static const kibench_plugin_implementation implementations[] = {
    {.name = "example-cpu-fp32",
     .summary = "example plugin: the loss and student gradients on the host in plain C, fp32 throughout",
     .needs_gpu = 0,
     .computes_loss = 1,
     .revision = {.name = "kibench-example-cpu-fp32",
                  .title = "Example plugin: fp32 host loss and gradients",
                  .description = "bf16 inputs widened to fp32; per token row the student and teacher logits "
                                 "(fp32 dot products), cross-entropy and generalized JSD in fp32, the row "
                                 "gradient, and its products with W_s and x_s accumulated in fp32",
                  .language = "c",
                  .path = "examples/plugin/example_plugin.c",
                  .symbol = "cpu_run",
                  .version = EXAMPLE_PLUGIN_VERSION,
                  .architectures = host_architectures,
                  .dtypes = dtypes,
                  .labels = labels,
                  .label_count = 1},
     .create = cpu_create,
     .destroy = cpu_destroy,
     .unsupported = example_unsupported,
     .prepare = cpu_prepare,
     .run = cpu_run,
     .outputs = cpu_outputs,
     .memory = cpu_memory,
     .release = cpu_release},
    {.name = "example-cuda-simt",
     .summary = "example plugin: the same math in straightforward CUDA (fp32 SIMT GEMMs, one block per row)",
     .needs_gpu = 1,
     .computes_loss = 1,
     .revision = {.name = "kibench-example-cuda-simt",
                  .title = "Example plugin: straightforward CUDA loss and gradients",
                  .description = "per chunk of 1024 tokens: the logits by a tiled fp32 SIMT GEMM (no tensor "
                                 "cores), one block per row for cross-entropy, generalized JSD and the row "
                                 "gradient, then grad x_s and grad W_s by the same GEMM; fp32 gradients",
                  .language = "cuda",
                  .path = "examples/plugin/example_gpu.cu",
                  .symbol = "gpu_run",
                  .version = EXAMPLE_PLUGIN_VERSION,
                  .architectures = gpu_architectures,
                  .dtypes = dtypes,
                  .labels = labels,
                  .label_count = 1},
     .create = example_gpu_create,
     .destroy = example_gpu_destroy,
     .unsupported = example_unsupported,
     .prepare = example_gpu_prepare,
     .run = example_gpu_run,
     .outputs = example_gpu_outputs,
     .memory = example_gpu_memory,
     .release = example_gpu_release},
};

static const kibench_plugin plugin = {
    .abi_version = KIBENCH_PLUGIN_ABI_VERSION,
    .name = "kibench example plugin",
    .implementation_count = (int32_t)(sizeof implementations / sizeof implementations[0]),
    .implementations = implementations,
};

EXAMPLE_EXPORT const kibench_plugin *kibench_plugin_entry(int32_t host_abi_version) {
  (void)host_abi_version; /* kibench compares plugin.abi_version with its own */
  return &plugin;
}
