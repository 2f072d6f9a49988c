/* The C ABI misused as a C program could: NULLs, a config struct from another header, empty
 * paths, FIFOs and devices, another run's training state, labels out of range, NaN data, the
 * thread count changed while another thread trains. Every case must return its documented status
 * with a message, leave the library working, and leave earlier results (a model's hash) unchanged.
 * usage: lockstep_c_misuse_test DATA_DIR WORK_DIR   (DATA_DIR: MNIST IDX files) */
#include <lockstep/lockstep.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expect.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

static const char* data_dir;
static char work[512];

static void path_in_work(char* out, size_t size, const char* name) { snprintf(out, size, "%s/%s", work, name); }

/* A few SGD-free Adam steps of an MLP on fixed inputs; returns the model's hash in hash. */
static void train_mlp(int steps, char hash[LOCKSTEP_HASH_SIZE]) {
  static float pixels[20 * 784];
  int64_t labels[20];
  const int64_t shape[2] = {20, 784};
  for (int i = 0; i < 20 * 784; ++i) pixels[i] = (float)((i * 37) % 101) / 101.0f;
  for (int i = 0; i < 20; ++i) labels[i] = i % 10;
  lockstep_model* model = NULL;
  lockstep_optimizer* adam = NULL;
  lockstep_tensor* x = NULL;
  REQUIRE_OK(lockstep_model_create("mlp", 3, &model));
  REQUIRE_OK(lockstep_adam_create(model, NULL, &adam));
  REQUIRE_OK(lockstep_tensor_create(pixels, shape, 2, &x));
  for (int s = 0; s < steps; ++s) REQUIRE_OK(lockstep_train_step(model, adam, x, labels, 20, NULL));
  REQUIRE_OK(lockstep_model_hash(model, hash));
  lockstep_tensor_free(x);
  lockstep_optimizer_free(adam);
  lockstep_model_free(model);
}

struct trainer_job {
  char hash[LOCKSTEP_HASH_SIZE];
};
static volatile int trainers_done = 0;

static void* trainer_thread(void* arg) {
  train_mlp(8, ((struct trainer_job*)arg)->hash);
  return NULL;
}

static void* thread_count_changer(void* arg) {
  int n = 1;
  (void)arg;
  while (!__atomic_load_n(&trainers_done, __ATOMIC_ACQUIRE)) {
    lockstep_set_num_threads(n);
    n = n % 4 + 1;
  }
  return NULL;
}

static void* device_thread(void* arg) {
  char name[256];
  (void)arg;
  /* Switching this thread's device (to one that does not exist) never moves the main thread. */
  lockstep_set_device("cuda:7");
  lockstep_get_device(name, sizeof name);
  if (strcmp(name, "cpu") != 0) {
    printf("FAIL: a failed switch left this thread on %s\n", name);
    ++failures;
  }
  return NULL;
}

/* A transport of one rank (data-parallel over itself), and one whose integer sum fails. */
static int one_all_to_all(void* user, const void* send, const size_t* send_bytes, void* recv, const size_t* recv_bytes) {
  (void)user;
  (void)send_bytes;
  memcpy(recv, send, recv_bytes[0]);
  return 0;
}
static int one_all_gather(void* user, const void* mine, void* all, const size_t* bytes) {
  (void)user;
  memcpy(all, mine, bytes[0]);
  return 0;
}
static int one_broadcast(void* user, void* data, size_t bytes, int root) {
  (void)user, (void)data, (void)bytes, (void)root;
  return 0;
}
static int one_all_sum(void* user, int64_t* values, size_t count) {
  (void)user, (void)values, (void)count;
  return 0;
}
static int failing_all_sum(void* user, int64_t* values, size_t count) {
  (void)user, (void)values, (void)count;
  return 5;
}

static void short_mnist(lockstep_mnist_config* config) {
  lockstep_mnist_config_default(config);
  config->data_dir = data_dir;
  config->max_steps = 3;
  config->max_test = 100;
}

