"""``tinyarena demo``: plan the bundled example network and write what a user looks at."""

import os

from .builder import demo_model
from .planner import plan as make_plan

DEMO_FILES = ("demo_model.tflite", "allocation.png", "report.txt", "plan.json")


def run_demo(output_dir):
    """Write the demo model, its allocation chart, text report and JSON plan to ``output_dir``."""
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
    print(text)
    print(f"\nwrote {', '.join(DEMO_FILES)} to {output_dir}/")
    return plan
