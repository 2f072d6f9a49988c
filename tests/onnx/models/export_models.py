#!/usr/bin/python3
"""Exports the reference models of docs/onnx.md with PyTorch's ONNX exporter (Debian's
python3-torch 1.13), from fixed seeds, into OUT_DIR: lenet5.onnx, mlp_bn.onnx, resnet_small.onnx,
transformer.onnx, and three of torchvision's classification networks as they are (resnet18,
mobilenet_v2, efficientnet_b0, on 32x32 images to keep the emulated platforms quick), and for
each a fixed input (NAME.input.npy, drawn from a fixed seed too).

PyTorch removes Dropout from eval-mode exports (the MLP's Dropout layers are not in its graph);
training=PRESERVE keeps BatchNormalization as a node instead of folding it into the convolutions.
The export is deterministic (set-up runs it and `--check` exports twice and compares the bytes).
Every model has a dynamic batch dimension, and do_constant_folding is off so that every
initializer keeps its state_dict name (folding would rename transposed weights).

Usage: export_models.py OUT_DIR [--check]
"""
import io
import os
import sys

import numpy as np
import torch
from torch import nn

OPSET = 17


class LeNet5(nn.Module):
    """The MNIST reference model (core/models/lenet.h), PyTorch's names."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def mlp_bn():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2),
                         nn.Linear(128, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 10))


class Block(nn.Module):
    def __init__(self, channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(channels // stride, channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = (nn.Sequential(nn.Conv2d(channels // stride, channels, 1, stride, bias=False),
                                       nn.BatchNorm2d(channels)) if stride != 1 else nn.Identity())

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNetSmall(nn.Module):
    """A ResNet-style CNN for 28x28 digits: stem, two residual stages, global average pooling."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = Block(8, 1)
        self.layer2 = Block(16, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class Transformer(nn.Module):
    """Token embedding, learned positions, 2 TransformerEncoderLayers (GELU), a classifier head."""

    def __init__(self, vocab=64, d_model=32, heads=4, length=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, length, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.1, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        return self.head(self.norm(self.encoder(x)))


def fill(model, seed):
    """Sets every parameter and running statistic from NumPy's PCG64 (uniform draws: integer
    arithmetic and one scaling), so the exported bytes do not depend on which vectorised path
    PyTorch's own random functions take on this CPU. Weights are U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    as PyTorch's default; norm scales 1 + U(-0.1, 0.1); biases and shifts U(-0.1, 0.1). Every
    tensor differs from every other, which also keeps the exporter from merging equal
    initializers behind Identity nodes (it would tie parameters PyTorch trains apart)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and not name.startswith("pos"):
                bound = 1.0 / np.sqrt(np.prod(p.shape[1:]))
                values = rng.uniform(-bound, bound, p.shape)
            elif name.endswith("weight"):
                values = 1.0 + rng.uniform(-0.1, 0.1, p.shape)
            else:
                values = rng.uniform(-0.1, 0.1, p.shape)
            p.copy_(torch.from_numpy(values.astype(np.float32)))
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, b.shape).astype(np.float32)))
            elif name.endswith("running_var"):
                b.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, b.shape).astype(np.float32)))
    return model


TORCHVISION = ["resnet18", "mobilenet_v2", "efficientnet_b0"]


def models():
    """(name, module, example input, input name, output name) of every model."""
    import torchvision
    rng = np.random.default_rng(5)
    images = rng.uniform(-1.0, 1.0, (4, 1, 28, 28)).astype(np.float32)
    tokens = rng.integers(0, 64, size=(4, 16)).astype(np.int64)
    colour = rng.uniform(-1.0, 1.0, (2, 3, 32, 32)).astype(np.float32)
    return [("lenet5", fill(LeNet5(), 0), images, "images", "logits"),
            ("mlp_bn", fill(mlp_bn(), 1), images, "images", "logits"),
            ("resnet_small", fill(ResNetSmall(), 2), images, "images", "logits"),
            ("transformer", fill(Transformer(), 3), tokens, "tokens", "logits")] + [
            (name, fill(getattr(torchvision.models, name)(weights=None), 10 + i), colour, "images", "logits")
            for i, name in enumerate(TORCHVISION)]


def export(model, example, input_name, output_name):
    model.eval()
    buffer = io.BytesIO()
    torch.onnx.export(model, (torch.from_numpy(example),), buffer, opset_version=OPSET, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=[input_name], output_names=[output_name],
                      dynamic_axes={input_name: {0: "batch"}, output_name: {0: "batch"}})
    return buffer.getvalue()


def main(argv):
    if len(argv) < 2 or len(argv) > 3 or (len(argv) == 3 and argv[2] != "--check"):
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name, model, example, input_name, output_name in models():
        data = export(model, example, input_name, output_name)
        if len(argv) == 3 and export(model, example, input_name, output_name) != data:
            sys.exit(f"export_models: {name}: two exports of the same model differ")
        for path, payload in ((f"{out}/{name}.onnx", data), (f"{out}/{name}.input.npy", None)):
            tmp = path + ".tmp"
            if payload is None:
                with open(tmp, "wb") as f:
                    np.save(f, example)
            else:
                with open(tmp, "wb") as f:
                    f.write(payload)
            os.replace(tmp, path)
        print(f"export_models: {name}.onnx ({len(data)} bytes)")


if __name__ == "__main__":
    main(sys.argv)
