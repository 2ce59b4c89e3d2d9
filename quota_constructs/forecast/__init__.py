"""Start-time forecasts of waiting jobs and the what-if of a job not yet submitted.

Pure: a :class:`QueueState` (plain records; the runtime reads one from a live queue, the
backtest from a recorded history) in, a :class:`Forecast` or :class:`WhatIf` out, computed by
running the scheduling core that the emulator and the simulator share forward many times with
sampled run times (:mod:`~quota_constructs.forecast.engine`; run-time estimates:
:mod:`~quota_constructs.forecast.runtimes`). See docs/runtime.md, "Forecasts".
"""

from __future__ import annotations

from quota_constructs.forecast.arrivals import ArrivalModel
from quota_constructs.forecast.calibration import (
    Calibration,
    CalibrationError,
    Judged,
    default_calibration,
    fit_calibration,
    load_calibration,
)
from quota_constructs.forecast.engine import (
    DEFAULT_HORIZON_S,
    WHAT_IF_ID,
    Forecast,
    JobForecast,
    Preempt,
    WhatIf,
    forecast,
    never_reason,
    what_if,
)
from quota_constructs.forecast.inputs import (
    RUNTIME_HINT_TAG,
    LiveJob,
    PastRun,
    QueueState,
    runtime_hint,
)

__all__ = [
    "DEFAULT_HORIZON_S",
    "RUNTIME_HINT_TAG",
    "WHAT_IF_ID",
    "ArrivalModel",
    "Calibration",
    "CalibrationError",
    "Forecast",
    "JobForecast",
    "Judged",
    "LiveJob",
    "PastRun",
    "Preempt",
    "QueueState",
    "WhatIf",
    "default_calibration",
    "fit_calibration",
    "forecast",
    "load_calibration",
    "never_reason",
    "runtime_hint",
    "what_if",
]
