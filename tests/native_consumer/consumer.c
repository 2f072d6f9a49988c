/* A C99 consumer of the installed liblockstep: trains the MLP a few steps on synthetic data,
 * saves, reloads and compares hashes, and checks an error path. Exit status 0 on success. */
#include <stdio.h>
#include <string.h>

#include <lockstep/lockstep.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    lockstep_status s_ = (call);                                                                 \
    if (s_ != LOCKSTEP_OK) {                                                                     \
      fprintf(stderr, "FAIL %s: %s: %s\n", #call, lockstep_status_name(s_), lockstep_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

enum { kBatch = 8, kFeatures = 784 };

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "consumer_c.safetensors";
  static float data[kBatch * kFeatures];
  int64_t labels[kBatch];
  const int64_t shape[2] = {kBatch, kFeatures};
  const int64_t bad_shape[2] = {kBatch, 100};
  lockstep_model *model = NULL, *reloaded = NULL;
  lockstep_optimizer* optimizer = NULL;
  lockstep_tensor* inputs = NULL;
  lockstep_tensor* bad = NULL;
  char saved[LOCKSTEP_HASH_SIZE], loaded[LOCKSTEP_HASH_SIZE], file[LOCKSTEP_HASH_SIZE];
  float loss = 0.0f, first_loss = 0.0f;
  int i, step;
  const char* version = NULL;
  lockstep_status status;

  for (i = 0; i < kBatch * kFeatures; ++i) data[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  for (i = 0; i < kBatch; ++i) labels[i] = i % 10;

  CHECK(lockstep_version(&version));
  CHECK(lockstep_model_create("mlp", 7, &model));
  CHECK(lockstep_adam_create(model, NULL, &optimizer));
  CHECK(lockstep_tensor_create(data, shape, 2, &inputs));
  for (step = 0; step < 5; ++step) {
    CHECK(lockstep_train_step(model, optimizer, inputs, labels, kBatch, &loss));
    if (step == 0) first_loss = loss;
  }
  if (!(loss < first_loss)) {
    fprintf(stderr, "FAIL: loss did not fall (%f -> %f)\n", first_loss, loss);
    return 1;
  }
  CHECK(lockstep_model_save(model, path, saved));
  CHECK(lockstep_model_load(NULL, path, &reloaded));
  CHECK(lockstep_model_hash(reloaded, loaded));
  CHECK(lockstep_file_sha256(path, file));
  if (strcmp(saved, loaded) != 0 || strcmp(saved, file) != 0) {
    fprintf(stderr, "FAIL: hashes differ: saved %s, reloaded %s, file %s\n", saved, loaded, file);
    return 1;
  }

  /* Error path: the MLP refuses [8, 100] with a message, and the out-parameter stays NULL. */
  CHECK(lockstep_tensor_create(data, bad_shape, 2, &bad));
  {
    lockstep_tensor* logits = NULL;
    status = lockstep_model_forward(model, bad, &logits);
    if (status != LOCKSTEP_ERROR_INVALID_ARGUMENT || logits != NULL || strstr(lockstep_last_error(), "[8, 100]") == NULL) {
      fprintf(stderr, "FAIL: bad shape gave %s: '%s'\n", lockstep_status_name(status), lockstep_last_error());
      return 1;
    }
    printf("bad shape -> %s: %s\n", lockstep_status_name(status), lockstep_last_error());
  }
  status = lockstep_model_create(NULL, 1, &reloaded);
  if (status != LOCKSTEP_ERROR_INVALID_ARGUMENT || strstr(lockstep_last_error(), "NULL") == NULL) {
    fprintf(stderr, "FAIL: NULL arch gave %s\n", lockstep_status_name(status));
    return 1;
  }

  /* Devices: the CPU is current; an unknown name is a bad argument; a device that is not there is
     unavailable, with the reason, and the CPU stays current. */
  {
    char device[256];
    CHECK(lockstep_get_device(device, sizeof device));
    status = lockstep_set_device("gpu");
    const lockstep_status missing = lockstep_set_device("cuda:7");
    const char* why = lockstep_last_error();
    if (strcmp(device, "cpu") != 0 || status != LOCKSTEP_ERROR_INVALID_ARGUMENT ||
        missing != LOCKSTEP_ERROR_UNAVAILABLE || strstr(why, "cuda:7 is not available") == NULL) {
      fprintf(stderr, "FAIL: devices: '%s', 'gpu' -> %s, 'cuda:7' -> %s: '%s'\n", device, lockstep_status_name(status),
              lockstep_status_name(missing), why);
      return 1;
    }
    printf("cuda:7 -> %s: %s\n", lockstep_status_name(missing), why);
    CHECK(lockstep_get_device(device, sizeof device));
    if (strcmp(device, "cpu") != 0) {
      fprintf(stderr, "FAIL: the current device became '%s'\n", device);
      return 1;
    }
  }

  printf("C consumer: lockstep %s, loss %.4f -> %.4f, hash %s: OK\n", version, first_loss, loss, saved);
  lockstep_tensor_free(bad);
  lockstep_tensor_free(inputs);
  lockstep_optimizer_free(optimizer);
  lockstep_model_free(model);
  lockstep_model_free(reloaded);
  return 0;
}
