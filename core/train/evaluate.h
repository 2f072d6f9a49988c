// Evaluation as the reference run does it: batches in data-set order, logits hashed as
// little-endian float32 in that order, accuracy by argmax.
#ifndef LOCKSTEP_CORE_TRAIN_EVALUATE_H_
#define LOCKSTEP_CORE_TRAIN_EVALUATE_H_

#include <stdint.h>

#include <string>

#include "core/data.h"
#include "core/nn/module.h"

namespace lockstep {
namespace train {

struct EvalResult {
  int64_t examples = 0, correct = 0;
  double accuracy = 0;
  std::string logits_hash;  // SHA-256 of every logit in order
};

// Runs the model in evaluation mode without gradients on the first `limit` examples (-1: all) in
// batches of batch_size; the model's training flag is restored afterwards.
EvalResult Evaluate(nn::Module& model, const Dataset& data, int64_t batch_size, int64_t limit = -1);

}  // namespace train
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRAIN_EVALUATE_H_
