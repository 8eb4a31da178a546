/* Version 1 of include/kibench/kibench_plugin.h, kept as it was: the example
 * plugin built against it (test/CMakeLists.txt) is a plugin of the old ABI,
 * which kibench must still load and run. */
/* The plugin ABI: implementations of the distillation loss compiled outside
 * kibench (a shared library loaded with `kibench run --plugin lib.so`) or
 * supplied by a host program (the Python package, through
 * kibench_cli_run in kibench.h), run beside kibench's own under one
 * protocol: the same inputs, the same oracle gate, the same timer, L2
 * flush and interleaved rounds, the same manifests.
 *
 * A plugin library exports one function, KIBENCH_PLUGIN_ENTRY_SYMBOL:
 *
 *     const kibench_plugin *kibench_plugin_entry(int32_t host_abi_version);
 *
 * kibench calls it once with its KIBENCH_PLUGIN_ABI_VERSION; the plugin
 * returns a description of itself that lives as long as the library is
 * loaded (static data is the usual way). The first member of
 * kibench_plugin is its ABI version in every version of this header, so
 * kibench refuses a plugin of another version (exit 2, naming the file)
 * before it reads anything else.
 *
 * The description lists implementations. Each has a name (what --impl
 * takes), flags, revision facts (what its ImplementationRevision manifest
 * records) and functions over a state the plugin allocates. kibench calls
 * them in this order, from one thread:
 *
 *   create -> unsupported? -> prepare -> [poison] -> before_sample -> run ->
 *   outputs (the check against the fp64 oracle) -> (flush, before_sample,
 *   run) per warm-up and per timed sample -> memory -> release -> destroy
 *
 * Every function but destroy returns a kibench_plugin_status: 0 for
 * success, otherwise the kind of failure, with a one-line reason written
 * into `message` (a buffer of KIBENCH_PLUGIN_MESSAGE_BYTES bytes,
 * NUL-terminated). A failure fails that implementation only: it is
 * recorded with the status and the reason, and the others are still
 * measured.
 *
 * GPU implementations (needs_gpu = 1) get device pointers and kibench's
 * CUDA stream (a cudaStream_t passed as void *): all work of run() must be
 * ordered on that stream (enqueued on it, or joined into it with events),
 * because kibench's CUDA-event timer and L2 flush are recorded there.
 * run() may return before the work completes; outputs() must wait for it.
 * CPU implementations get host pointers, a NULL stream, and are timed with
 * a steady clock around run(), which must be complete when it returns. */
#ifndef KIBENCH_PLUGIN_H
#define KIBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "kibench.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIBENCH_PLUGIN_ABI_VERSION 1
#define KIBENCH_PLUGIN_ENTRY_SYMBOL "kibench_plugin_entry"
#define KIBENCH_PLUGIN_MESSAGE_BYTES 512

/* Each failure maps to the BenchmarkRun status of the same name. */
typedef enum {
  KIBENCH_PLUGIN_OK = 0,
  KIBENCH_PLUGIN_RUNTIME_ERROR = 1,     /* runtime_error: anything not below */
  KIBENCH_PLUGIN_INCORRECT_SHAPE = 2,   /* incorrect_shape: an output of the wrong shape */
  KIBENCH_PLUGIN_INCORRECT_DTYPE = 3,   /* incorrect_dtype: an output of a type kibench cannot compare */
  KIBENCH_PLUGIN_TIMEOUT = 4,           /* timeout: a call ran past inputs->timeout_s */
  KIBENCH_PLUGIN_RESOURCE_EXCEEDED = 5, /* resource_exceeded: out of memory */
  KIBENCH_PLUGIN_UNSUPPORTED = 6        /* only from unsupported(): the reason is in message */
} kibench_plugin_status;

/* What kibench hands prepare(): the workload's inputs (views of kibench's
 * buffers, read-only, valid until release()), its sizes and scalars, the
 * pass being measured, and where to run. */
typedef struct {
  kibench_workload_info info;
  kibench_tensor student_input;  /* x_s [T, Hs] bf16 */
  kibench_tensor student_weight; /* W_s [V, Hs] bf16 */
  kibench_tensor teacher_input;  /* x_t [T, H] bf16 */
  kibench_tensor teacher_weight; /* W_t [V, H] bf16 */
  kibench_tensor target;         /* y [T] int64, ignore_index where ignored */
  kibench_tensor student_bias;   /* b_s [V] bf16, data NULL without a bias */
  kibench_tensor teacher_bias;   /* b_t [V] bf16, data NULL without a bias */
  int32_t pass;                  /* kibench_pass: what run() will be asked for */
  int32_t device;                /* the CUDA device (GPU implementations), else -1 */
  void *stream;                  /* kibench's cudaStream_t (GPU), else NULL */
  double timeout_s; /* --timeout: a call that takes longer may fail with KIBENCH_PLUGIN_TIMEOUT */
} kibench_plugin_inputs;

typedef struct {
  const char *key;
  const char *value;
} kibench_plugin_pair;

/* What the implementation's ImplementationRevision records (KernelIndex
 * v1alpha1; docs/manifests.md). Strings may be NULL where marked optional.
 * kibench adds the operation (distill_jsd_loss) and, for a library, the
 * sha256 of the .so file as spec.source, so a rebuilt plugin never shares
 * a digest with the old one. */
