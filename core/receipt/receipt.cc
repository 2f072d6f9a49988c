#include "core/receipt/receipt.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/contract.h"
#include "core/error.h"
#include "core/io/json_text.h"

namespace lockstep {
namespace receipt {

namespace {

constexpr size_t kMaxReceiptBytes = size_t{1} << 30;

// One line's fields: strings, integers, and (for "identity") an object of strings. The receipt's
// own writer is the only producer, so anything else is a format error.
struct Fields {
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> integers;
  std::map<std::string, std::string> object;
};

class LineParser {
 public:
  LineParser(const std::string& line, const std::string& where) : s_(line), where_(where) {}

  Fields Parse() {
    Fields f;
    Expect('{');
    if (Peek() == '}') return ++i_, End(f);
    for (;;) {
      const std::string key = String();
      Expect(':');
      if (Peek() == '"') {
        f.text[key] = String();
      } else if (Peek() == '{') {
        ++i_;
        if (Peek() != '}') {
          for (;;) {
            const std::string k = String();
            Expect(':');
            f.object[k] = String();
            if (Peek() != ',') break;
            ++i_;
          }
        }
        Expect('}');
      } else {
        f.integers[key] = Integer();
      }
      if (Peek() != ',') break;
      ++i_;
    }
    Expect('}');
    return End(f);
  }

