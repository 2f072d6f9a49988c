/* lockstep's C ABI: bitwise-reproducible training from C, C++ or any language with a C FFI.
 *
 * Conventions:
 * - Every function returns a lockstep_status (LOCKSTEP_OK = 0) except lockstep_last_error and
 *   lockstep_status_name, which return text.
 * - Results come back through out-parameters, which are written only on success.
 * - After a call fails, lockstep_last_error() on the same thread describes why; after a call
 *   succeeds it returns "".
 * - Objects are opaque handles, created by *_create / *_load and released by *_free (free on NULL
 *   does nothing; a free never fails and leaves lockstep_last_error() unchanged, so cleaning up
 *   after a failed call keeps its message). A handle may be used from one thread at a time.
 * - Hashes are 64 lowercase hex digits plus a terminating NUL: pass a char[LOCKSTEP_HASH_SIZE].
 * - Checkpoints are canonical safetensors files; a model's hash is the SHA-256 of its checkpoint.
 *
 * The header is C99 and C++ compatible. */
#ifndef LOCKSTEP_LOCKSTEP_H_
#define LOCKSTEP_LOCKSTEP_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define LOCKSTEP_API
#else
#define LOCKSTEP_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LOCKSTEP_HASH_SIZE 65 /* 64 hex digits + NUL */

typedef enum lockstep_status {
  LOCKSTEP_OK = 0,
  LOCKSTEP_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad shape, bad value, unknown name */
  LOCKSTEP_ERROR_IO = 2,               /* a file could not be opened, read or written */
  LOCKSTEP_ERROR_FORMAT = 3,           /* a file was read but its contents are not valid */
  LOCKSTEP_ERROR_STATE = 4,            /* wrong state: FP environment, mismatched handles */
  LOCKSTEP_ERROR_INTERNAL = 5,         /* a failure inside lockstep that is not the caller's */
  LOCKSTEP_ERROR_CANCELLED = 6,        /* a progress callback asked to stop */
  LOCKSTEP_ERROR_UNAVAILABLE = 7,      /* a device (or its plugin, or its driver) is not there */
  LOCKSTEP_ERROR_RESOURCE = 8          /* out of memory, or a size this platform cannot address */
} lockstep_status;

typedef struct lockstep_tensor lockstep_tensor;       /* float32 (or int32/int64) tensor */
typedef struct lockstep_model lockstep_model;         /* a network with its parameters */
typedef struct lockstep_optimizer lockstep_optimizer; /* an optimizer bound to one model */
typedef struct lockstep_dataset lockstep_dataset;     /* inputs [N, 1, rows, cols] + labels */

/* ---- errors and library information */
/* Why the last failing call on this thread failed; "" when the last call succeeded. */
LOCKSTEP_API const char* lockstep_last_error(void);
/* A static name such as "LOCKSTEP_ERROR_IO". */
LOCKSTEP_API const char* lockstep_status_name(lockstep_status status);
/* "MAJOR.MINOR.PATCH"; the string is static. */
LOCKSTEP_API lockstep_status lockstep_version(const char** out);
/* The numerical contract's version: equal versions give equal bits. */
LOCKSTEP_API lockstep_status lockstep_contract_version(int* out);
/* The SIMD target kernels dispatch to (e.g. "AVX2"), NUL-terminated into buf[size]. */
LOCKSTEP_API lockstep_status lockstep_simd_target(char* buf, size_t size);
/* The SIMD targets this CPU can run, best first, separated by ", ". */
LOCKSTEP_API lockstep_status lockstep_simd_targets_available(char* buf, size_t size);
/* Threads used by kernels (including the caller); results do not depend on it. n >= 1. Safe to
 * call while other threads compute: their running kernels finish on the old pool, the next ones
 * use the new one. The default comes from $LOCKSTEP_NUM_THREADS, else the number of cores. */
