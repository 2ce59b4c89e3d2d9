"""Regenerate quota_constructs/data/sagemaker_training_instance_types.txt from botocore.

The list is SageMaker's ``TrainingInstanceType`` enum in botocore's service model; the model
(``quota_constructs.model.check_instance_type``) accepts exactly these types. Run it after
upgrading botocore: ``python tools/gen_instance_types.py``; ``tests/unit/test_instance_types.py``
fails until the file matches the installed botocore.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import botocore
import botocore.session

TARGET = (
    Path(__file__).resolve().parents[1]
    / "quota_constructs"
    / "data"
    / "sagemaker_training_instance_types.txt"
)


def training_instance_types() -> list[str]:
    """The enum as botocore's SageMaker service model lists it."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    return list(model.shape_for("TrainingInstanceType").enum)


def render(types: list[str], generated: datetime.date) -> str:
    """The data file: a commented header (source, date), then one type per line."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    header = [
        "# SageMaker training instance types: the TrainingInstanceType enum of botocore's",
        f"# SageMaker service model (botocore {botocore.__version__}, sagemaker API "
        f"{model.api_version}).",
        f"# Generated {generated.isoformat()} by tools/gen_instance_types.py; regenerate after "
        "upgrading botocore.",
    ]
    return "\n".join([*header, *types]) + "\n"


def main() -> int:
    TARGET.write_text(render(training_instance_types(), datetime.date.today()), encoding="utf-8")
    print(f"wrote {TARGET} ({len(training_instance_types())} types)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
