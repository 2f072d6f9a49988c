#!/usr/bin/python3
"""Exports the MNIST LeNet-5 (PyTorch's layers, the shapes of lockstep's) to ONNX for ONNX Runtime
Web's inference benchmark (bench/wasm/lenet_ort.mjs): batch 100, opset 13.

  /usr/bin/python3 bench/peers/export_lenet_onnx.py OUT.onnx
"""
import sys

import torch

nn = torch.nn
model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                      nn.Linear(84, 10)).eval()
torch.onnx.export(model, torch.randn(100, 1, 28, 28), sys.argv[1], opset_version=13, input_names=["x"],
                  output_names=["logits"])