int main(int argc, char** argv) {
  char reference[LOCKSTEP_HASH_SIZE], again[LOCKSTEP_HASH_SIZE], path[600], other[600];
  if (argc != 3) {
    fprintf(stderr, "usage: %s DATA_DIR WORK_DIR\n", argv[0]);
    return 2;
  }
  data_dir = argv[1];
  snprintf(work, sizeof work, "%s", argv[2]);
  train_mlp(4, reference);

  /* NULLs and empty values. */
  {
    lockstep_model* model = NULL;
    EXPECT(lockstep_model_create(NULL, 1, &model), LOCKSTEP_ERROR_INVALID_ARGUMENT, "arch is NULL");
    EXPECT(lockstep_model_create("resnet", 1, &model), LOCKSTEP_ERROR_INVALID_ARGUMENT, "resnet");
    EXPECT(lockstep_file_sha256("", again), LOCKSTEP_ERROR_INVALID_ARGUMENT, "expected the path of a file");
  }

  /* Optimizer options out of range; the three optimizers under their common names. */
  {
    lockstep_model* model = NULL;
    lockstep_optimizer* opt = NULL;
    lockstep_sgd_options sgd;
    REQUIRE_OK(lockstep_model_create("mlp", 1, &model));
    REQUIRE_OK(lockstep_sgd_options_default(&sgd));
    sgd.momentum = -1;
    EXPECT(lockstep_sgd_create(model, &sgd, &opt), LOCKSTEP_ERROR_INVALID_ARGUMENT, "momentum");
    sgd.momentum = 0.9f;
    sgd.weight_decay = -5;
    EXPECT(lockstep_sgd_create(model, &sgd, &opt), LOCKSTEP_ERROR_INVALID_ARGUMENT, "weight_decay");
    REQUIRE_OK(lockstep_sgd_create(model, NULL, &opt));
    lockstep_optimizer_free(opt);
    REQUIRE_OK(lockstep_adamw_create(model, NULL, &opt));
    lockstep_optimizer_free(opt);
    lockstep_model_free(model);
  }

  /* A config struct compiled against another header, and bad values. */
  {
    lockstep_mnist_config config;
    lockstep_mnist_result result;
    REQUIRE_OK(lockstep_mnist_config_default(&config));
    config.struct_size -= 8;
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "struct_size");
    REQUIRE_OK(lockstep_mnist_config_default(&config));
    config.data_dir = "";
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "data_dir is empty");
    REQUIRE_OK(lockstep_mnist_config_default(&config));
    config.data_dir = data_dir;
    config.save_path = "/dev/null";
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "character device");
    config.save_path = NULL;
    config.checkpoint_every = 5;
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "checkpoint_path");
  }

  /* FIFOs are refused without blocking; a free after a failure keeps the failure's message. */
  {
    lockstep_model* model = NULL;
    path_in_work(path, sizeof path, "fifo");
    if (mkfifo(path, 0600) != 0) {
      perror("mkfifo");
      return 1;
    }
    EXPECT(lockstep_model_load(NULL, path, &model), LOCKSTEP_ERROR_INVALID_ARGUMENT, "FIFO");
    lockstep_model_free(NULL);
    if (strstr(lockstep_last_error(), "FIFO") == NULL) {
      printf("FAIL: a free cleared the last error\n");
      ++failures;
    }
    EXPECT(lockstep_file_sha256(path, again), LOCKSTEP_ERROR_INVALID_ARGUMENT, "FIFO");
  }

  /* Evaluation of labels outside the classes; an optimizer of another model. */
  {
    static float pixels[3 * 784];
    const int64_t shape[4] = {3, 1, 28, 28};
    int64_t labels[3] = {1, 200, 3};
    lockstep_model *model = NULL, *other_model = NULL;
    lockstep_optimizer* adam = NULL;
    lockstep_tensor* x = NULL;
    REQUIRE_OK(lockstep_model_create("lenet5", 1, &model));
    REQUIRE_OK(lockstep_model_create("lenet5", 2, &other_model));
    REQUIRE_OK(lockstep_adam_create(other_model, NULL, &adam));
    REQUIRE_OK(lockstep_tensor_create(pixels, shape, 4, &x));
    EXPECT(lockstep_train_step(model, adam, x, labels, 3, NULL), LOCKSTEP_ERROR_STATE, "");
    labels[1] = 2;
    lockstep_optimizer_free(adam);
    REQUIRE_OK(lockstep_adam_create(model, NULL, &adam));
    pixels[5] = NAN;
    lockstep_tensor_free(x);
    REQUIRE_OK(lockstep_tensor_create(pixels, shape, 4, &x));
    EXPECT(lockstep_train_step(model, adam, x, labels, 3, NULL), LOCKSTEP_ERROR_STATE, "the loss is nan");
    lockstep_tensor_free(x);
    lockstep_optimizer_free(adam);
    lockstep_model_free(other_model);
    lockstep_model_free(model);
  }

  /* Resuming another run's state. */
  {
    lockstep_mnist_config config;
    lockstep_mnist_result result;
    REQUIRE_OK(lockstep_mnist_config_default(&config));
    path_in_work(path, sizeof path, "run.state");
    config.data_dir = data_dir;
    config.max_steps = 4;
    config.max_test = 100;
    config.checkpoint_every = 2;
    config.checkpoint_path = path;
    REQUIRE_OK(lockstep_train_mnist(&config, NULL, NULL, &result));
    REQUIRE_OK(lockstep_mnist_config_default(&config));
    config.data_dir = data_dir;
    config.max_steps = 6;
    config.max_test = 100;
    config.seed = 9;
    config.resume_path = path;
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_STATE, "its seed is 2, this run's is 9");
    path_in_work(other, sizeof other, "canonical.safetensors");
    EXPECT(lockstep_canonicalize(path, other, again), LOCKSTEP_OK, "");
  }

  /* The thread count changed from another thread while three threads train: same hashes. */
  {
    pthread_t changer, trainers[3];
    struct trainer_job jobs[3];
    char want[LOCKSTEP_HASH_SIZE];
    train_mlp(8, want);
    pthread_create(&changer, NULL, thread_count_changer, NULL);
    for (int i = 0; i < 3; ++i) pthread_create(&trainers[i], NULL, trainer_thread, &jobs[i]);
    for (int i = 0; i < 3; ++i) pthread_join(trainers[i], NULL);
    __atomic_store_n(&trainers_done, 1, __ATOMIC_RELEASE);
    pthread_join(changer, NULL);
    for (int i = 0; i < 3; ++i) {
      if (strcmp(jobs[i].hash, want) != 0) {
        printf("FAIL: trainer %d got %s, alone %s\n", i, jobs[i].hash, want);
        ++failures;
      }
    }
    printf("ok: 3 threads trained while the thread count changed: %s\n", want);
    lockstep_set_num_threads(2);
  }

  /* The current device belongs to each thread. */
  {
    pthread_t t;
    char name[256];
    pthread_create(&t, NULL, device_thread, NULL);
    pthread_join(t, NULL);
    REQUIRE_OK(lockstep_get_device(name, sizeof name));
    if (strcmp(name, "cpu") != 0) {
      printf("FAIL: the main thread's device became %s\n", name);
      ++failures;
    }
  }

  /* Data-parallel training over a caller's transport: checked before use, once per thread, and a
   * failing transport is an error of its own; over one rank, the single process's hashes. */
  {
    lockstep_communicator comm;
    lockstep_mnist_config config;
    lockstep_mnist_result alone, over_one;
    uint64_t bytes = 0, exchanges = 0;
    memset(&comm, 0, sizeof comm);
    short_mnist(&config);
    REQUIRE_OK(lockstep_train_mnist(&config, NULL, NULL, &alone));
    EXPECT(lockstep_data_parallel_begin(NULL), LOCKSTEP_ERROR_INVALID_ARGUMENT, "comm is NULL");
    EXPECT(lockstep_data_parallel_begin(&comm), LOCKSTEP_ERROR_INVALID_ARGUMENT, "struct_size");
    comm.struct_size = sizeof comm;
    EXPECT(lockstep_data_parallel_begin(&comm), LOCKSTEP_ERROR_INVALID_ARGUMENT, "every function");
    comm.all_to_all = one_all_to_all;
    comm.all_gather = one_all_gather;
    comm.broadcast = one_broadcast;
    comm.all_sum = one_all_sum;
    comm.rank = 2;
    comm.size = 2;
    EXPECT(lockstep_data_parallel_begin(&comm), LOCKSTEP_ERROR_INVALID_ARGUMENT, "rank 2 of 2 ranks is not a rank");
    EXPECT(lockstep_data_parallel_stats(&bytes, &exchanges), LOCKSTEP_ERROR_STATE, "not training data-parallel");
    comm.rank = 0;
    comm.size = 1;
    REQUIRE_OK(lockstep_data_parallel_begin(&comm));
    EXPECT(lockstep_data_parallel_begin(&comm), LOCKSTEP_ERROR_STATE, "already training data-parallel");
    REQUIRE_OK(lockstep_train_mnist(&config, NULL, NULL, &over_one));
    REQUIRE_OK(lockstep_data_parallel_stats(&bytes, &exchanges));
    if (strcmp(over_one.trained_hash, alone.trained_hash) != 0 || strcmp(over_one.logits_hash, alone.logits_hash) != 0 ||
        exchanges == 0) {
      printf("FAIL: data-parallel over one rank: %s after %llu exchanges, alone %s\n", over_one.trained_hash,
             (unsigned long long)exchanges, alone.trained_hash);
      ++failures;
    }
    REQUIRE_OK(lockstep_data_parallel_end());
    comm.all_sum = failing_all_sum;
    REQUIRE_OK(lockstep_data_parallel_begin(&comm));
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &over_one), LOCKSTEP_ERROR_UNAVAILABLE,
           "the communicator's all_sum failed (5)");
    REQUIRE_OK(lockstep_data_parallel_end());
    EXPECT(lockstep_data_parallel_stats(&bytes, &exchanges), LOCKSTEP_ERROR_STATE, "not training data-parallel");
    printf("ok: data-parallel over a caller's transport: checked, one rank gives %s\n", alone.trained_hash);
  }

