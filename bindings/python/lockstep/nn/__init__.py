"""lockstep.nn: layers and models with PyTorch's names, parameter names and initialisation."""
from .. import _C
from ._module import Module, Parameter
from .modules import (AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Embedding, Flatten, GELU, Identity,
                      LayerNorm, Linear, LogSoftmax, MaxPool2d, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh)
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


__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "Identity", "Linear", "Conv2d", "MaxPool2d",
           "AvgPool2d", "ReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "Flatten",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding", "MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "functional", "utils", "seed_dropout_streams"]
