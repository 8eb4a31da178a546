/* What the example plugin's two files share (example_plugin.c: the entry
 * and the CPU lane; example_gpu.cu: the GPU lane). */
#ifndef KIBENCH_EXAMPLE_PLUGIN_H
#define KIBENCH_EXAMPLE_PLUGIN_H

#include <stdint.h>

#include "kibench_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXAMPLE_PLUGIN_VERSION "1.0.0"
/* Only the entry symbol leaves the library (it is built with hidden
 * visibility). */
#define EXAMPLE_EXPORT __attribute__((visibility("default")))

void example_message(char *message, const char *text);
float example_bf16_to_float(uint16_t bits);
int32_t example_unsupported(void *context, const kibench_workload_info *info, int32_t pass, char *message);
void example_fill_outputs(kibench_outputs *out, double loss, const kibench_workload_info *info,
                          const float *grad_input, const float *grad_weight, const float *grad_bias,
                          int on_device);

/* One token row's figures (fp32). */
typedef struct {
  float lse_raw;       /* logsumexp of the raw student logits (cross-entropy) */
  float lse_student;   /* logsumexp of z_s / tau */
  float lse_teacher;   /* logsumexp of z_t / tau */
  float cross_entropy; /* lse_raw - z_s[y] */
  float kl_student;    /* KL(q||m), or KL(q||p) at beta = 1: the term the gradient subtracts */
  float jsd;           /* the row's generalized JSD */
} example_row_t;

example_row_t example_row_loss(const float *z_s, const float *z_t, int64_t V, int64_t y, float beta,
                               float temperature);
void example_row_gradient(float *z_s, const float *z_t, int64_t V, int64_t y, float beta, float temperature,
                          example_row_t row, float hard_scale, float soft_scale);

/* The GPU lane (example_gpu.cu). */
void *example_gpu_create(void *context, char *message);
void example_gpu_destroy(void *state);
int32_t example_gpu_prepare(void *state, const kibench_plugin_inputs *inputs, char *message);
int32_t example_gpu_run(void *state, int32_t pass, void *stream, char *message);
int32_t example_gpu_outputs(void *state, kibench_outputs *outputs, char *message);
int32_t example_gpu_memory(void *state, kibench_memory *memory, char *message);
int32_t example_gpu_release(void *state, char *message);

#ifdef __cplusplus
}
#endif

#endif /* KIBENCH_EXAMPLE_PLUGIN_H */
