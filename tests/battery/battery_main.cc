// The kernel battery runner: runs every kernel on each SIMD target (one at a time, forced), hashes
// each kernel's outputs with SHA-256 and compares them with the golden file. Prints one line per
// target, `platform target total... ok|MISMATCH` (the totals of the golden file's sections,
// battery_coverage.h), names the first kernel and element that differ, and ends with
// `N passed, M failed`.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/backend/device.h"
#include "core/contract.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/fp_environment.h"
#include "core/sha256.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"
#include "tests/battery/battery_cases.h"
#include "tests/battery/battery_coverage.h"

namespace lockstep {
namespace battery {
namespace {

// The golden section of a battery case (battery_coverage.h); a case missing there is an error.
GoldenSection SectionOf(const std::string& name) {
  const CaseCoverage* row = FindCaseCoverage(name.c_str());
  LOCKSTEP_REQUIRE(row != nullptr, "battery case " << name << " has no row in tests/battery/battery_coverage.h");
  return row->section;
}

// The battery's cases are exactly the rows of battery_coverage.h, in order (the host-only ones
// only when they ran), so that the rows say truthfully which kernel-table entries are covered.
void CheckCoverageRows(const std::vector<KernelOutput>& outputs, bool include_host_only) {
  std::vector<std::string> rows;
  for (const CaseCoverage& row : kCaseCoverage) {
    if (include_host_only || !IsHostOnlyKernel(row.name)) rows.push_back(row.name);
  }
  for (size_t i = 0; i < outputs.size() || i < rows.size(); ++i) {
    const std::string got = i < outputs.size() ? outputs[i].name : "(none)";
    const std::string want = i < rows.size() ? rows[i] : "(none)";
    LOCKSTEP_REQUIRE(got == want, "battery case " << i << " is " << got << " but tests/battery/battery_coverage.h's row "
                                                   << i << " is " << want << ": keep the table in the battery's order");
  }
}

// Each golden section: the key of its total line and the comment that opens it (section 1 opens
// the file).
struct SectionText {
  const char* total_key;
  const char* header;
};
const SectionText kSectionText[kGoldenSections] = {
    {"total", ""},
    {"total-layers",
     "# section 2: the kernel-table entries added to the battery after section 1 (layers, copies, fills,\n"
     "# optimizer updates: tests/battery/battery_layer_cases.cc), hashed into their own total\n"},
    {"total-onnx-1",
     "# section 3: the elementwise functions added for ONNX's operators (sin, cos, tan, asin, acos, atan,\n"
     "# sinh, cosh, asinh, acosh, atanh in the math kernel; floor, ceil, round in the unary kernel), hashed\n"
     "# into their own total\n"},
    {"total-onnx-2",
     "# section 4: what ONNX's element types and remainders added (rounding to float16 and bfloat16 in the\n"
     "# unary kernel; fmod and remainder in the binary kernels), hashed into their own total\n"},
    {"total-fused-1",
     "# section 5: the kernels and kernel modes added for speed on real models (clamp: ONNX's Clip, ReLU6\n"
     "# in one pass; a convolution's groups in one call), hashed into their own total\n"},
    {"total-fused-2",
     "# section 6: batch normalisation's channel sums read in place (channel_sums: the bits of sum_axis\n"
     "# over each channel's values copied out), hashed into their own total\n"},
    {"total-fused-3",
     "# section 7: the forward convolution's epilogue (inference's batch normalisation and Relu, Clip or\n"
     "# SiLU applied as each output is stored: the bits of those ops run after it), hashed into their own\n"
     "# total\n"},
    {"total-fused-4",
     "# section 8: the kernels added for training speed on real models (clamp_backward: Clip's gradient,\n"
     "# the bits of its two masked fills in one pass; channel_norm_backward_sums: batch normalisation's\n"
     "# gradient sums, the bits of its products and channel sums in one pass), hashed into their own total\n"},
    {"total-fused-5",
     "# section 9: SiLU's gradient in one pass (silu_backward: the bits of the gradients of Mul and Sigmoid\n"
     "# and their sum) and batch normalisation's variance sums in one pass (channel_deviation_square_sums:\n"
     "# the bits of the subtraction, the square and channel_sums), and its arithmetic on planes of 1 to 63\n"
     "# positions, hashed into their own total\n"},
    {"total-fused-6",
     "# section 10: batch normalisation with the Relu, Clip, SiLU or hardtanh after it (channel_normalize\n"
     "# applying the activation as it stores y, channel_norm_backward_sums forming its gradient from y\n"
     "# formed again: the bits of the two ops), hashed into their own total\n"},
    {"total-fused-7",
     "# section 11: PyTorch's hardtanh (ReLU6) and its gradient in one pass each (hardtanh,\n"
     "# hardtanh_backward: the bits of its two masked fills and their gradients), hashed into their own\n"
     "# total\n"},
};

struct Hashes {
  std::vector<std::pair<std::string, std::string>> per_kernel;
  std::vector<GoldenSection> sections;  // of each kernel
  std::vector<std::string> totals;      // of each section
  std::string Totals() const {
    std::string out;
    for (const std::string& t : totals) out += (out.empty() ? "" : " ") + t;
    return out;
  }
};

Hashes HashOutputs(const std::vector<KernelOutput>& outputs) {
  Hashes h;
  std::vector<Sha256> totals(kGoldenSections);
  for (const KernelOutput& k : outputs) {
    const std::string digest = Sha256Hex(k.bytes.data(), k.bytes.size());
    h.per_kernel.emplace_back(k.name, digest);
    h.sections.push_back(SectionOf(k.name));
    const std::string line = k.name + " " + digest + "\n";
    totals[static_cast<int>(h.sections.back())].Update(line.data(), line.size());
  }
  for (Sha256& t : totals) h.totals.push_back(t.HexDigest());
  return h;
}

// Section 1 exactly as contract version 1 wrote it (so its lines never change), then the others.
std::string GoldenText(const Hashes& h) {
  std::ostringstream out;
  out << "# lockstep kernel battery, contract version " << kContractVersion << "\n";
  for (int s = 0; s < kGoldenSections; ++s) {
    out << kSectionText[s].header;
    for (size_t k = 0; k < h.per_kernel.size(); ++k) {
      if (static_cast<int>(h.sections[k]) == s) {
        out << "kernel " << h.per_kernel[k].first << " " << h.per_kernel[k].second << "\n";
      }
    }
    out << kSectionText[s].total_key << " " << h.totals[s] << "\n";
  }
  return out.str();
}

// The kernels' hashes and each section's total (empty where the file has no total line for it).
bool ReadGolden(const std::string& path, std::map<std::string, std::string>* kernels,
                std::vector<std::string>* totals) {
  std::ifstream in(path);
  if (!in) return false;
  totals->assign(kGoldenSections, "");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind, name, digest;
    words >> kind;
    if (kind == "kernel" && (words >> name >> digest)) (*kernels)[name] = digest;
    for (int s = 0; s < kGoldenSections; ++s) {
      if (kind == kSectionText[s].total_key) words >> (*totals)[s];
    }
  }
  return !(*totals)[0].empty();
}

// Names the first element where two outputs of one kernel differ.
std::string FirstDifference(const KernelOutput& got, const KernelOutput& want) {
  const size_t n = got.bytes.size() < want.bytes.size() ? got.bytes.size() : want.bytes.size();
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const uint32_t g = LoadLittleEndian32(&got.bytes[i]), w = LoadLittleEndian32(&want.bytes[i]);
    if (g != w) {
      float gf, wf;
      memcpy(&gf, &g, 4);
      memcpy(&wf, &w, 4);
      char buf[160];
      snprintf(buf, sizeof(buf), "kernel %s, element %zu: 0x%08x (%.9g), expected 0x%08x (%.9g)",
               got.name.c_str(), i / 4, g, gf, w, wf);
      return buf;
    }
  }
  if (got.bytes.size() != want.bytes.size()) {
    return "kernel " + got.name + ": " + std::to_string(got.bytes.size()) + " output bytes, expected " +
           std::to_string(want.bytes.size());
  }
  return "kernel " + got.name + ": no element differs";
}

void WriteDump(const std::string& path, const std::vector<KernelOutput>& outputs) {
  std::ofstream out(path, std::ios::binary);
  for (const KernelOutput& k : outputs) {
    uint8_t size[8];  // little-endian, so dumps compare across hosts
    StoreLittleEndian64(k.bytes.size(), size);
    out << k.name << '\n';
    out.write(reinterpret_cast<const char*>(size), 8);
    out.write(reinterpret_cast<const char*>(k.bytes.data()), static_cast<std::streamsize>(k.bytes.size()));
  }
}

std::vector<KernelOutput> ReadDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<KernelOutput> outputs;
  std::string name;
  while (std::getline(in, name)) {
    uint8_t size_bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    in.read(reinterpret_cast<char*>(size_bytes), 8);
    const uint64_t size = LoadLittleEndian64(size_bytes);
    if (!in || size > (uint64_t{1} << 32)) break;
    KernelOutput k{name, std::vector<uint8_t>(size)};
    in.read(reinterpret_cast<char*>(k.bytes.data()), static_cast<std::streamsize>(size));
    outputs.push_back(std::move(k));
  }
  return outputs;
}