LOCKSTEP_API lockstep_status lockstep_set_num_threads(int n);
/* ---- devices: every later call computes on the current device ("cpu" at start). "cuda" and
   "cuda:N" need the CUDA plugin (liblockstep_cuda.so next to this library, or the file named by
   $LOCKSTEP_CUDA_PLUGIN) and a GPU; otherwise LOCKSTEP_ERROR_UNAVAILABLE says why and the current
   device is unchanged. Results are the same bits on every device. The current device belongs to
   the calling thread (as CUDA's does): every thread starts on "cpu", and a thread that switches
   never moves another thread's work. */
LOCKSTEP_API lockstep_status lockstep_set_device(const char* name);
/* The current device's description, e.g. "cpu" or "cuda:0 (NVIDIA H200, compute 9.0, 139.8 GiB)". */
LOCKSTEP_API lockstep_status lockstep_get_device(char* buf, size_t size);
/* The CUDA devices the plugin sees, one description per line, in *count; with none, *count is 0
   and buf holds the reason (no plugin, no driver, no GPU). */
LOCKSTEP_API lockstep_status lockstep_cuda_devices(char* buf, size_t size, int* count);
LOCKSTEP_API lockstep_status lockstep_get_num_threads(int* out);
/* SHA-256 of a file's bytes (what `sha256sum` prints). Regular files only: a FIFO or device is
 * refused (LOCKSTEP_ERROR_INVALID_ARGUMENT) without reading from it. */
LOCKSTEP_API lockstep_status lockstep_file_sha256(const char* path, char out[LOCKSTEP_HASH_SIZE]);
/* Writes the canonical form of any safetensors checkpoint (another tool's too) to out_path,
 * atomically: the same tensors and values as lockstep encodes checkpoints. Its SHA-256, which
 * hash_out (may be NULL) receives, is the model hash lockstep reports for a model loaded from
 * in_path. */
LOCKSTEP_API lockstep_status lockstep_canonicalize(const char* in_path, const char* out_path,
                                                   char hash_out[LOCKSTEP_HASH_SIZE]);

/* ---- tensors (float32, contiguous, row-major) */
#define LOCKSTEP_MAX_RANK 8
/* Copies numel = product(shape) floats from data. rank in [0, LOCKSTEP_MAX_RANK], dims >= 0. */
LOCKSTEP_API lockstep_status lockstep_tensor_create(const float* data, const int64_t* shape, int rank,
                                                    lockstep_tensor** out);
LOCKSTEP_API lockstep_status lockstep_tensor_free(lockstep_tensor* tensor);
LOCKSTEP_API lockstep_status lockstep_tensor_rank(const lockstep_tensor* tensor, int* out);
/* Writes rank() dimensions into shape[capacity]; capacity must be >= rank. */
LOCKSTEP_API lockstep_status lockstep_tensor_shape(const lockstep_tensor* tensor, int64_t* shape, int capacity);
LOCKSTEP_API lockstep_status lockstep_tensor_numel(const lockstep_tensor* tensor, int64_t* out);
/* Copies the elements out; count must equal numel. */
LOCKSTEP_API lockstep_status lockstep_tensor_copy_data(const lockstep_tensor* tensor, float* out, int64_t count);

/* ---- models
 * "lenet5": LeNet-5 (input [N, 1, 28, 28]), the MNIST reference model.
 * "mlp":    Flatten, Linear(784, 128), ReLU, Linear(128, 10) (input [N, 784] or [N, 1, 28, 28]).
 * Both give 10 logits per example; parameters are drawn from the seed's "init" stream. */
LOCKSTEP_API lockstep_status lockstep_model_create(const char* arch, uint64_t seed, lockstep_model** out);
/* Loads a checkpoint. arch NULL or "auto" picks the architecture whose state dict matches. */
LOCKSTEP_API lockstep_status lockstep_model_load(const char* arch, const char* path, lockstep_model** out);
LOCKSTEP_API lockstep_status lockstep_model_free(lockstep_model* model);
/* The architecture name; static string. */
LOCKSTEP_API lockstep_status lockstep_model_arch(const lockstep_model* model, const char** out);
/* Inference (evaluation mode, no gradients): logits [N, 10] into a new tensor. */
LOCKSTEP_API lockstep_status lockstep_model_forward(lockstep_model* model, const lockstep_tensor* input,
                                                    lockstep_tensor** out);
