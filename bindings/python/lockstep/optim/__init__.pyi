"""Type stubs of lockstep.optim."""
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from .. import Tensor
from . import lr_scheduler as lr_scheduler

_Params = Iterable[Union[Tensor, Tuple[str, Tensor], Dict[str, Any]]]

class Optimizer:
    lr: float
    @property
    def step_count(self) -> int: ...
    param_groups: List[Dict[str, Any]]
    defaults: Dict[str, Any]
    def step(self, closure: Optional[Callable[[], Any]] = ...) -> Any: ...
    def zero_grad(self, set_to_none: bool = ...) -> None: ...
    def state_dict(self) -> Dict[str, Any]: ...
    def load_state_dict(self, state: Dict[str, Any]) -> None: ...

class SGD(Optimizer):
    def __init__(self, params: _Params, lr: float = ..., momentum: float = ..., dampening: float = ...,
                 weight_decay: float = ..., nesterov: bool = ..., maximize: bool = ...) -> None: ...

class Adam(Optimizer):
    def __init__(self, params: _Params, lr: float = ..., betas: Tuple[float, float] = ..., eps: float = ...,
                 weight_decay: float = ..., amsgrad: bool = ..., maximize: bool = ...) -> None: ...

class AdamW(Adam): ...
