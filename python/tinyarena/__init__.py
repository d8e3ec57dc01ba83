"""tinyarena: plan SRAM for int8 TFLite models on microcontrollers.

The pipeline, one module per stage (each wraps the C++ core in ``_core``):

- ``tinyarena.reader``     -- ``load_model``: .tflite file or bytes -> ``Graph`` (the IR)
- ``tinyarena.transforms`` -- PAD folding, zero-copy concatenation/splitting, reordering
- ``tinyarena.liveness``   -- buffers and their ``[first, last]`` op intervals
- ``tinyarena.allocation`` -- the allocation problem, allocators, lower bound, validator
- ``tinyarena.planner``    -- ``plan``: all of the above -> ``Plan`` (table, JSON, chart)
- ``tinyarena.tiling``     -- row-streamed and patch segments: ``search``, ``tile``, ``sweep``
- ``tinyarena.training``   -- ``plan_training``: the memory plan of one sparse-update training step
- ``tinyarena.codegen``    -- ``compile``: a plan -> C sources, Makefile and kernel library
- ``tinyarena.verify``     -- ``verify``: build and run the C, compare every byte with TFLite
  (needs the TFLite interpreter: ``pip install 'tinyarena[verify]'``)
- ``tinyarena.training_codegen`` -- ``compile_training``, ``run_training``, ``verify_training``: the
  on-device training step as C, run on a data set, checked against ``training_reference`` (float64)
- ``tinyarena.builder``    -- write int8 TFLite models (layers and ready architectures)
- ``tinyarena.cli``        -- the ``tinyarena`` command

Quick start::

    import tinyarena
    plan = tinyarena.plan("model.tflite", sram="256K")
    print(plan.table())
    plan.plot("allocation.png")
    tinyarena.compile(plan, "out/")          # C sources; make -C out TARGET=host
    print(tinyarena.verify("model.tflite").summary())
"""

from ._core import ModelError, UnsupportedError
from .allocation import Buffer, Problem, Solution
from .codegen import compile  # noqa: A004 -- the product's verb
from .planner import Plan, plan
from .reader import load_model
from .sizes import parse_size
from .tiling import sweep
from .verify import verify  # tinyarena.verify is the function; `from tinyarena.verify import X` reads the module

__all__ = [
    "Buffer",
    "ModelError",
    "Plan",
    "Problem",
    "Solution",
    "UnsupportedError",
    "compile",
    "load_model",
    "parse_size",
    "plan",
    "sweep",
    "verify",
]
__version__ = "0.1.0"
