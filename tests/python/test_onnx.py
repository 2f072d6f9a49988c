"""lockstep.onnx (docs/onnx.md): the reference models give the golden hashes of
tests/golden/onnx.txt (what the native `lockstep run`/`convert` and the npm package print), LeNet-5
fine-tuned for 3 Adam steps gives the golden fine-tuned hash, run() takes inputs by name or in
order, misuse raises the engine's errors, and onnx.from_torch and from_torch_module both take a module."""
import hashlib
import os

import numpy as np
import pytest
import torch

import lockstep as ls
from lockstep.nn import functional as F

from conftest import ROOT

MODELS = os.path.join(ROOT, ".deps", "onnx")


def golden():
    out = {}
    with open(os.path.join(ROOT, "tests", "golden", "onnx.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and not parts[0].startswith("#"):
                out[(parts[0], parts[1])] = parts[2]
    return out


def sha256_of(t):
    return hashlib.sha256(np.ascontiguousarray(t.numpy()).astype("<f4").tobytes()).hexdigest()


@pytest.mark.parametrize("name", ["lenet5", "mlp_bn", "resnet_small", "transformer"])
def test_reference_models_give_the_golden_hashes(name):
    g = golden()
    model = ls.onnx.load(os.path.join(MODELS, name + ".onnx"))
    x = np.load(os.path.join(MODELS, name + ".input.npy"))
    with ls.no_grad():
        y = model(ls.from_numpy(x))
        by_name = model.run({model.inputs[0].name: x})
    assert sha256_of(y) == g[(name, "output")]
    assert sha256_of(by_name[model.outputs[0].name]) == g[(name, "output")]
    assert model.hash() == g[(name, "checkpoint")]
    assert not model.training


def test_lenet5_fine_tuned_gives_the_golden_hash(mnist_dir):
    with open(os.path.join(MODELS, "lenet5.onnx"), "rb") as f:
        model = ls.onnx.load(f.read())  # bytes work as a path does
    assert [n for n, _ in model.named_parameters()][:2] == ["conv1.weight", "conv1.bias"]
    train, _ = ls.data.load_mnist(mnist_dir)
    optimizer = ls.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for step in range(3):  # the first 300 images in file order, as `lockstep train onnx --steps 3`
        batch = train[step * 100:(step + 1) * 100]
        optimizer.zero_grad()
        F.cross_entropy(model(batch.inputs), ls.from_numpy(batch._labels(0, 100).numpy())).backward()
        optimizer.step()
    assert model.hash() == golden()[("lenet5", "finetune")]


def test_misuse_raises_the_engine_errors(tmp_path):
    with pytest.raises(ls.FormatError, match="declares"):
        ls.onnx.load(open(os.path.join(MODELS, "lenet5.onnx"), "rb").read()[:1000])
    import onnx
    from onnx import helper, TensorProto
    graph = helper.make_graph([helper.make_node("StringNormalizer", ["x"], ["y"], name="the_normalizer")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    with pytest.raises(ls.UnavailableError,
                       match=r"node 'the_normalizer' \(StringNormalizer, opset 13\): unsupported operator StringNormalizer"):
        ls.onnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    with pytest.raises(TypeError):
        ls.onnx.load(12)
    model = ls.onnx.load(os.path.join(MODELS, "transformer.onnx"))
    with pytest.raises(ls.ArgumentError, match="declared int64, got float"):
        model(ls.zeros(2, 16))
    with pytest.raises(TypeError, match="no input 'images'"):
        model.run({"images": ls.zeros(2, 16)})
    with pytest.raises(TypeError, match="takes 1 inputs"):
        model.run([])
    tokens = np.zeros((2, 16), np.int64)
    with ls.no_grad():
        assert model.run([tokens])["logits"].shape == (2, 16, 64)


class WithLeakyRelu(torch.nn.Module):
    """A module from_torch_module's own conversion does not take (LeakyReLU)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)
        self.act = torch.nn.LeakyReLU(0.1)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.out(self.act(self.fc(x)))


def test_torch_modules_through_onnx_and_through_from_torch_module():
    """lockstep.onnx.from_torch (PyTorch's exporter, then the importer) and from_torch_module (the
    aten route for LeakyReLU) both compute the module, with its parameter names."""
    torch.manual_seed(0)
    module = WithLeakyRelu().eval()
    x = torch.randn(5, 6)
    with torch.no_grad():
        theirs = module.double()(x.double()).numpy()
    module.float()
    for model in (ls.onnx.from_torch(module, x), ls.from_torch_module(module)):
        assert sorted(model.state_dict()) == sorted(module.state_dict())
        with ls.no_grad():
            ours = model(ls.from_numpy(x.numpy())).numpy()
        assert np.abs(ours - theirs).max() <= 8 * np.spacing(np.float32(np.abs(theirs).max()))


def test_float64_models_take_float32_and_give_float32_rounded_once():
    from onnx import helper, TensorProto
    # y = (x + c) * x in float64, c = 0.1 as a double: a result float32 arithmetic would not give.
    c = helper.make_tensor("c", TensorProto.DOUBLE, [1], [0.1])
    graph = helper.make_graph([helper.make_node("Add", ["x", "c"], ["s"]), helper.make_node("Mul", ["s", "x"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3])], [c])
    model = ls.onnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    assert [i.dtype for i in model.inputs] == ["float64"]
    x = np.array([1.764052391052246, 1.8675580024719238, -0.9772778749465942], np.float32)
    got = model.run([x])["y"].numpy()
    wide = x.astype(np.float64)
    assert got.dtype == np.float32
    assert np.array_equal(got, ((wide + 0.1) * wide).astype(np.float32))
    assert (got != (x + np.float32(0.1)) * x).all()  # float32 arithmetic gives other bits for each


def test_sequence_inputs_are_named_and_refused_by_the_tensor_interface():
    from onnx import helper, TensorProto
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("SequenceLength", ["s"], ["n"])], "g", [seq],
                              [helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    model = ls.onnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    assert model.inputs[0].dtype == "sequence of float"
    with pytest.raises(ls.UnavailableError, match="input 's' is a sequence of float; this interface takes tensors"):
        model.run([ls.zeros(2)])
