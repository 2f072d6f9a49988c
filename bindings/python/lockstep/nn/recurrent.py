"""RNN, LSTM and GRU with PyTorch's signatures, parameter names (weight_ih_l0, ..., _reverse) and
return values (core/nn/recurrent.h computes them step by step with lockstep's ops)."""
from .. import _C
from .._errors import ArgumentError
from ._module import extend
from .modules import _factory, _unsupported

C = _C.nn


def _checked(where, dropout, proj_size=0):
    _unsupported(where, dropout=(float(dropout), 0.0), proj_size=(proj_size, 0))


class _Common:
    """What the three classes share (copied onto each below: extend() copies a body's own names)."""
    input_size = property(lambda self: self._options()[0])
    hidden_size = property(lambda self: self._options()[1])
    num_layers = property(lambda self: self._options()[2])
    bias = property(lambda self: self._options()[3])
    batch_first = property(lambda self: self._options()[4])
    bidirectional = property(lambda self: self._options()[5])

    def __call__(self, *args, **kwargs):  # forward's tuple, also for one tensor
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        return "%d, %d, num_layers=%d, batch_first=%s, bidirectional=%s" % (
            self.input_size, self.hidden_size, self.num_layers, self.batch_first, self.bidirectional)


@extend(C.RNN)
class RNN:
    """torch.nn.RNN (tanh or relu): forward(input, h0=None) returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, generator=None):
        _factory("RNN", device, dtype)
        _checked("RNN", dropout)
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError("RNN: nonlinearity must be 'tanh' or 'relu', got %r" % (nonlinearity,))
        C.RNN._cinit(self, input_size, hidden_size, num_layers, nonlinearity == "relu", bool(bias), bool(batch_first),
                     bool(bidirectional), generator)

    def forward(self, input, hx=None):
        output, h_n, _ = self._run(input, hx, None)
        return output, h_n


@extend(C.LSTM)
class LSTM:
    """torch.nn.LSTM (gates i, f, g, o): forward(input, (h0, c0)=None) returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, generator=None):
        _factory("LSTM", device, dtype)
        _checked("LSTM", dropout, proj_size)
        C.LSTM._cinit(self, input_size, hidden_size, num_layers, bool(bias), bool(batch_first), bool(bidirectional),
                      generator)

    def forward(self, input, hx=None):
        h0, c0 = (None, None) if hx is None else hx
        output, h_n, c_n = self._run(input, h0, c0)
        return output, (h_n, c_n)


@extend(C.GRU)
class GRU:
    """torch.nn.GRU (gates r, z, n; the reset gate applied after the recurrent product, as PyTorch):
    forward(input, h0=None) returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, generator=None):
        _factory("GRU", device, dtype)
        _checked("GRU", dropout)
        C.GRU._cinit(self, input_size, hidden_size, num_layers, bool(bias), bool(batch_first), bool(bidirectional),
                     generator)

    def forward(self, input, hx=None):
        output, h_n, _ = self._run(input, hx, None)
        return output, h_n


for _cls in (C.RNN, C.LSTM, C.GRU):
    for _name, _value in vars(_Common).items():
        if _name in ("__call__", "extra_repr") or not _name.startswith("__"):
            setattr(_cls, _name, _value)