/* Writes the checkpoint atomically; hash_out (may be NULL) receives its SHA-256. */
LOCKSTEP_API lockstep_status lockstep_model_save(const lockstep_model* model, const char* path,
                                                 char hash_out[LOCKSTEP_HASH_SIZE]);
/* The hash the model's checkpoint would have, without writing it. */
LOCKSTEP_API lockstep_status lockstep_model_hash(const lockstep_model* model, char out[LOCKSTEP_HASH_SIZE]);

/* ---- ONNX models (docs/onnx.md)
 * An .onnx file imported as a model: its initializers become parameters under their ONNX names,
 * its graph runs lockstep's ops, so forward, train_step, evaluate, save and hash work on it as on
 * any model (arch "onnx"). What lockstep does not compute exactly (an operator, attribute or type)
 * is refused at load with LOCKSTEP_ERROR_UNAVAILABLE naming the node; a malformed file is
 * LOCKSTEP_ERROR_FORMAT. seed seeds the graph's Dropout streams (used only while training). */
LOCKSTEP_API lockstep_status lockstep_model_load_onnx(const char* path, uint64_t seed, lockstep_model** out);
LOCKSTEP_API lockstep_status lockstep_model_load_onnx_bytes(const void* data, size_t size, uint64_t seed,
                                                            lockstep_model** out);
/* The graph's inputs and outputs: counts, and names (valid while the model lives). */
LOCKSTEP_API lockstep_status lockstep_model_io_count(const lockstep_model* model, int* inputs, int* outputs);
LOCKSTEP_API lockstep_status lockstep_model_io_name(const lockstep_model* model, int is_output, int index,
                                                    const char** out);
/* Inference on every input (in io order; int64 tensors feed integer inputs, float32 0/1 bool ones):
 * output_count new tensors into outputs (bool outputs come out as float32 0.0 / 1.0). */
LOCKSTEP_API lockstep_status lockstep_model_run(lockstep_model* model, const lockstep_tensor* const* inputs,
                                                int input_count, lockstep_tensor** outputs, int output_count);

/* ---- tensors of other types, and .npy files */
typedef enum lockstep_dtype { LOCKSTEP_FLOAT32 = 0, LOCKSTEP_INT32 = 1, LOCKSTEP_INT64 = 2 } lockstep_dtype;
LOCKSTEP_API lockstep_status lockstep_tensor_create_int64(const int64_t* data, const int64_t* shape, int rank,
                                                          lockstep_tensor** out);
LOCKSTEP_API lockstep_status lockstep_tensor_dtype(const lockstep_tensor* tensor, lockstep_dtype* out);
/* Copies an integer tensor's elements out as int64; count must equal numel. */
LOCKSTEP_API lockstep_status lockstep_tensor_copy_int64(const lockstep_tensor* tensor, int64_t* out, int64_t count);
/* Reads a NumPy .npy file: '<f4' and '<f8' (rounded once) become float32, '<i4' int32, '<i8' int64,
 * '|b1' float32 0/1; Fortran order, big-endian and other types are LOCKSTEP_ERROR_FORMAT. */
LOCKSTEP_API lockstep_status lockstep_tensor_load_npy(const char* path, lockstep_tensor** out);
/* Writes a .npy file (version 1.0, C order, little-endian) atomically. */
LOCKSTEP_API lockstep_status lockstep_tensor_save_npy(const lockstep_tensor* tensor, const char* path);
/* SHA-256 of the elements in C order as little-endian bytes (a .npy file's data section). */
LOCKSTEP_API lockstep_status lockstep_tensor_sha256(const lockstep_tensor* tensor, char out[LOCKSTEP_HASH_SIZE]);

