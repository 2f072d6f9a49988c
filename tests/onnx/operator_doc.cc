// Writes docs/onnx.md's operator table from onnx::OperatorTable() (each operator's family, the opset
// its semantics start at, the attributes it reads, its scope), or checks that the file has it:
//   lockstep_onnx_operator_doc --check docs/onnx.md   (in make test; exit 1 when it differs)
//   lockstep_onnx_operator_doc --write docs/onnx.md
// The table sits between the two marker lines below; the rest of the file is left as it is.
#include <stdio.h>
#include <string.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/op_registry.h"

namespace {

const char kBegin[] = "<!-- operator table: generated from onnx::OperatorTable() by lockstep_onnx_operator_doc -->";
const char kEnd[] = "<!-- end of the operator table -->";

std::string Table() {
  std::map<std::string, std::vector<const lockstep::onnx::OpSpec*>> families;
  for (const lockstep::onnx::OpSpec& spec : lockstep::onnx::OperatorTable()) families[spec.family].push_back(&spec);
  std::ostringstream s;
  s << kBegin << "\n\n";
  s << lockstep::onnx::OperatorTable().size() << " operators of the default domain. Opsets: from the first whose\n"
    << "semantics the entry computes, through 18. Attributes: every one lockstep reads (a node that sets\n"
    << "another is refused at load: lockstep would ignore it).\n\n";
  s << "| family | operator | opsets | attributes | scope |\n|---|---|---|---|---|\n";
  for (const auto& [family, specs] : families) {
    for (const lockstep::onnx::OpSpec* spec : specs) {
      std::string attributes;
      for (const std::string& a : spec->attributes) attributes += (attributes.empty() ? "" : ", ") + ("`" + a + "`");
      const std::string opsets = std::to_string(spec->since) + (spec->since < 18 ? "-18" : "");
      s << "| " << family << " | " << spec->name << " | " << opsets << " | " << attributes << " | "
        << spec->scope << " |\n";
    }
  }
  s << "\n" << kEnd << "\n";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[1], "--check") != 0 && strcmp(argv[1], "--write") != 0)) {
    fprintf(stderr, "usage: %s --check|--write docs/onnx.md\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[2]);
    return 2;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string doc = buffer.str();
  const size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    fprintf(stderr, "%s: %s lacks the operator table's marker lines (%s ... %s)\n", argv[0], argv[2], kBegin, kEnd);
    return 2;
  }
  const size_t stop = end + strlen(kEnd) + (doc.compare(end + strlen(kEnd), 1, "\n") == 0 ? 1 : 0);
  const std::string wanted = Table();
  if (doc.compare(begin, stop - begin, wanted) == 0) {
    printf("%s: the operator table is current\n", argv[2]);
    return 0;
  }
  if (strcmp(argv[1], "--check") == 0) {
    fprintf(stderr, "%s: the operator table differs from onnx::OperatorTable(); run %s --write %s\n", argv[2], argv[0],
            argv[2]);
    return 1;
  }
  const std::string updated = doc.substr(0, begin) + wanted + doc.substr(stop);
  const std::string temporary = std::string(argv[2]) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << updated;
    if (!out) {
      fprintf(stderr, "%s: cannot write %s\n", argv[0], temporary.c_str());
      return 2;
    }
  }
  if (rename(temporary.c_str(), argv[2]) != 0) {
    fprintf(stderr, "%s: cannot replace %s\n", argv[0], argv[2]);
    return 2;
  }
  printf("wrote the operator table into %s\n", argv[2]);
  return 0;
}
