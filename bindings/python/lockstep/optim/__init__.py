"""lockstep.optim: SGD, Adam and AdamW with PyTorch's arguments (core/optim/optimizer.h).

``params`` is what PyTorch takes: an iterable of tensors (named "0", "1", ... in the optimizer's
state), of (name, tensor) pairs (``model.named_parameters()``: the state is then named after the
parameters), or of group dicts ``{"params": [...], "weight_decay": wd}``. One learning rate serves
every group; ``lr`` and ``param_groups[i]["lr"]`` read and set it. Updates run the engine's
kernels, one rounded operation per line (docs/numerics.md), so a step has the same bits everywhere.
"""
from .. import _C
from .._errors import ArgumentError
from .._tensor import Tensor
from . import lr_scheduler


class _Group(dict):
    """A parameter group as PyTorch shows it; setting "lr" sets the optimizer's one learning rate."""

    def __init__(self, optimizer, values):
        super().__init__(values)
        self._optimizer = optimizer

    def __getitem__(self, key):
        return self._optimizer.lr if key == "lr" else super().__getitem__(key)

    def __setitem__(self, key, value):
        if key == "lr":
            self._optimizer.lr = value
        elif key in self:
            raise ArgumentError("param_groups: only 'lr' can be changed after construction, not %r" % (key,))
        super().__setitem__(key, value)


def _named(params, start):
    out = []
    for i, p in enumerate(params):
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
            name, p = p
        else:
            name = str(start + i)
        if not isinstance(p, Tensor):
            raise TypeError("optimizer: expected tensors (or (name, tensor) pairs), got %s" % type(p).__name__)
        out.append((name, p))
    return out


def _groups(params, weight_decay, where):
    """[(named params, weight decay), ...] from PyTorch's forms of ``params``."""
    if isinstance(params, Tensor):
        raise TypeError("%s: params must be an iterable of tensors, got a tensor" % where)
    items = list(params)
    if not items:
        raise ArgumentError("%s: got an empty parameter list" % where)
    if not all(isinstance(g, dict) for g in items):
        return [(_named(items, 0), float(weight_decay))]
    groups, start = [], 0
    for g in items:
        unknown = set(g) - {"params", "weight_decay"}
        if unknown:
            raise ArgumentError("%s: per-group %s are not supported (only params and weight_decay)"
                                % (where, ", ".join(sorted(unknown))))
        named = _named(list(g["params"]), start)
        start += len(named)
        groups.append((named, float(g.get("weight_decay", weight_decay))))
    return groups


def _finish(self, groups, defaults):
    self.param_groups = [_Group(self, dict(defaults, params=[p for _, p in named], weight_decay=wd))
                         for named, wd in groups]
    self.defaults = defaults


class _OptimizerMethods:
    def step(self, closure=None):
        """One update of every parameter that has a gradient."""
        loss = None
        if closure is not None:
            loss = closure()
        self._step()
        return loss

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient."""
        self._zero_grad()

    def state_dict(self):
        """{"state": {name: tensor}, "step": steps taken} (exp_avg.<name>, momentum_buffer.<name>, ...)."""
        return {"state": dict(self._state()), "step": self.step_count}

    def load_state_dict(self, state):
        self._load_state(list(state["state"].items()), int(state["step"]))


class SGD(_OptimizerMethods, _C.optim.SGD):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (PyTorch's
    update rule)."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False):
        if maximize:
            raise ArgumentError("SGD: maximize is not supported")
        groups = _groups(params, weight_decay, "SGD")
        super().__init__(groups, float(lr), float(momentum), float(dampening), bool(nesterov))
        _finish(self, groups, dict(lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov))


class Adam(_OptimizerMethods, _C.optim.Adam):
    """Adam (L2 weight decay added to the gradient, as torch.optim.Adam)."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 maximize=False):
        name = type(self).__name__
        if amsgrad or maximize:
            raise ArgumentError("%s: amsgrad and maximize are not supported" % name)
        beta1, beta2 = betas
        groups = _groups(params, weight_decay, name)
        super().__init__(groups, float(lr), float(beta1), float(beta2), float(eps), self._decoupled)
        _finish(self, groups, dict(lr=lr, betas=tuple(betas), eps=eps))


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01), as torch.optim.AdamW."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


Optimizer = _C.optim.Optimizer
for _cls in (SGD, Adam, AdamW):
    _cls.__module__ = "lockstep.optim"
__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