/* ---- optimizer and training */
typedef struct lockstep_adam_options {
  float lr, beta1, beta2, eps, weight_decay;
  int decoupled_weight_decay; /* nonzero: AdamW */
} lockstep_adam_options;
/* PyTorch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay. */
LOCKSTEP_API lockstep_status lockstep_adam_options_default(lockstep_adam_options* out);
/* Adam over the model's parameters; options NULL means the defaults. The optimizer keeps the
 * parameters alive and must only be used with this model. */
LOCKSTEP_API lockstep_status lockstep_adam_create(lockstep_model* model, const lockstep_adam_options* options,
                                                  lockstep_optimizer** out);
/* AdamW (decoupled weight decay): the same options; NULL means PyTorch's AdamW defaults (weight
 * decay 0.01); decoupled_weight_decay is always on. */
LOCKSTEP_API lockstep_status lockstep_adamw_create(lockstep_model* model, const lockstep_adam_options* options,
                                                   lockstep_optimizer** out);
typedef struct lockstep_sgd_options {
  float lr, momentum, dampening, weight_decay;
  int nesterov; /* nonzero: Nesterov momentum (needs momentum > 0 and dampening 0) */
} lockstep_sgd_options;
/* PyTorch's defaults: lr 0.01, no momentum, no dampening, no weight decay. */
LOCKSTEP_API lockstep_status lockstep_sgd_options_default(lockstep_sgd_options* out);
/* SGD over the model's parameters; options NULL means the defaults. Optimizers of every front
 * door have the same names: SGD, Adam, AdamW (C++ optim::Sgd/Adam/AdamW, npm optim.SGD/Adam/AdamW). */
LOCKSTEP_API lockstep_status lockstep_sgd_create(lockstep_model* model, const lockstep_sgd_options* options,
                                                 lockstep_optimizer** out);
LOCKSTEP_API lockstep_status lockstep_optimizer_free(lockstep_optimizer* optimizer);
/* One step: zero the gradients, cross-entropy of model(inputs) against labels (count = N, each in
 * [0, 10)), backward, optimizer step. loss_out (may be NULL) receives the loss before the step.
 * A NaN or infinite loss returns LOCKSTEP_ERROR_STATE before the update (model and optimizer
 * unchanged); an optimizer created for another model returns LOCKSTEP_ERROR_STATE. */
LOCKSTEP_API lockstep_status lockstep_train_step(lockstep_model* model, lockstep_optimizer* optimizer,
                                                 const lockstep_tensor* inputs, const int64_t* labels,
                                                 int64_t label_count, float* loss_out);

/* Fine-tuning in file order (`lockstep train onnx`): every epoch the data set in order, batch by
 * batch (the last batch of an epoch may be smaller), each step lockstep_train_step's. Training
 * states and receipts (docs/verifiable-training.md) carry the run's identity: the model's (an
 * imported model: the SHA-256 of its ONNX bytes and its seed), the optimizer's kind and options,
 * the batch size and the data's fingerprint. */
typedef struct lockstep_fine_tune_options {
  uint32_t struct_size;      /* sizeof(lockstep_fine_tune_options), set by lockstep_fine_tune_options_default */
  int64_t epochs;            /* passes over the data set (default 1) */
  int64_t max_steps;         /* stop after this many steps; -1 (default): every step of the epochs */
  int64_t batch_size;        /* default 100 */
  const char* resume_path;   /* a training state of the same run to continue, or NULL */
  const char* receipt_path;  /* write a receipt of the run there, or NULL (a run from its first step) */
  int64_t receipt_every;     /* steps between the training states kept beside it (0: about ten) */
} lockstep_fine_tune_options;
LOCKSTEP_API lockstep_status lockstep_fine_tune_options_default(lockstep_fine_tune_options* out);
typedef struct lockstep_fine_tune_result {
  int64_t steps;                            /* the run's steps at the end */
  float last_loss;                          /* of the last step this call ran */
  char trained_hash[LOCKSTEP_HASH_SIZE];    /* the model's hash at the end */
} lockstep_fine_tune_result;
/* progress(step, total_steps, loss, user) after every step (may be NULL); it reports, and does not
 * change the model or the optimizer (a receipt's hasher reads their tensors until the next
 * update: a change there would make the receipt fail verification). */