int CompareDumps(const std::string& a_path, const std::string& b_path) {
  const std::vector<KernelOutput> a = ReadDump(a_path), b = ReadDump(b_path);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].bytes != b[i].bytes || a[i].name != b[i].name) {
      printf("first difference: %s\n", FirstDifference(a[i], b[i]).c_str());
      return 1;
    }
  }
  if (a.size() != b.size()) {
    printf("first difference: %zu kernels vs %zu\n", a.size(), b.size());
    return 1;
  }
  printf("no difference (%zu kernels)\n", a.size());
  return 0;
}

// The device's kernels against the golden hashes, kernel by kernel (host-only kernels are not
// part of a device's table and are reported as such).
// An unavailable device (no plugin, no driver, no GPU) is reported as skipped: exit status 77,
// which ctest counts as a skipped test, not a passed one.
constexpr int kExitSkipped = 77;

int RunOnDevice(const std::string& device_name, const std::string& platform,
                const std::map<std::string, std::string>& golden, const std::string& dump_path) {
  const Device device = Device::Parse(device_name);
  const backend::KernelTable* found = nullptr;
  try {
    found = &KernelsOf(device);
  } catch (const Error& e) {
    printf("%s %s: skipped: %s\n", platform.c_str(), device.ToString().c_str(), e.what());
    return kExitSkipped;
  }
  const backend::KernelTable& kernels = *found;
  const std::vector<KernelOutput> outputs = RunBattery(kernels, false);
  CheckCoverageRows(outputs, false);
  if (!dump_path.empty()) WriteDump(dump_path, outputs);
  const Hashes h = HashOutputs(outputs);
  int mismatched = 0;
  std::vector<KernelOutput> cpu_outputs;  // the CPU table's, to name a differing element
  for (size_t k = 0; k < h.per_kernel.size(); ++k) {
    const auto& [name, digest] = h.per_kernel[k];
    const auto want = golden.find(name);
    if (want == golden.end() || want->second != digest) {
      printf("  kernel %s: %s\n", name.c_str(),
             want == golden.end() ? "not in the golden file" : "MISMATCH");
      if (cpu_outputs.empty()) cpu_outputs = RunBattery(CpuKernels(), false);
      if (k < cpu_outputs.size() && cpu_outputs[k].bytes != outputs[k].bytes) {
        printf("    against the CPU table: %s\n", FirstDifference(outputs[k], cpu_outputs[k]).c_str());
      }
      ++mismatched;
    }
  }
  const size_t host_only = golden.size() - h.per_kernel.size();
  printf("%s %s: %zu kernels identical to the golden hashes, %d differ, %zu host-only not run\n",
         platform.c_str(), kernels.device_name, h.per_kernel.size() - mismatched, mismatched,
         host_only);
  return mismatched == 0 && !golden.empty() ? 0 : 1;
}

