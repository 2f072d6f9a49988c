"""lockstep.nn: layers and models with PyTorch's names, parameter names and initialisation."""
from .. import _C
from ._module import Module, Parameter
from .modules import (AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Embedding, Flatten, GELU, Identity,
                      LayerNorm, Linear, LogSoftmax, MaxPool2d, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from . import functional, utils

seed_dropout_streams = _C.nn.seed_dropout_streams

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "Identity", "Linear", "Conv2d", "MaxPool2d",
           "AvgPool2d", "ReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "Flatten",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding", "MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "functional", "utils", "seed_dropout_streams"]