#if defined(__x86_64__)
  { /* Flush-to-zero and denormals-are-zero set by the caller (as -ffast-math code or
     * torch.set_flush_denormal do): lockstep trains in the contract's mode to the same hash, and the
     * caller's mode is still set when it returns. */
    char under_ftz[LOCKSTEP_HASH_SIZE];
    const unsigned saved = _mm_getcsr();
    const unsigned flushing = saved | (1u << 15) | (1u << 6);
    _mm_setcsr(flushing);
    train_mlp(4, under_ftz);
    const unsigned after = _mm_getcsr();
    _mm_setcsr(saved);
    if (strcmp(under_ftz, reference) != 0 || (after & 0xFFC0u) != (flushing & 0xFFC0u)) {
      printf("FAIL: under FTZ/DAZ the hash is %s (want %s), MXCSR after %#x (the caller's %#x)\n", under_ftz,
             reference, after, flushing);
      ++failures;
    } else {
      printf("ok: under the caller's FTZ/DAZ the same hash, and the caller's MXCSR kept\n");
    }
  }
#endif

  /* Still working, and the earlier result unchanged. */
  train_mlp(4, again);
  if (strcmp(again, reference) != 0) {
    printf("FAIL: the reference hash changed: %s, was %s\n", again, reference);
    ++failures;
  }
  /* Receipts: bad values, NULLs, other struct sizes; a receipt that is not one. */
  {
    lockstep_mnist_config config;
    lockstep_mnist_result result;
    lockstep_verify_options verify;
    lockstep_dispute_options dispute;
    int64_t mismatch = -1, step = -1;
    char side = 'x';
    short_mnist(&config);
    config.receipt_path = "";
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_path is empty");
    path_in_work(path, sizeof path, "run.receipt");
    config.receipt_path = path;
    config.receipt_every = -1;
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt_every");
    config.receipt_every = 0;
    config.resume_path = path;
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT,
           "a receipt covers a run from its first step");
    config.resume_path = NULL;
    config.receipt_path = "/dev/null";
    EXPECT(lockstep_train_mnist(&config, NULL, NULL, &result), LOCKSTEP_ERROR_INVALID_ARGUMENT, "character device");
    REQUIRE_OK(lockstep_verify_options_default(&verify));
    verify.data = data_dir;
    EXPECT(lockstep_verify_run(NULL, &verify, NULL, NULL, &mismatch), LOCKSTEP_ERROR_INVALID_ARGUMENT, "receipt");
    EXPECT(lockstep_verify_run(path, &verify, NULL, NULL, NULL), LOCKSTEP_ERROR_INVALID_ARGUMENT, "first_mismatch");
    verify.struct_size -= 8;
    EXPECT(lockstep_verify_run(path, &verify, NULL, NULL, &mismatch), LOCKSTEP_ERROR_INVALID_ARGUMENT, "struct_size");
    path_in_work(other, sizeof other, "not.receipt");
    FILE* f = fopen(other, "w");
    fputs("{\"step\":1}\n", f);
    fclose(f);
    EXPECT(lockstep_verify_run(other, NULL, NULL, NULL, &mismatch), LOCKSTEP_ERROR_FORMAT, "not a lockstep receipt");
    REQUIRE_OK(lockstep_dispute_options_default(&dispute));
    EXPECT(lockstep_dispute(other, NULL, &dispute, NULL, NULL, &step, &side), LOCKSTEP_ERROR_INVALID_ARGUMENT, "b");
    EXPECT(lockstep_dispute(other, other, &dispute, NULL, NULL, &step, NULL), LOCKSTEP_ERROR_INVALID_ARGUMENT, "supported");
    dispute.struct_size = 3;
    EXPECT(lockstep_dispute(other, other, &dispute, NULL, NULL, &step, &side), LOCKSTEP_ERROR_INVALID_ARGUMENT,
           "struct_size");
    EXPECT(lockstep_dispute(other, other, NULL, NULL, NULL, &step, &side), LOCKSTEP_ERROR_FORMAT, "not a lockstep receipt");
    remove(other);
  }

  printf("%s: %d failed\n", failures ? "c_abi misuse: FAILED" : "c_abi misuse: all passed", failures);
  return failures == 0 ? 0 : 1;
}