LOCKSTEP_API lockstep_status lockstep_fine_tune(lockstep_model* model, lockstep_optimizer* optimizer,
                                                const lockstep_dataset* dataset,
                                                const lockstep_fine_tune_options* options,
                                                void (*progress)(int64_t step, int64_t total_steps, float loss,
                                                                 void* user),
                                                void* user, lockstep_fine_tune_result* out);

/* ---- data sets */
/* Reads an IDX image file and label file (MNIST's layout). normalize != 0 applies MNIST's
 * normalisation exactly as the reference run does, in float32: (x - 0.1307f) * (1.0f / 0.3081f)
 * (a multiplication by the float32 quotient 3.2456996 = 0x404FB98B, which gives other bits than a
 * division by 0.3081 or a multiplication by 1 / 0.3081 computed in double: 3.2456994 = 0x404FB98A).
 * Byte images become x = pixel / 255.0f first. */
LOCKSTEP_API lockstep_status lockstep_dataset_load_idx(const char* images_path, const char* labels_path,
                                                       int normalize, lockstep_dataset** out);
LOCKSTEP_API lockstep_status lockstep_dataset_free(lockstep_dataset* dataset);
LOCKSTEP_API lockstep_status lockstep_dataset_size(const lockstep_dataset* dataset, int64_t* out);
/* Examples [start, start + count) in file order: inputs into a new tensor, labels into labels[count]. */
LOCKSTEP_API lockstep_status lockstep_dataset_batch(const lockstep_dataset* dataset, int64_t start, int64_t count,
                                                    lockstep_tensor** inputs, int64_t* labels);

typedef struct lockstep_eval_result {
  double accuracy;                       /* correct / examples */
  int64_t examples, correct;
  char logits_hash[LOCKSTEP_HASH_SIZE];  /* SHA-256 of all logits, in order, little-endian float32 */
} lockstep_eval_result;
/* Evaluates in file order in batches of batch_size (<= 0: 100, as the reference run). */
LOCKSTEP_API lockstep_status lockstep_evaluate(lockstep_model* model, const lockstep_dataset* dataset,
                                               int64_t batch_size, lockstep_eval_result* out);

/* ---- op-level traces (docs/diagnostics.md): one JSON line per op execution (step, phase, module,
 * op, call index, dtype, shape, hash of the exact bits, statistics), parameter gradients and
 * updates by name; `lockstep diff A B` compares two traces. */
typedef struct lockstep_trace_options {
  const char* path;           /* the trace file (JSON lines), written atomically at the end; NULL: off */
  const char* values_path;    /* sidecar (safetensors) with the full values of chosen records, or NULL */
  int64_t values_from, values_to;  /* steps whose records keep their values (0, 0: none) */
  const char* values_pattern; /* ... whose "module/op" ("param/op" for grad and update records, as in
                                 "0.weight/grad") contains this (NULL: all) */
} lockstep_trace_options;
/* Starts tracing the calling thread's ops; model (may be NULL) names the modules and parameters.
 * One trace per thread at a time (LOCKSTEP_ERROR_STATE otherwise). */
LOCKSTEP_API lockstep_status lockstep_trace_begin(lockstep_model* model, const lockstep_trace_options* options);
/* Ends the calling thread's trace and writes its files; records_out (may be NULL) receives the
 * number of records. */
LOCKSTEP_API lockstep_status lockstep_trace_end(int64_t* records_out);

typedef struct lockstep_diff_options {
  uint32_t struct_size;   /* sizeof(lockstep_diff_options), set by lockstep_diff_options_default */
  const char* a_values;   /* the values sidecar of trace A (for ulps), or NULL */
  const char* b_values;   /* ... of trace B, or NULL */
  const char* html_path;  /* also write an HTML report here, or NULL */
  int max_rows;           /* rows per table of the text report (default 20) */
} lockstep_diff_options;
LOCKSTEP_API lockstep_status lockstep_diff_options_default(lockstep_diff_options* out);
/* Compares trace A with trace B: aligned by step, phase, module, op and call; where the two sides
 * decompose a module differently, compared at the module's output and its parameters. The text
 * report (the first divergence, the spread per module, the agreement per op) goes to write(text,
 * user) (may be NULL); *identical is 1 when every aligned record has the same bits, else 0. A
 * truncated or malformed trace is LOCKSTEP_ERROR_FORMAT; traces of unrelated runs are
 * LOCKSTEP_ERROR_INVALID_ARGUMENT. */
