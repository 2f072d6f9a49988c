"""torch.nn.utils' gradient clipping."""
from .. import _C
from .._tensor import Tensor, tensor


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    """Scales every gradient by max_norm / (norm + 1e-6) when the global L2 norm exceeds max_norm
    (the norm: each gradient's canonical sum of squares, combined pairwise in order; docs/numerics.md).
    Returns the norm before clipping as a 0-d tensor."""
    if norm_type != 2.0:
        from .._errors import ArgumentError
        raise ArgumentError("clip_grad_norm_: only norm_type=2.0 is supported, got %r" % (norm_type,))
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return tensor(_C.clip_grad_norm(params, float(max_norm)))
