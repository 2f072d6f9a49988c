#include "verify/verify_run.h"

#include <algorithm>
#include <memory>
#include <set>

#include "core/error.h"
#include "core/receipt/receipt.h"
#include "verify/replay.h"

namespace lockstep {
namespace verify {

std::vector<int64_t> SampleSteps(int64_t steps, int64_t count, uint64_t seed) {
  std::set<int64_t> chosen;
  count = std::min(count, steps);
  for (uint64_t i = 0; static_cast<int64_t>(chosen.size()) < count; ++i) {
    uint8_t key[16];
    for (int b = 0; b < 8; ++b) {
      key[b] = static_cast<uint8_t>(seed >> (8 * b));
      key[8 + b] = static_cast<uint8_t>(i >> (8 * b));
    }
    const receipt::Digest d = receipt::Sha256Digest(key, sizeof key);
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= uint64_t{d[b]} << (8 * b);
    chosen.insert(static_cast<int64_t>(v % static_cast<uint64_t>(steps)) + 1);
  }
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

VerifyResult VerifyRun(const VerifyOptions& o) {
  const receipt::Store& store = o.store != nullptr ? *o.store : receipt::FileStore();
  const receipt::Receipt r = receipt::ReadReceipt(o.receipt_path, store);  // checks the chain
  auto print = [&](const std::string& line) {
    if (o.print) o.print(line);
  };
  const int64_t n = r.last_step();
  LOCKSTEP_REQUIRE(n >= 1, o.receipt_path << ": the receipt records no step");
  LOCKSTEP_REQUIRE(o.sample == 0 || (o.first == 0 && o.last == 0), "verify-run: a sample or a range of steps, not both");
  LOCKSTEP_REQUIRE(o.sample >= 0, "verify-run: the sample size must be >= 1, got " << o.sample);
  LOCKSTEP_REQUIRE(o.first >= 0 && o.last >= o.first && o.last <= n,
                   "verify-run: steps " << o.first << "-" << o.last << " are not within the receipt's 1-" << n);
  print(o.receipt_path + ": " + std::to_string(n) + " steps, chain intact" +
        (r.ended ? ", trained model " + r.trained_model : " (the run had not ended when it was written)"));
  const std::unique_ptr<const Replay> replay =
      o.train_set != nullptr ? std::make_unique<const Replay>(r, *o.train_set, store, o.fit)
                                   : std::make_unique<const Replay>(r, o.data, store, o.model);

  int64_t given_start = -1;
  if (!o.checkpoint_path.empty()) {
    given_start = replay->CheckStart(o.checkpoint_path);
    print(o.checkpoint_path + ": the state the receipt records at step " + std::to_string(given_start));
  }
  // The stretches to re-execute: (state file, first step to check, last step).
  struct Stretch {
    std::string from;
    int64_t check_from, last;
  };
  std::vector<Stretch> stretches;
  auto start_for = [&](int64_t step) -> std::pair<std::string, int64_t> {
    const receipt::CheckpointEntry* c = r.CheckpointAtOrBefore(step - 1);
    if (given_start >= 0 && given_start <= step - 1 && (c == nullptr || c->step <= given_start)) {
      return {o.checkpoint_path, given_start};
    }
    LOCKSTEP_REQUIRE_STATE(c != nullptr, o.receipt_path << ": no checkpoint at or before step " << step - 1
                                                        << " to start from (give one with --checkpoint)");
    const std::string path = CheckedCheckpoint(r, *c, store);
    replay->CheckStart(path);
    return {path, c->step};
  };
  if (o.sample > 0) {
    for (int64_t step : SampleSteps(n, o.sample, o.seed)) {
      const auto [path, at] = start_for(step);
      stretches.push_back({path, step, step});
    }
    std::string list;
    for (const Stretch& s : stretches) list += (list.empty() ? "" : " ") + std::to_string(s.last);
    print("sampled steps (seed " + std::to_string(o.seed) + "): " + list);
  } else if (o.first > 0) {
    const auto [path, at] = start_for(o.first);
    stretches.push_back({path, o.first, o.last});
  } else {
    const int64_t start = given_start >= 0 ? given_start : 0;
    LOCKSTEP_REQUIRE(start < n, "verify-run: the checkpoint is at the receipt's last step " << n << ": nothing after it");
    const auto [path, at] = start_for(start + 1);
    stretches.push_back({path, start + 1, n});
  }

  VerifyResult result;
  for (const Stretch& s : stretches) {
    std::string mismatch;
    bool starting_state = true;  // the first call: the state the stretch starts from (CheckStart checked it)
    const std::string trained = replay->Run(s.from, s.last, [&](const StepDigests& d) {
      if (starting_state) return !(starting_state = false);
      ++result.executed;
      if (d.step < s.check_from) return true;
      ++result.checked;
      mismatch = Compare(r, d);
      if (o.checked) o.checked(d.step, mismatch.empty());
      print((mismatch.empty() ? "step " + std::to_string(d.step) + ": ok" : "MISMATCH " + mismatch));
      if (!mismatch.empty()) {
        result.first_mismatch = d.step;
        result.mismatch = mismatch;
      }
      return mismatch.empty();
    });
    if (result.first_mismatch != 0) return result;
    if (s.last == n && r.ended && !trained.empty() && trained != r.trained_model) {
      result.first_mismatch = n;
      result.mismatch = "the trained model hash differs (receipt " + r.trained_model + ", re-executed " + trained + ")";
      print("MISMATCH " + result.mismatch);
      return result;
    }
  }
  return result;
}

}  // namespace verify
}  // namespace lockstep
