import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import Tensor
from .nn import Module

class Io(NamedTuple):
    name: str
    dtype: str
    shape: Optional[Tuple[Union[int, str], ...]]

class OnnxModel(Module):
    @property
    def inputs(self) -> List[Io]: ...
    @property
    def outputs(self) -> List[Io]: ...
    @property
    def opset(self) -> int: ...
    @property
    def producer(self) -> str: ...
    def run(self, inputs: Union[Dict[str, Union[Tensor, np.ndarray]], Sequence[Union[Tensor, np.ndarray]]]) -> Dict[str, Tensor]: ...

def load(model: Union[str, os.PathLike, bytes, bytearray, memoryview], seed: int = ...) -> OnnxModel: ...
def from_torch(module: Any, example_inputs: Any, seed: int = ...) -> OnnxModel: ...
