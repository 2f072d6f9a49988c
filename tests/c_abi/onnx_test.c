/* The C ABI's ONNX calls from C (docs/onnx.md): a reference model loaded from a file and from
 * bytes gives its golden output and checkpoint hashes through lockstep_model_run and
 * lockstep_model_forward; then misuse: NULLs, malformed and truncated bytes, a model of an
 * unsupported operator, out-of-range names, wrong input counts and types, an ONNX call on a
 * built-in model. Every case returns its documented status with a message and leaves the model
 * working. usage: lockstep_c_onnx_test MODELS_DIR GOLDEN_FILE   (.deps/onnx, tests/golden/onnx.txt) */
#include <lockstep/lockstep.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                      \
      ++failures;                                                                                 \
    } else {                                                                                      \
      printf("ok: %s\n", #cond);                                                                  \
    }                                                                                             \
  } while (0)

/* The golden hash of "MODEL KIND" in the golden file, or "" */
static void golden(const char* file, const char* model, const char* kind, char out[LOCKSTEP_HASH_SIZE]) {
  char line[256], m[64], k[64], h[LOCKSTEP_HASH_SIZE];
  FILE* f = fopen(file, "r");
  out[0] = '\0';
  if (f == NULL) return;
  while (fgets(line, sizeof line, f) != NULL) {
    if (line[0] != '#' && sscanf(line, "%63s %63s %64s", m, k, h) == 3 && strcmp(m, model) == 0 && strcmp(k, kind) == 0) {
      memcpy(out, h, LOCKSTEP_HASH_SIZE);
    }
  }
  fclose(f);
}

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    printf("FAIL: cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(*size);
  if (fread(data, 1, *size, f) != *size) exit(1);
  fclose(f);
  return data;
}

/* A model of one StringNormalizer node (lockstep holds no strings) named 'normalizer' on float [2],
 * opset 13 (onnx.helper.make_model's bytes, ir_version 8). */
