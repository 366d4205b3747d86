"""NumPy ufunc inner loops called directly on small arrays (typed Cython module)."""
from typing import Optional

import numpy as np

UFUNCS: tuple[np.ufunc, ...]
MAX_SIZE: int

def call(ufunc: object, a: np.ndarray, b: Optional[np.ndarray] = ..., *,
         scalar: Optional[float] = ..., reflected: bool = ...) -> Optional[np.ndarray]: ...