int Usage(const char* message) {
  fprintf(stderr,
          "%s\nusage: lockstep_battery [--golden FILE] [--target NAME[,NAME...]|all]\n"
          "                        [--platform LABEL] [--threads N] [--dump FILE] [--write-golden FILE]\n"
          "       lockstep_battery --device cuda[:N] --golden FILE [--dump FILE]   (exit 77: no such device)\n"
          "       lockstep_battery --list-targets | --list-compiled\n"
          "       lockstep_battery --compare-dumps A B\n",
          message);
  return 2;
}

int Main(int argc, char** argv) {
  std::string golden_path, target_name = "all", platform = LOCKSTEP_PLATFORM, dump_path,
                           write_golden_path, device_name;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage(("missing value after " + arg).c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (arg == "--golden") golden_path = value();
    else if (arg == "--target") target_name = value();
    else if (arg == "--platform") platform = value();
    else if (arg == "--dump") dump_path = value();
    else if (arg == "--write-golden") write_golden_path = value();
    else if (arg == "--device") device_name = value();
    else if (arg == "--threads") simd::SetDefaultThreadCount(strtoul(value().c_str(), nullptr, 10));
    else if (arg == "--list-targets") {
      for (const simd::Target& t : simd::RunnableTargets()) printf("%s\n", t.name.c_str());
      return 0;
    } else if (arg == "--list-compiled") {
      for (const simd::Target& t : simd::CompiledTargets()) printf("%s\n", t.name.c_str());
      return 0;
    } else if (arg == "--compare-dumps") {
      const std::string a = value(), b = value();
      return CompareDumps(a, b);
    } else {
      return Usage(("unknown argument: " + arg).c_str());
    }
  }
  RequireContractFloatingPoint();

  std::map<std::string, std::string> golden_kernels;
  std::vector<std::string> golden_totals;
  if (!golden_path.empty() && !ReadGolden(golden_path, &golden_kernels, &golden_totals)) {
    fprintf(stderr, "cannot read the golden file %s\n", golden_path.c_str());
    return 2;
  }
  if (!device_name.empty() && device_name != "cpu") {
    if (golden_path.empty()) return Usage("--device needs --golden FILE");
    return RunOnDevice(device_name, platform, golden_kernels, dump_path);
  }

  // --target takes one name or a comma-separated list; every name must be runnable here (a list
  // that quietly lost a target would pass without testing it).
  std::vector<simd::Target> targets;
  std::string wanted = target_name + ",";
  for (size_t start = 0, comma; (comma = wanted.find(',', start)) != std::string::npos; start = comma + 1) {
    const std::string name = wanted.substr(start, comma - start);
    const size_t before = targets.size();
    for (const simd::Target& t : simd::RunnableTargets()) {
      if (name == "all" || name == t.name) targets.push_back(t);
    }
    if (targets.size() == before) {
      fprintf(stderr, "target '%s' is not runnable here; runnable:", name.c_str());
      for (const simd::Target& t : simd::RunnableTargets()) fprintf(stderr, " %s", t.name.c_str());
      fprintf(stderr, "\n");
      return 2;
    }
  }

  int passed = 0, failed = 0;
  std::vector<KernelOutput> first_outputs;
  Hashes first_hashes;
  for (const simd::Target& t : targets) {
    simd::ForceTarget(t.bits);
    const std::vector<KernelOutput> outputs = RunBattery();
    CheckCoverageRows(outputs, true);
    const Hashes h = HashOutputs(outputs);
    std::string verdict = "ok", detail;
    if (!golden_totals.empty() && h.totals != golden_totals) {
      verdict = "MISMATCH";
      for (int s = kGoldenSections - 1; s >= 0; --s) {
        if (golden_totals[s].empty()) {
          detail = std::string("the golden file has no ") + kSectionText[s].total_key + " line (section " +
                   std::to_string(s + 1) + ")";
        }
      }
      for (size_t k = 0; k < h.per_kernel.size() && detail.empty(); ++k) {
        const auto& [name, digest] = h.per_kernel[k];
        if (golden_kernels[name] == digest) continue;
        detail = "first differing kernel: " + name;
        // Name the element when another target of this run reproduced the golden kernel.
        if (!first_outputs.empty() && first_hashes.per_kernel[k].second == golden_kernels[name]) {
          detail = FirstDifference(outputs[k], first_outputs[k]);
        }
        break;
      }
    } else if (golden_totals.empty() && !first_outputs.empty() && h.totals != first_hashes.totals) {
      verdict = "MISMATCH";
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (outputs[k].bytes != first_outputs[k].bytes) {
          detail = FirstDifference(outputs[k], first_outputs[k]) + " (vs " + targets[0].name + ")";
          break;
        }
      }
    }
    printf("%s %s %s %s\n", platform.c_str(), t.name.c_str(), h.Totals().c_str(), verdict.c_str());
    if (!detail.empty()) printf("  %s\n", detail.c_str());
    fflush(stdout);
    (verdict == "ok" ? passed : failed)++;
    if (first_outputs.empty()) {
      first_outputs = outputs;
      first_hashes = h;
      if (!write_golden_path.empty()) {
        std::ofstream(write_golden_path) << GoldenText(h);
        printf("wrote %s\n", write_golden_path.c_str());
      }
    }
    if (!dump_path.empty()) WriteDump(dump_path, outputs);
  }
  simd::ForceTarget(0);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace battery
}  // namespace lockstep

int main(int argc, char** argv) {
  try {
    return lockstep::battery::Main(argc, argv);
  } catch (const std::exception& e) {
    fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