LOCKSTEP_API lockstep_status lockstep_trace_diff(const char* a, const char* b, const lockstep_diff_options* options,
                                                 void (*write)(const char* text, void* user), void* user,
                                                 int* identical);

/* ---- the MNIST reference run (LeNet-5, Adam, cross-entropy)
 * Config structs start with struct_size, which lockstep_*_config_default sets: a program compiled
 * against another version of this header gets LOCKSTEP_ERROR_INVALID_ARGUMENT instead of fields
 * read at the wrong offsets. Always fill a config with its _default function first. */
typedef struct lockstep_mnist_config {
  uint32_t struct_size;   /* sizeof(lockstep_mnist_config), set by lockstep_mnist_config_default */
  const char* data_dir;   /* train-images.idx, train-labels.idx, test-images.idx, test-labels.idx */
  int64_t epochs;         /* 20 */
  uint64_t seed;          /* 2 */
  int64_t batch_size;     /* 100 */
  float lr;               /* 1e-3 */
  int64_t max_steps;      /* -1: all epochs */
  int64_t max_test;       /* -1: the whole test set */
  const char* save_path;  /* trained checkpoint, or NULL */
  /* Full training state (model, optimizer moments, position, the run's identity) written
   * atomically to checkpoint_path after every checkpoint_every steps (0: never). */
  int64_t checkpoint_every;
  const char* checkpoint_path;
  /* A training state to continue from, or NULL; it must come from the same run (seed, data, model,
   * batch size, lr), else LOCKSTEP_ERROR_STATE. The resumed run ends on the uninterrupted hash. */
  const char* resume_path;
  int allow_nonfinite;    /* nonzero: train on through NaN or infinite losses (default: stop) */
  lockstep_trace_options trace;  /* an op-level trace of the run (trace.path NULL: none) */
  /* A training receipt (docs/verifiable-training.md), or NULL: the run's identity and a hash chain
   * over its steps, with training states kept beside it ("<receipt>.<step>.state") at the start,
   * every receipt_every steps (0: about ten over the run) and at the end. Not with resume_path. */
  const char* receipt_path;
  int64_t receipt_every;
} lockstep_mnist_config;

typedef struct lockstep_mnist_progress {
  int64_t step, total_steps, epoch;
  float loss;
} lockstep_mnist_progress;

/* Called after every step, and between chunks while the data loads (then step and total_steps are
 * 0); return nonzero to stop the run (LOCKSTEP_ERROR_CANCELLED). */
typedef int (*lockstep_progress_fn)(const lockstep_mnist_progress* progress, void* user_data);

typedef struct lockstep_mnist_result {
  char initial_hash[LOCKSTEP_HASH_SIZE], trained_hash[LOCKSTEP_HASH_SIZE], logits_hash[LOCKSTEP_HASH_SIZE];
  double test_accuracy;
  int64_t steps, test_examples;
  float final_loss;
} lockstep_mnist_result;

/* Fills the reference run's defaults (data_dir ".deps/data/mnist"). */
LOCKSTEP_API lockstep_status lockstep_mnist_config_default(lockstep_mnist_config* out);
/* progress may be NULL. */
LOCKSTEP_API lockstep_status lockstep_train_mnist(const lockstep_mnist_config* config, lockstep_progress_fn progress,
                                                  void* user_data, lockstep_mnist_result* out);

