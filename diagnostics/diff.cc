#include "diagnostics/diff.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/error.h"

namespace lockstep {
namespace diagnostics {

double UlpDistance(float a, float b) {
  if (a != a || b != b) return (a != a && b != b) ? 0.0 : INFINITY;
  auto ordered = [](float f) {
    int32_t i;
    memcpy(&i, &f, 4);
    return i < 0 ? -static_cast<int64_t>(i & 0x7FFFFFFF) : static_cast<int64_t>(i);
  };
  return static_cast<double>(std::llabs(ordered(a) - ordered(b)));
}

namespace {

Comparison Compare(const TraceRecord& a, const TraceRecord& b, const TraceFile& ta, const TraceFile& tb) {
  Comparison c;
  c.a = &a;
  c.b = &b;
  c.elements = a.numel();
  c.identical = a.hash == b.hash && a.shape == b.shape && a.dtype == b.dtype;
  if (c.identical) return c;
  if (a.shape != b.shape || a.dtype != b.dtype) {
    c.stat_rel = INFINITY;
  } else {
    // Relative to the tensor's largest magnitude, as the elementwise figure is: the differences of
    // min, max and mean, and of the root mean square (l2 / sqrt(n)).
    const double scale = std::max({fabs(a.min), fabs(a.max), fabs(b.min), fabs(b.max)});
    const double n = static_cast<double>(std::max<int64_t>(1, a.numel()));
    const double worst = std::max({fabs(a.min - b.min), fabs(a.max - b.max), fabs(a.mean - b.mean),
                                   fabs(a.l2 - b.l2) / sqrt(n)});
    c.stat_rel = scale > 0 ? worst / scale : (worst > 0 ? INFINITY : 0.0);
    if (a.nan != b.nan || a.inf != b.inf) c.stat_rel = INFINITY;
    if (c.stat_rel == 0) c.stat_rel = 1e-300;  // different bits with equal statistics: still different
  }
  auto va = ta.values.find(a.values), vb = tb.values.find(b.values);
  if (!a.values.empty() && !b.values.empty() && va != ta.values.end() && vb != tb.values.end() &&
      va->second.size() == vb->second.size()) {
    c.with_values = true;
    c.differing = 0;
    double scale = 0;
    for (const double v : vb->second) scale = std::max(scale, fabs(v));
    for (size_t i = 0; i < va->second.size(); ++i) {
      const double x = va->second[i], y = vb->second[i];
      if (x == y || (x != x && y != y)) continue;
      ++c.differing;
      c.max_abs = std::max(c.max_abs, fabs(x - y));
      // Ulps count where they mean something: near zero, where cancellation leaves few significant
      // bits, an ulp is tiny and the count huge (the relative figure covers those elements).
      if (a.dtype == "float32" && std::max(fabs(x), fabs(y)) >= scale * 0x1p-8) {
        c.max_ulp = std::max(c.max_ulp, UlpDistance(static_cast<float>(x), static_cast<float>(y)));
      }
    }
    c.max_rel = scale > 0 ? c.max_abs / scale : (c.differing ? INFINITY : 0.0);
    if (c.differing == 0) c.max_rel = 1e-300;  // values equal but the hash differs: NaN payloads or zero signs
  }
  return c;
}

}  // namespace

DiffResult Diff(const TraceFile& a, const TraceFile& b) {
  DiffResult result;
  std::unordered_map<std::string, const TraceRecord*> by_key;
  for (const TraceRecord& r : b.records) by_key.emplace(r.Key(), &r);
  std::set<std::string> matched;
  std::map<std::string, size_t> op_index, module_index;
  for (const TraceRecord& r : a.records) {
    auto it = by_key.find(r.Key());
    if (it == by_key.end()) {
      ++result.only_a;
      ++result.only_a_ops[r.phase + " " + r.op];
      continue;
    }
    matched.insert(it->first);
    result.comparisons.push_back(Compare(r, *it->second, a, b));
    const Comparison& c = result.comparisons.back();
    ++result.compared;
    const std::string op_key = r.phase + " " + r.op;
    if (!op_index.count(op_key)) {
      op_index[op_key] = result.ops.size();
      result.ops.push_back(OpAgreement{r.phase, r.op});
    }
    OpAgreement& agreement = result.ops[op_index[op_key]];
    ++agreement.compared;
    if (c.identical) {
      ++result.identical;
      ++agreement.identical;
      if (result.first_divergence < 0) ++result.identical_before;
      continue;
    }
    ++result.different;
    if (c.with_values) agreement.max_ulp = std::max(agreement.max_ulp, c.max_ulp);
    agreement.max_rel = std::max(agreement.max_rel, c.Severity());
    if (result.first_divergence < 0) result.first_divergence = static_cast<int64_t>(result.comparisons.size()) - 1;
    const std::string module = r.param.empty() ? r.module : r.param.substr(0, r.param.rfind('.') == std::string::npos
                                                                                   ? 0
                                                                                   : r.param.rfind('.'));
    if (!module_index.count(module)) {
      module_index[module] = result.modules.size();
      result.modules.push_back(ModuleSpread{module, &r, {}});
    }
    ModuleSpread& spread = result.modules[module_index[module]];
    // Evaluation and sampling number their steps by batch or token: kept apart from training steps.
    double& worst = r.phase == "eval" || r.phase == "sample" ? spread.worst_eval : spread.worst_by_step[r.step];
    worst = std::max(worst, c.Severity());
  }
  for (const TraceRecord& r : b.records) {
    if (!matched.count(r.Key())) {
      ++result.only_b;
      ++result.only_b_ops[r.phase + " " + r.op];
    }
  }
  const size_t smaller = std::min(a.records.size(), b.records.size());
  if (result.compared == 0 || static_cast<size_t>(result.compared) * 10 < smaller) {
    throw Error("the traces do not describe the same run: only " + std::to_string(result.compared) + " of " +
                    std::to_string(smaller) +
                    " records align by step, phase, module, op and call (another model, other steps, or another "
                    "program?)",
                ErrorKind::kArgument);
  }
  return result;
}

namespace {

std::string Format(const char* fmt, double v) {
  char text[64];
  snprintf(text, sizeof text, fmt, v);
  return text;
}

// A severity for tables: "~0" where the bits differ but the statistics agree to 9 digits.
std::string Level(double v) { return v < 1e-200 ? std::string("~0") : Format("%.2g", v); }

std::string Severity(const Comparison& c) {
  if (c.identical) return "identical";
  if (c.with_values) {
    return std::to_string(c.differing) + "/" + std::to_string(c.elements) + " elements differ, max " +
           Format("%.0f", c.max_ulp) + " ulp, max abs " + Format("%.3g", c.max_abs) + ", max rel " +
           Format("%.3g", c.max_rel);
  }
  if (std::isinf(c.stat_rel)) return "bits differ; the shapes, dtypes or NaN/Inf counts differ";
  if (c.stat_rel < 1e-200) {
    return "bits differ; min, max, mean and l2 agree to 9 digits (record values with --trace-values for ulps)";
  }
  return "bits differ; the statistics differ by up to " + Format("%.3g", c.stat_rel) + " relative";
}

std::string Stats(const TraceRecord& r) {
  return "min " + Format("%.9g", r.min) + ", max " + Format("%.9g", r.max) + ", mean " + Format("%.9g", r.mean) +
         ", l2 " + Format("%.9g", r.l2) + (r.nan || r.inf ? ", nan " + std::to_string(r.nan) + ", inf " + std::to_string(r.inf) : "");
}

std::string Shape(const TraceRecord& r) {
  std::string s = r.dtype + " [";
  for (size_t i = 0; i < r.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(r.shape[i]);
  return s + "]";
}

std::string Source(const TraceFile& t) {
  auto get = [&](const char* k) { auto it = t.header.find(k); return it == t.header.end() ? std::string() : it->second; };
  std::string s = get("producer") + " " + get("version");
  if (!get("platform").empty()) s += ", " + get("platform");
  if (!get("simd").empty()) s += " " + get("simd");
  if (!get("source").empty()) s += ", " + get("source");
  return s;
}

}  // namespace

std::string FormatReport(const DiffResult& r, const TraceFile& a, const TraceFile& b, int max_rows) {
  std::string out;
  out += "A: " + a.path + " (" + std::to_string(a.records.size()) + " records; " + Source(a) + ")\n";
  out += "B: " + b.path + " (" + std::to_string(b.records.size()) + " records; " + Source(b) + ")\n";
  out += "compared " + std::to_string(r.compared) + " aligned records: " + std::to_string(r.identical) +
         " identical, " + std::to_string(r.different) + " different; " + std::to_string(r.only_a) +
         " only in A, " + std::to_string(r.only_b) + " only in B (ops one side decomposes differently: compared "
                                                     "at the module's output and parameters instead)\n";
  if (r.same()) {
    out += "\nIDENTICAL: every aligned record has the same bits.\n";
  } else {
    const Comparison& c = r.comparisons[static_cast<size_t>(r.first_divergence)];
    out += "\nFIRST DIVERGENCE: " + c.a->Describe() + "\n";
    out += "  " + Shape(*c.a) + ": " + Severity(c) + "\n";
    out += "  A (line " + std::to_string(c.a->line) + "): " + Stats(*c.a) + "\n";
    out += "  B (line " + std::to_string(c.b->line) + "): " + Stats(*c.b) + "\n";
    out += "  before it, " + std::to_string(r.identical_before) + " aligned records were identical";
    for (int64_t i = r.first_divergence - 1; i >= 0; --i) {
      const Comparison& p = r.comparisons[static_cast<size_t>(i)];
      if (p.identical) {
        out += " (the last: " + p.a->Describe() + ")";
        break;
      }
    }
    out += "\n";
    out += "\nWHERE DIVERGENCE ENTERS, per module (first diverging record; then the largest relative difference "
           "per step)\n";
    int rows = 0;
    for (const ModuleSpread& m : r.modules) {
      if (++rows > max_rows) {
        out += "  ... " + std::to_string(r.modules.size() - static_cast<size_t>(max_rows)) + " more modules\n";
        break;
      }
      out += "  " + (m.module.empty() ? std::string("(top level)") : m.module) + ": from " + m.first->Describe() + ";";
      int shown = 0;
      for (const auto& [step, worst] : m.worst_by_step) {
        if (++shown > 8) {
          out += " ... step " + std::to_string(m.worst_by_step.rbegin()->first) + " " +
                 Level(m.worst_by_step.rbegin()->second);
          break;
        }
        out += " step " + std::to_string(step) + " " + Level(worst);
      }
      if (m.worst_eval >= 0) out += "; eval " + Level(m.worst_eval);
      out += "\n";
    }
  }
  out += "\nAGREEMENT BY OP (aligned records)\n";
  out += "  phase     op                          compared  bit-identical  max ulp  max rel\n";
  int rows = 0;
  for (const OpAgreement& o : r.ops) {
    if (++rows > max_rows * 2) break;
    char line[200];
    snprintf(line, sizeof line, "  %-9s %-27s %8lld  %12.1f%%  %7s  %7s\n", o.phase.c_str(), o.op.c_str(),
             static_cast<long long>(o.compared), 100.0 * static_cast<double>(o.identical) / static_cast<double>(o.compared),
             o.max_ulp < 0 ? "-" : Format("%.0f", o.max_ulp).c_str(),
             o.identical == o.compared ? "0" : Level(o.max_rel).c_str());
    out += line;
  }
  auto unmatched = [&](const std::map<std::string, int64_t>& ops, const char* side) {
    if (ops.empty()) return;
    out += std::string("\nONLY IN ") + side + " (no counterpart on the other side):";
    int n = 0;
    for (const auto& [op, count] : ops) {
      if (++n > max_rows) {
        out += " ...";
        break;
      }
      out += " " + op + " x" + std::to_string(count) + ";";
    }
    out += "\n";
  };
  unmatched(r.only_a_ops, "A");
  unmatched(r.only_b_ops, "B");
  return out;
}

std::string HtmlReport(const DiffResult& r, const TraceFile& a, const TraceFile& b) {
  auto escape = [](const std::string& s) {
    std::string out;
    for (const char c : s) {
      if (c == '<') out += "&lt;";
      else if (c == '>') out += "&gt;";
      else if (c == '&') out += "&amp;";
      else if (c == '"') out += "&quot;";
      else out += c;
    }
    return out;
  };
  std::set<int64_t> steps;
  for (const ModuleSpread& m : r.modules) {
    for (const auto& [step, worst] : m.worst_by_step) steps.insert(step);
  }
  std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>lockstep diff</title><style>"
      "body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
      "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#f4f4f4}"
      "td.m{text-align:left;font-family:monospace}.ok{background:#d9f2d9}pre{background:#f8f8f8;padding:1em;"
      "overflow:auto}</style></head><body><h1>lockstep diff</h1>";
  html += "<p>A: " + escape(a.path) + " &middot; B: " + escape(b.path) + "</p>";
  html += "<pre>" + escape(FormatReport(r, a, b)) + "</pre>";
  html += "<h2>Divergence per module over the steps</h2><p>Colour: the largest relative difference of a record in "
          "that module and step (white: identical; darker red: larger).</p><table><tr><th>module</th>";
  for (const int64_t s : steps) html += "<th>" + std::to_string(s) + "</th>";
  html += "</tr>";
  for (const ModuleSpread& m : r.modules) {
    html += "<tr><td class=\"m\">" + escape(m.module.empty() ? "(top level)" : m.module) + "</td>";
    for (const int64_t s : steps) {
      auto it = m.worst_by_step.find(s);
      if (it == m.worst_by_step.end()) {
        html += "<td class=\"ok\"></td>";
        continue;
      }
      // log10 of the relative difference from 1e-9 (light) to 1 (dark)
      const double level = std::min(1.0, std::max(0.0, (log10(std::max(it->second, 1e-12)) + 9.0) / 9.0));
      const int shade = static_cast<int>(235 - 180 * level);
      html += "<td style=\"background:rgb(255," + std::to_string(shade) + "," + std::to_string(shade) + ")\" title=\"" +
              Format("%.3g", it->second) + "\">" + Level(it->second) + "</td>";
    }
    html += "</tr>";
  }
  html += "</table></body></html>\n";
  return html;
}

}  // namespace diagnostics
}  // namespace lockstep
