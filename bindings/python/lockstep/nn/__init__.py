"""lockstep.nn: layers and models with PyTorch's names, parameter names and initialisation."""
from .. import _C
from ._module import Module, Parameter
from .modules import (AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, ChannelShuffle, Conv2d, ConvTranspose2d,
                      Dropout,
                      Embedding, Flatten, GELU, Hardsigmoid, Hardswish, Hardtanh, Identity, LayerNorm, Linear,
                      LogSoftmax, MaxPool2d, ModuleList, ReLU, ReLU6, Sequential, Sigmoid, SiLU, Softmax,
                      StochasticDepth, Tanh)
from .recurrent import GRU, LSTM, RNN
from .transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from . import functional, utils


def seed_dropout_streams(model, seed):
    """Reseeds every Dropout's stream to "dropout/<module path>" under ``seed``, offset 0 (and the
    random call sites of models converted through aten ops, named by the same rule)."""
    _C.nn.seed_dropout_streams(model, seed)
    for m in model.modules():
        reseed = getattr(type(m), "seed_streams", None)
        if reseed is not None:
            reseed(m, seed)


__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "Identity", "Linear", "Conv2d", "ConvTranspose2d", "MaxPool2d",
           "AvgPool2d", "ReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "Flatten",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding", "MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "functional", "utils", "seed_dropout_streams", "ReLU6", "Hardtanh", "SiLU",
           "Hardsigmoid", "Hardswish", "AdaptiveAvgPool2d", "ChannelShuffle", "StochasticDepth", "RNN", "LSTM", "GRU"]
