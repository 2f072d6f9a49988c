// Resident memory of this process for the training benchmark's working-memory rows, read the way
// bench/peers/rss.py reads it for PyTorch (Linux /proc): at the baseline (after start-up and the
// batch) the resident size and the peak so far, then the peak is reset (clear_refs 5) so that the
// peak at the end is training's own. Report() gives
//   rss baseline_kb=B startup_peak_kb=S peak_kb=P
// where P is the peak since the baseline (the baseline included) and S the peak before it.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

namespace lockstep_bench {

inline long StatusKb(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  const size_t n = strlen(field);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      kb = atol(line + n + 1);
      break;
    }
  }
  fclose(f);
  return kb;
}

class RssBaseline {
 public:
  void Mark() {
    rss_kb_ = StatusKb("VmRSS");
    startup_peak_kb_ = StatusKb("VmHWM");
    if (FILE* f = fopen("/proc/self/clear_refs", "w")) {  // resets VmHWM to the current resident size
      fputs("5", f);
      fclose(f);
    }
  }
  std::string Report() const {
    char line[128];
    snprintf(line, sizeof line, "rss baseline_kb=%ld startup_peak_kb=%ld peak_kb=%ld", rss_kb_, startup_peak_kb_,
             StatusKb("VmHWM"));
    return line;
  }

 private:
  long rss_kb_ = -1, startup_peak_kb_ = -1;
};

}  // namespace lockstep_bench