static const unsigned char kStringNormalizer[] = {
    0x08, 0x08, 0x3a, 0x4b, 0x0a, 0x24, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x1a, 0x0a, 0x6e, 0x6f, 0x72, 0x6d,
    0x61, 0x6c, 0x69, 0x7a, 0x65, 0x72, 0x22, 0x10, 0x53, 0x74, 0x72, 0x69, 0x6e, 0x67, 0x4e, 0x6f, 0x72, 0x6d,
    0x61, 0x6c, 0x69, 0x7a, 0x65, 0x72, 0x12, 0x01, 0x67, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08,
    0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x02, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a, 0x08, 0x08,
    0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x02, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d};

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODELS_DIR GOLDEN_FILE\n", argv[0]);
    return 2;
  }
  char path[512], want[LOCKSTEP_HASH_SIZE], got[LOCKSTEP_HASH_SIZE];
  snprintf(path, sizeof path, "%s/lenet5.onnx", argv[1]);
  lockstep_model* model = NULL;
  REQUIRE_OK(lockstep_model_load_onnx(path, 0, &model));
  size_t size = 0;
  unsigned char* bytes = read_file(path, &size);
  lockstep_model* from_bytes = NULL;
  REQUIRE_OK(lockstep_model_load_onnx_bytes(bytes, size, 0, &from_bytes));

  const char* arch = NULL;
  REQUIRE_OK(lockstep_model_arch(model, &arch));
  CHECK(strcmp(arch, "onnx") == 0);
  int inputs = 0, outputs = 0;
  const char* name = NULL;
  REQUIRE_OK(lockstep_model_io_count(model, &inputs, &outputs));
  CHECK(inputs == 1 && outputs == 1);
  REQUIRE_OK(lockstep_model_io_name(model, 0, 0, &name));
  CHECK(strcmp(name, "images") == 0);

  /* The fixed input (a .npy file) through run and forward: the golden output hash. */
  snprintf(path, sizeof path, "%s/lenet5.input.npy", argv[1]);
  lockstep_tensor* x = NULL;
  lockstep_tensor* y = NULL;
  lockstep_tensor* y2 = NULL;
  REQUIRE_OK(lockstep_tensor_load_npy(path, &x));
  REQUIRE_OK(lockstep_model_run(model, (const lockstep_tensor* const*)&x, 1, &y, 1));
  golden(argv[2], "lenet5", "output", want);
  REQUIRE_OK(lockstep_tensor_sha256(y, got));
  CHECK(want[0] != '\0' && strcmp(got, want) == 0);
  REQUIRE_OK(lockstep_model_forward(from_bytes, x, &y2));
  REQUIRE_OK(lockstep_tensor_sha256(y2, got));
  CHECK(strcmp(got, want) == 0);
  golden(argv[2], "lenet5", "checkpoint", want);
  REQUIRE_OK(lockstep_model_hash(model, got));
  CHECK(want[0] != '\0' && strcmp(got, want) == 0);

  /* Misuse. */
  lockstep_model* bad = NULL;
  EXPECT(lockstep_model_load_onnx(NULL, 0, &bad), LOCKSTEP_ERROR_INVALID_ARGUMENT, "path is NULL");
  EXPECT(lockstep_model_load_onnx_bytes(NULL, 10, 0, &bad), LOCKSTEP_ERROR_INVALID_ARGUMENT, "data is NULL");
  EXPECT(lockstep_model_load_onnx_bytes(bytes, 1000, 0, &bad), LOCKSTEP_ERROR_FORMAT, "declares");
  EXPECT(lockstep_model_load_onnx_bytes("\x08\x08", 2, 0, &bad), LOCKSTEP_ERROR_FORMAT, "holds no graph");
  EXPECT(lockstep_model_load_onnx_bytes(kStringNormalizer, sizeof kStringNormalizer, 0, &bad), LOCKSTEP_ERROR_UNAVAILABLE,
         "node 'normalizer' (StringNormalizer, opset 13): unsupported operator StringNormalizer");
  EXPECT(lockstep_model_load_onnx("/nonexistent/model.onnx", 0, &bad), LOCKSTEP_ERROR_IO, "model.onnx");
  CHECK(bad == NULL);
  EXPECT(lockstep_model_io_name(model, 1, 5, &name), LOCKSTEP_ERROR_INVALID_ARGUMENT, "index 5 is out of range");
  EXPECT(lockstep_model_run(model, (const lockstep_tensor* const*)&x, 2, &y2, 1), LOCKSTEP_ERROR_INVALID_ARGUMENT,
         "takes 1 inputs");
  lockstep_tensor* ids = NULL;
  const int64_t id_shape[2] = {1, 4}, id_values[4] = {1, 2, 3, 4};
  REQUIRE_OK(lockstep_tensor_create_int64(id_values, id_shape, 2, &ids));
  lockstep_tensor* out = NULL;
  EXPECT(lockstep_model_run(model, (const lockstep_tensor* const*)&ids, 1, &out, 1), LOCKSTEP_ERROR_INVALID_ARGUMENT,
         "input 'images' is declared float, got int64");
  lockstep_dtype dtype = LOCKSTEP_FLOAT32;
  REQUIRE_OK(lockstep_tensor_dtype(ids, &dtype));
  CHECK(dtype == LOCKSTEP_INT64);
  int64_t i64[4];
  EXPECT(lockstep_tensor_copy_int64(y, i64, 10), LOCKSTEP_ERROR_INVALID_ARGUMENT, "float32");
  REQUIRE_OK(lockstep_tensor_copy_int64(ids, i64, 4));
  CHECK(i64[3] == 4);
  lockstep_model* builtin = NULL;
  REQUIRE_OK(lockstep_model_create("lenet5", 1, &builtin));
  EXPECT(lockstep_model_io_count(builtin, &inputs, &outputs), LOCKSTEP_ERROR_INVALID_ARGUMENT, "built-in 'lenet5'");
  EXPECT(lockstep_tensor_load_npy(argv[2], &out), LOCKSTEP_ERROR_FORMAT, "not a .npy file");

  /* The model still works and gives the same bits after the errors. */
  lockstep_tensor* y3 = NULL;
  REQUIRE_OK(lockstep_model_run(model, (const lockstep_tensor* const*)&x, 1, &y3, 1));
  REQUIRE_OK(lockstep_tensor_sha256(y3, got));
  golden(argv[2], "lenet5", "output", want);
  CHECK(strcmp(got, want) == 0);

  lockstep_tensor_free(x);
  lockstep_tensor_free(y);
  lockstep_tensor_free(y2);
  lockstep_tensor_free(y3);
  lockstep_tensor_free(ids);
  lockstep_model_free(builtin);
  lockstep_model_free(from_bytes);
  lockstep_model_free(model);
  free(bytes);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
