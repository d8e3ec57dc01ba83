"""``tinyarena demo``: plan the bundled example network and write what a user looks at, including
the C program that runs it (``c/``: ``model.h``, ``model.c``, kernels, harness, Makefile)."""

import os

from .builder import demo_model
from .codegen import compile as compile_model
from .planner import plan as make_plan

DEMO_FILES = ("demo_model.tflite", "allocation.png", "report.txt", "plan.json")
DEMO_C_DIR = "c"
DEMO_NAME = "demo"  # the generated API: tinyarena_demo_invoke(in, out)


def run_demo(output_dir):
    """Write the demo model, its allocation chart, text report, JSON plan and compiled C
    (``<output_dir>/c/``, for Cortex-M4 by default) to ``output_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(output_dir, exist_ok=True)
    model_path = os.path.join(output_dir, DEMO_FILES[0])
    with open(model_path, "wb") as f:
        f.write(demo_model())
    plan = make_plan(model_path)
    ax = plan.plot(os.path.join(output_dir, DEMO_FILES[1]))
    plt.close(ax.figure)
    text = plan.table()
    with open(os.path.join(output_dir, DEMO_FILES[2]), "w") as f:
        f.write(text + "\n")
    plan.to_json(os.path.join(output_dir, DEMO_FILES[3]))
    compiled = compile_model(plan, os.path.join(output_dir, DEMO_C_DIR), target="cortex-m4", name=DEMO_NAME)
    print(text)
    print(f"\nwrote {', '.join(DEMO_FILES)} to {output_dir}/")
    print(f"wrote the C program to {output_dir}/{DEMO_C_DIR}/ (tinyarena_{compiled.name}_invoke in model.h; "
          f"make TARGET=host|cortex-m3|cortex-m4|cortex-m7|cortex-m33|cortex-m55)")
    return plan
