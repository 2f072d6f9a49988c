#include "bindings/native/cli/progress.h"

#include <unistd.h>

#include <string>

namespace lockstep_cli {
namespace {

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  } else {
    snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

}  // namespace

Progress::Progress(FILE* out) : out_(out), terminal_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

void Progress::Update(int64_t step, int64_t total, int64_t epoch, float loss) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(step) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total - step) / rate : 0.0;
  const std::string where = epoch >= 0 ? " epoch " + std::to_string(epoch + 1) : "";
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = total > 0 ? static_cast<int>(kWidth * step / total) : kWidth;
    fprintf(out_, "\r[%s%s] %lld/%lld%s loss %.4f %.1f steps/s ETA %s \x1b[K",
            std::string(static_cast<size_t>(filled), '#').c_str(), std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(),
            static_cast<long long>(step), static_cast<long long>(total), where.c_str(), loss, rate, Duration(eta).c_str());
    drawn_ = true;
  } else {
    const int64_t every = total >= 20 ? total / 20 : 1;
    if (step % every != 0 && step != total) return;
    fprintf(out_, "step %lld/%lld%s loss %.6f %.1f steps/s ETA %s\n", static_cast<long long>(step),
            static_cast<long long>(total), where.c_str(), loss, rate, Duration(eta).c_str());
  }
  fflush(out_);
}

void Progress::Finish() {
  if (drawn_) fputc('\n', out_);
  drawn_ = false;
  fflush(out_);
}

}  // namespace lockstep_cli