/* ---- receipts verified by re-execution, and disputes (docs/verifiable-training.md) */
typedef struct lockstep_verify_options {
  uint32_t struct_size;         /* sizeof(lockstep_verify_options), set by lockstep_verify_options_default */
  const char* checkpoint_path;  /* the training state to start from, or NULL: the receipt's checkpoints */
  int64_t first_step, last_step;  /* the steps to check (0, 0: every step after the start) */
  int64_t sample;               /* > 0: check this many steps drawn by sample_seed (not with a range) */
  uint64_t sample_seed;
  const char* data;             /* the run's training data: the IDX folder (mnist) or the text (gpt);
                                 * NULL: the task's default (.deps/data/mnist, .deps/data/fortunes/input.txt) */
  const char* model;            /* a fine-tuning run's (lockstep_fine_tune) model: its ONNX file, or NULL */
} lockstep_verify_options;
LOCKSTEP_API lockstep_status lockstep_verify_options_default(lockstep_verify_options* out);
/* Re-executes steps of the receipt and checks each against its chain; the report goes to
 * write(line, user) a line at a time (may be NULL). *first_mismatch is 0 when every checked step
 * matched, else the first step that did not. A tampered chain is LOCKSTEP_ERROR_FORMAT; a
 * checkpoint that does not match its receipt LOCKSTEP_ERROR_STATE. */
LOCKSTEP_API lockstep_status lockstep_verify_run(const char* receipt, const lockstep_verify_options* options,
                                                 void (*write)(const char* line, void* user), void* user,
                                                 int64_t* first_mismatch);

typedef struct lockstep_dispute_options {
  uint32_t struct_size;  /* sizeof(lockstep_dispute_options), set by lockstep_dispute_options_default */
  const char* a_trace;   /* party A's trace of its run (--trace), or NULL */
  const char* b_trace;
  const char* a_values;  /* their values sidecars (--trace-values), or NULL */
  const char* b_values;
  const char* data;      /* as in lockstep_verify_options */
} lockstep_dispute_options;
LOCKSTEP_API lockstep_status lockstep_dispute_options_default(lockstep_dispute_options* out);
/* Two receipts of the same claimed run: *step is 0 when they agree on every common step, else the
 * first differing step; *supported is 'A' or 'B' for the side the referee's re-execution matches,
 * 0 for neither. The report (bisection, re-execution, the first diverging op) goes to write. */
LOCKSTEP_API lockstep_status lockstep_dispute(const char* a, const char* b, const lockstep_dispute_options* options,
                                              void (*write)(const char* line, void* user), void* user, int64_t* step,
                                              char* supported);

/* ---- the GPT example (nanoGPT's architecture, character-level; core/train/gpt.h) */
typedef struct lockstep_gpt_config {
  uint32_t struct_size;   /* sizeof(lockstep_gpt_config), set by lockstep_gpt_config_default */
  const char* text_path;  /* training text (default ".deps/data/fortunes/input.txt") */
  const char* preset;     /* "small" (4 layers, 4 heads, 128 channels, block 64) or "tiny" */
  int64_t steps;          /* optimizer steps (default 500: the whole cosine schedule) */
  uint64_t seed;          /* 1 */
  int64_t eval_interval;  /* estimate train/val losses every N steps; 0: only at the end */
  const char* save_path;  /* trained checkpoint, or NULL */
  int64_t checkpoint_every;    /* as in lockstep_mnist_config */
  const char* checkpoint_path;
  const char* resume_path;
  int allow_nonfinite;
  lockstep_trace_options trace;
  const char* receipt_path;  /* as in lockstep_mnist_config */
  int64_t receipt_every;
} lockstep_gpt_config;

typedef struct lockstep_gpt_progress {
  int64_t step, total_steps;
  float loss, lr;
} lockstep_gpt_progress;

/* Called after every step; return nonzero to stop the run (LOCKSTEP_ERROR_CANCELLED). */
typedef int (*lockstep_gpt_progress_fn)(const lockstep_gpt_progress* progress, void* user_data);

typedef struct lockstep_gpt_result {
  char initial_hash[LOCKSTEP_HASH_SIZE], trained_hash[LOCKSTEP_HASH_SIZE];
  int64_t steps, vocab_size;
  float final_loss;           /* the last step's loss */
  float train_loss, val_loss; /* the final loss estimates */
} lockstep_gpt_result;

