#include "core/train/evaluate.h"

#include <algorithm>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/sha256.h"
#include "core/trace/trace.h"

namespace lockstep {
namespace train {

EvalResult Evaluate(nn::Module& model, const Dataset& data, int64_t batch_size, int64_t limit) {
  LOCKSTEP_REQUIRE(batch_size >= 1, "evaluate: batch size must be >= 1, got " << batch_size);
  int64_t size = data.size();
  if (limit >= 0 && limit < size) size = limit;
  LOCKSTEP_REQUIRE(size > 0, "evaluate: " << (data.size() == 0 ? "the data set is empty" : "the limit is 0")
                                          << ": there is nothing to evaluate (an accuracy of 0 examples means nothing)");
  const bool was_training = model.training();
  model.Eval();
  NoGradGuard no_grad;
  Sha256 logits_hash;
  EvalResult result;
  for (int64_t start = 0; start < size; start += batch_size) {
    const int64_t end = std::min(size, start + batch_size);
    trace::BeginStep(start / batch_size + 1, "eval");
    const Tensor logits = model(data.Inputs(start, end - start));
    const Tensor host_logits = logits.Contiguous().ToDevice(Device::Cpu());
    logits_hash.UpdateValues(host_logits.data_f32(), static_cast<size_t>(host_logits.numel()));
    const std::vector<int64_t> predicted = Argmax(logits, 1).ToInt64Vector();
    const std::vector<int64_t> labels = data.Labels(start, end - start).ToInt64Vector();
    const int64_t classes = logits.size(1);
    for (size_t i = 0; i < labels.size(); ++i) {
      // A label the model cannot predict is a data error, not a wrong answer (training refuses it too).
      LOCKSTEP_REQUIRE(labels[i] >= 0 && labels[i] < classes,
                       "evaluate: the label of example " << start + static_cast<int64_t>(i) << " is " << labels[i]
                                                         << ", outside the model's " << classes << " classes [0, "
                                                         << classes << ")");
      result.correct += predicted[i] == labels[i];
    }
  }
  model.Train(was_training);
  result.examples = size;
  result.accuracy = size ? static_cast<double>(result.correct) / static_cast<double>(size) : 0.0;
  result.logits_hash = logits_hash.HexDigest();
  return result;
}

}  // namespace train
}  // namespace lockstep