typedef struct {
  const char *name;        /* metadata.name, [a-z0-9][a-z0-9._-]*, e.g. "mylib-fused-jsd" */
  const char *title;       /* optional, at most 200 characters */
  const char *description; /* optional, at most 2000 characters */
  const char *language;    /* callable.language, [a-z][a-z0-9_]*: "c", "cpp", "cuda", "triton", ... */
  const char *path;        /* optional callable.path, relative to its repository */
  const char *symbol;      /* optional callable.symbol */
  const char *version;     /* projectRevision.version, 1 to 100 characters */
  const char *repository;  /* optional projectRevision.repository (a URL) */
  const char *commit;      /* optional projectRevision.commit, 40 lowercase hex digits */
  const char *tree_digest; /* optional projectRevision.treeDigest, "sha256:<64 hex>" */
  const char *licence;     /* optional licensing.declared, an SPDX expression */
  const char *const *architectures; /* support.hardwareArchitectures, NULL-terminated: "sm_90a", "x86_64" */
  const char *const *dtypes;        /* support.dtypes, NULL-terminated; NULL: {"bf16"} */
  const char *package;              /* optional: the installed package the code is */
  const char *package_version;      /* optional: its version */
  const kibench_plugin_pair *requirements; /* package -> version ([a-z][a-z0-9_]* keys); needs `package` */
  int32_t requirement_count;
  const kibench_plugin_pair *labels; /* metadata.labels ([a-z][a-z0-9_]* keys, values <= 200 characters) */
  int32_t label_count;
  /* Optional spec.source: the one file the code ships as (a Python
   * module), "sha256:<64 hex>" of its bytes, its base name and size. For a
   * library loaded with --plugin kibench records the library file instead. */
  const char *source_digest;
  const char *source_file_name;
  int64_t source_size_bytes;
} kibench_plugin_revision;

typedef struct {
  const char *name;      /* for --impl and file names: [a-z0-9][a-z0-9._-]*, no built-in's name */
  const char *summary;   /* one line for `kibench list` */
  int32_t needs_gpu;     /* 1: device pointers and kibench's stream; 0: host pointers */
  int32_t computes_loss; /* 0: times work without a loss (a floor): never checked, never ranked */
  kibench_plugin_revision revision;
  void *context; /* handed to create() and unsupported() as it is */

  /* A new state; NULL (with the reason in message) when it cannot be made. */
  void *(*create)(void *context, char *message);
  /* Frees the state (after release()). */
  void (*destroy)(void *state);
  /* Optional (NULL: any workload and pass). KIBENCH_PLUGIN_OK when it can
   * run `info` for `pass`, KIBENCH_PLUGIN_UNSUPPORTED with the reason when
   * it cannot (the implementation is then skipped, saying why), any other
   * status for a failure. */
  int32_t (*unsupported)(void *context, const kibench_workload_info *info, int32_t pass, char *message);
  /* Binds the inputs and allocates what run() needs; not timed. */
  int32_t (*prepare)(void *state, const kibench_plugin_inputs *inputs, char *message);
  /* Optional: untimed work a sample of `pass` depends on (the forward
   * before a backward-only sample), on `stream`. */
  int32_t (*before_sample)(void *state, int32_t pass, void *stream, char *message);
  /* One invocation of `pass` (kibench_pass) on `stream`; timed. */
  int32_t (*run)(void *state, int32_t pass, void *stream, char *message);
  /* Waits for the last run and describes its outputs: the loss, and after a
   * full pass the student gradients (grad_student_bias where the workload
   * has a student bias). The tensors stay the plugin's, valid and writable
   * by kibench until the next run(): before the check kibench fills every
   * output this exposes with 0xFF bytes (NaN in bf16, fp32 and fp64), so an
   * element a run leaves unwritten fails the check. Dense row-major, bf16,
   * fp32 or fp64, on the device for a GPU implementation. */
  int32_t (*outputs)(void *state, kibench_outputs *outputs, char *message);
  /* Optional: poisons outputs outputs() does not expose yet (before the
   * check). */
  int32_t (*poison)(void *state, void *stream, char *message);
  /* Optional: the bytes the implementation holds beyond kibench's inputs
   * (input_bytes is ignored; kibench counts its inputs itself): outputs,
   * workspace, and the high-water mark of the two since prepare(). NULL:
   * the record counts only the outputs outputs() exposes. */
  int32_t (*memory)(void *state, kibench_memory *memory, char *message);
  /* Frees what prepare() allocated; prepare() may be called again after. */
  int32_t (*release)(void *state, char *message);
} kibench_plugin_implementation;

typedef struct kibench_plugin {
  int32_t abi_version; /* KIBENCH_PLUGIN_ABI_VERSION; the first member in every version */
  const char *name;    /* the plugin, for messages */
  int32_t implementation_count;
  const kibench_plugin_implementation *implementations;
} kibench_plugin;

typedef const kibench_plugin *(*kibench_plugin_entry_fn)(int32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* KIBENCH_PLUGIN_H */
