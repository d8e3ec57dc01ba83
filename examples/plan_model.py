"""Plan a model's SRAM from Python and save the report, JSON and chart.

    python examples/plan_model.py MODEL.tflite [SRAM_LIMIT]
"""

import sys

import matplotlib

matplotlib.use("Agg")

import tinyarena  # noqa: E402


def main(path, sram=None):
    plan = tinyarena.plan(path, sram=sram)
    problems = plan.validate()
    assert not problems, problems
    print(plan.table())
    plan.to_json("plan.json")
    plan.plot("allocation.png")
    print("wrote plan.json and allocation.png")
    return 0 if plan.fits else 2


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