 private:
  Fields End(const Fields& f) {
    LOCKSTEP_REQUIRE_FORMAT(i_ == s_.size(), where_ << ": unexpected text after the object");
    return f;
  }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void Expect(char c) {
    LOCKSTEP_REQUIRE_FORMAT(Peek() == c, where_ << ": expected '" << c << "' at column " << i_ + 1);
    ++i_;
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (Peek() != '"') {
      LOCKSTEP_REQUIRE_FORMAT(i_ < s_.size(), where_ << ": unterminated string");
      char c = s_[i_++];
      if (c == '\\') {
        c = s_[i_++];
        if (c == 'u') {
          LOCKSTEP_REQUIRE_FORMAT(i_ + 4 <= s_.size(), where_ << ": bad escape");
          c = static_cast<char>(strtol(s_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
        }
      }
      out += c;
    }
    ++i_;
    return out;
  }
  int64_t Integer() {
    const size_t start = i_;
    if (Peek() == '-') ++i_;
    while (Peek() >= '0' && Peek() <= '9') ++i_;
    LOCKSTEP_REQUIRE_FORMAT(i_ > start && i_ - start <= 19, where_ << ": expected an integer at column " << start + 1);
    return strtoll(s_.substr(start, i_ - start).c_str(), nullptr, 10);
  }

  const std::string& s_;
  std::string where_;
  size_t i_ = 0;
};

std::string DigestLine(const char* key, const Digest& d) {
  std::string out = ",\"";
  out += key;
  out += "\":\"" + Hex(d) + "\"";
  return out;
}

Digest DigestField(const Fields& f, const char* key, const std::string& where) {
  auto it = f.text.find(key);
  Digest d{};
  LOCKSTEP_REQUIRE_FORMAT(it != f.text.end() && ParseHex(it->second, &d),
                          where << ": expected \"" << key << "\" as 64 hex digits");
  return d;
}

int64_t IntegerField(const Fields& f, const char* key, const std::string& where) {
  auto it = f.integers.find(key);
  LOCKSTEP_REQUIRE_FORMAT(it != f.integers.end(), where << ": expected an integer \"" << key << "\"");
  return it->second;
}

std::string Folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string Receipt::CheckpointPath(const CheckpointEntry& c) const { return Folder(path) + c.file; }

const CheckpointEntry* Receipt::CheckpointAtOrBefore(int64_t step) const {
  const CheckpointEntry* best = nullptr;
  for (const CheckpointEntry& c : checkpoints) {
    if (c.step <= step) best = &c;
  }
  return best;
}

Writer::Writer(Store& store, const std::string& path, const std::string& task,
               const std::map<std::string, std::string>& identity, const std::string& initial_model,
               const Digest& initial_state)
    : store_(store), path_(path) {
  store_.RequireWritable(path);
  std::string header = "{\"lockstep_receipt\":" + std::to_string(kFormatVersion) +
                       ",\"contract\":" + std::to_string(kContractVersion) + ",\"task\":";
  AppendJsonString(task, &header);
  header += ",\"identity\":{";
  bool first = true;
  for (const auto& [key, value] : identity) {  // a std::map: sorted keys, one spelling
    if (!first) header += ',';
    first = false;
    AppendJsonString(key, &header);
    header += ':';
    AppendJsonString(value, &header);
  }
  header += "},\"initial_model\":\"" + initial_model + "\"" + DigestLine("state", initial_state) + "}";
  chain_ = Sha256Digest(header.data(), header.size());
  text_ = header + "\n";
}

void Writer::Step(int64_t step, const Digest& batch, const Digest& state) {
  LOCKSTEP_REQUIRE_STATE(step == last_step_ + 1, "receipt: step " << step << " follows step " << last_step_);
  last_step_ = step;
  chain_ = ChainLink(chain_, state, batch);
  text_ += "{\"step\":" + std::to_string(step) + DigestLine("batch", batch) + DigestLine("state", state) +
           DigestLine("chain", chain_) + "}\n";
}

std::string Writer::CheckpointFile(int64_t step) const { return path_ + "." + std::to_string(step) + ".state"; }

void Writer::Checkpoint(int64_t step, const std::string& file_path, const std::string& sha256) {
  LOCKSTEP_REQUIRE_STATE(step == last_step_, "receipt: a checkpoint of step " << step << " after step " << last_step_);
  LOCKSTEP_REQUIRE_STATE(Folder(file_path) == Folder(path_), "receipt: the checkpoint " << file_path
                                                                 << " is not beside the receipt " << path_);
  std::string line = "{\"checkpoint\":" + std::to_string(step) + ",\"file\":";
  AppendJsonString(BaseName(file_path), &line);
  text_ += line + ",\"sha256\":\"" + sha256 + "\"}\n";
}

void Writer::Flush() { store_.Write(path_, std::vector<uint8_t>(text_.begin(), text_.end())); }

void Writer::Finish(const std::string& trained_model) {
  text_ += "{\"end\":" + std::to_string(last_step_) + DigestLine("chain", chain_) + ",\"trained_model\":\"" +
           trained_model + "\"}\n";
  Flush();
}

Receipt ParseReceipt(const std::string& text, const std::string& what) {
  Receipt r;
  r.path = what;
  size_t pos = 0;
  int64_t line_number = 0;
  Digest chain{};
  LOCKSTEP_REQUIRE_FORMAT(text.compare(0, 20, "{\"lockstep_receipt\":") == 0,
                          what << ": not a lockstep receipt (it does not start with {\"lockstep_receipt\":)");
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    LOCKSTEP_REQUIRE_FORMAT(eol != std::string::npos, what << ": line " << line_number + 1
                                                           << " has no end: the receipt is truncated");
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_number;
    const std::string where = what + ": line " + std::to_string(line_number);
    LOCKSTEP_REQUIRE_FORMAT(!r.ended, where << ": text after the end line");
    const Fields f = LineParser(line, where).Parse();
    if (line_number == 1) {
      auto version = f.integers.find("lockstep_receipt");
      LOCKSTEP_REQUIRE_FORMAT(version != f.integers.end(), what << ": not a lockstep receipt (its first line has no "
                                                                   "\"lockstep_receipt\")");
      LOCKSTEP_REQUIRE_FORMAT(version->second == kFormatVersion,
                              what << ": receipt format version " << version->second << "; this lockstep reads version "
                                   << kFormatVersion);
      r.contract = static_cast<int>(IntegerField(f, "contract", where));
      auto task = f.text.find("task");
      LOCKSTEP_REQUIRE_FORMAT(task != f.text.end(), where << ": expected \"task\"");
      r.task = task->second;
      r.identity = f.object;
      auto model = f.text.find("initial_model");
      LOCKSTEP_REQUIRE_FORMAT(model != f.text.end(), where << ": expected \"initial_model\"");
      r.initial_model = model->second;
      r.initial_state = DigestField(f, "state", where);
      chain = r.initial_chain = Sha256Digest(line.data(), line.size());
    } else if (f.integers.count("step")) {
      const int64_t step = IntegerField(f, "step", where);
      LOCKSTEP_REQUIRE_FORMAT(step == r.last_step() + 1,
                              where << ": step " << step << " follows step " << r.last_step());
      StepEntry e;
      e.batch = DigestField(f, "batch", where);
      e.state = DigestField(f, "state", where);
      e.chain = DigestField(f, "chain", where);
      chain = ChainLink(chain, e.state, e.batch);
      LOCKSTEP_REQUIRE_FORMAT(chain == e.chain, where << ": the chain hash of step " << step
                                                      << " does not follow from the steps before it: the receipt "
                                                         "was altered (tampered chain)");
      r.steps.push_back(e);
    } else if (f.integers.count("checkpoint")) {
      CheckpointEntry c;
      c.step = IntegerField(f, "checkpoint", where);
      LOCKSTEP_REQUIRE_FORMAT(c.step == r.last_step(), where << ": a checkpoint of step " << c.step << " after step "
                                                             << r.last_step());
      auto file = f.text.find("file"), sha = f.text.find("sha256");
      LOCKSTEP_REQUIRE_FORMAT(file != f.text.end() && !file->second.empty() &&
                                  file->second.find('/') == std::string::npos && sha != f.text.end(),
                              where << ": expected \"file\" (a name beside the receipt) and \"sha256\"");
      c.file = file->second;
      c.sha256 = sha->second;
      r.checkpoints.push_back(c);
    } else if (f.integers.count("end")) {
      LOCKSTEP_REQUIRE_FORMAT(IntegerField(f, "end", where) == r.last_step(),
                              where << ": the end line says " << f.integers.at("end") << " steps, the receipt holds "
                                    << r.last_step());
      LOCKSTEP_REQUIRE_FORMAT(DigestField(f, "chain", where) == chain,
                              where << ": the end line's chain hash is not the last step's (tampered chain)");
      auto model = f.text.find("trained_model");
      LOCKSTEP_REQUIRE_FORMAT(model != f.text.end(), where << ": expected \"trained_model\"");
      r.trained_model = model->second;
      r.ended = true;
    } else {
      LOCKSTEP_REQUIRE_FORMAT(false, where << ": expected a step, checkpoint or end line");
    }
  }
  return r;
}

Receipt ReadReceipt(const std::string& path, const Store& store) {
  const std::vector<uint8_t> bytes = store.Read(path, kMaxReceiptBytes);
  return ParseReceipt(std::string(bytes.begin(), bytes.end()), path);
}

}  // namespace receipt
}  // namespace lockstep
