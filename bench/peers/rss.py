"""Resident memory of this process for the training benchmark's working-memory rows, read the way
bench/train_bench.cc reads it (Linux /proc): at the baseline (after imports and the batch) the
resident size and the peak so far, then the peak is reset (clear_refs 5) so that the peak at the
end is training's own. Prints
  rss baseline_kb=B startup_peak_kb=S peak_kb=P
where P is the peak since the baseline (the baseline included) and S the peak before it.
"""
import re


def _status(field):
    with open("/proc/self/status") as f:
        return int(re.search(r"^%s:\s+(\d+) kB" % field, f.read(), re.M).group(1))


class Baseline:
    def __init__(self):
        self.rss = self.startup_peak = None

    def mark(self):
        self.rss, self.startup_peak = _status("VmRSS"), _status("VmHWM")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current resident size

    def report(self):
        return "rss baseline_kb=%d startup_peak_kb=%d peak_kb=%d" % (self.rss, self.startup_peak, _status("VmHWM"))