LOCKSTEP_API lockstep_status lockstep_gpt_config_default(lockstep_gpt_config* out);
/* progress may be NULL. */
LOCKSTEP_API lockstep_status lockstep_train_gpt(const lockstep_gpt_config* config, lockstep_gpt_progress_fn progress,
                                                void* user_data, lockstep_gpt_result* out);

typedef struct lockstep_sample_options {
  uint32_t struct_size;    /* sizeof(lockstep_sample_options), set by lockstep_sample_options_default */
  const char* prompt;      /* at least one character of the text's vocabulary (default "\n") */
  int64_t max_new_tokens;  /* 200 */
  float temperature;       /* 0.8 */
  int64_t top_k;           /* 20; 0: every token */
  uint64_t seed;           /* 1 */
  lockstep_trace_options trace;  /* a trace of the sampling (phase "sample", one step per token) */
} lockstep_sample_options;

LOCKSTEP_API lockstep_status lockstep_sample_options_default(lockstep_sample_options* out);
/* Loads a GPT checkpoint of the given preset whose vocabulary is that of text_path, and writes the
 * generated text (without the prompt, NUL-terminated) into buf[size]; size must exceed
 * max_new_tokens. The text is identical on every platform for the same inputs. */
LOCKSTEP_API lockstep_status lockstep_gpt_sample(const char* checkpoint_path, const char* text_path,
                                                 const char* preset, const lockstep_sample_options* options,
                                                 char* buf, size_t size);

/* ---- Data-parallel training (docs/distributed.md) -------------------------------------------
 * A transport between the processes of a job: the `lockstep` command fills one from MPI
 * (bindings/native/cli/c_communicator.h). Floating-point values only travel through it as bytes:
 * lockstep adds partial sums itself, in the contract's fixed order, so the result does not depend
 * on the number of ranks. Every call is collective (all ranks call, in the same order, with counts
 * that agree). Each function returns 0 on success; anything else fails the training call
 * (LOCKSTEP_ERROR_UNAVAILABLE). */
typedef struct lockstep_communicator {
  uint32_t struct_size;  /* sizeof(lockstep_communicator) */
  int rank, size;        /* this process's rank, and the number of ranks */
  void* user;            /* passed to every function */
  /* Sends send_bytes[j] bytes to rank j (the blocks lie in rank order in send) and receives
   * recv_bytes[i] bytes from rank i (stored in rank order in recv). */
  int (*all_to_all)(void* user, const void* send, const size_t* send_bytes, void* recv, const size_t* recv_bytes);
  /* Rank i contributes bytes[i] bytes (this rank's from mine); all receive all, in rank order. */
  int (*all_gather)(void* user, const void* mine, void* all, const size_t* bytes);
  /* root's bytes replace every other rank's. */
  int (*broadcast)(void* user, void* data, size_t bytes, int root);
  /* values[i] becomes the sum over ranks of values[i] (integers: exact). */
  int (*all_sum)(void* user, int64_t* values, size_t count);
} lockstep_communicator;

/* Until lockstep_data_parallel_end, lockstep_train_mnist and lockstep_train_gpt on the calling
 * thread train data-parallel over comm's ranks: every rank calls them with the same configuration,
 * computes its share of every batch, and ends with the results one process gives (the same hashes
 * on every rank); rank 0 alone writes checkpoints and models. *comm is copied; its user data must
 * stay valid until the end. */
LOCKSTEP_API lockstep_status lockstep_data_parallel_begin(const lockstep_communicator* comm);
LOCKSTEP_API lockstep_status lockstep_data_parallel_end(void);
/* What this thread's data-parallel context has sent to other ranks so far: bytes, and exchanges. */
LOCKSTEP_API lockstep_status lockstep_data_parallel_stats(uint64_t* bytes_sent, uint64_t* exchanges);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOCKSTEP_LOCKSTEP_H_ */
