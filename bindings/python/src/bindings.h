// The parts of lockstep._C, each bound in its own file, and the process-wide defaults they share.
#ifndef LOCKSTEP_BINDINGS_PYTHON_BINDINGS_H_
#define LOCKSTEP_BINDINGS_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <string>

#include "core/random.h"

namespace lockstep {
namespace python {

void BindTensor(pybind11::module_& m);      // bind_tensor.cc
void BindOps(pybind11::module_& m);         // bind_ops.cc
void BindNn(pybind11::module_& m);          // bind_nn.cc
void BindAttention(pybind11::module_& m);   // bind_attention.cc
void BindRecurrent(pybind11::module_& m);   // bind_recurrent.cc
void BindOptim(pybind11::module_& m);       // bind_optim.cc
void BindData(pybind11::module_& m);        // bind_data.cc
void BindIo(pybind11::module_& m);          // bind_io.cc
void BindRuntime(pybind11::module_& m);     // bind_runtime.cc: seeds, devices, threads, traces
void BindOnnx(pybind11::module_& m);        // bind_onnx.cc: ONNX models
void BindVerify(pybind11::module_& m);      // bind_verify.cc: verify_run of receipts

// The default generators (torch.manual_seed's counterpart): one per stream name under the seed
// manual_seed set (0 at start). Layers draw their initial values from "init"; the k-th Dropout
// made without a generator since manual_seed draws its masks from "dropout/k", as the npm
// package's do. Call with the engine lock held.
Generator& DefaultGenerator(const std::string& name);
// The next default Dropout stream, "dropout/k" under the seed.
Generator NextDropoutGenerator();

}  // namespace python
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_PYTHON_BINDINGS_H_
