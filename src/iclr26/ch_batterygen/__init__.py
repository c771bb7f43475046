"""CH-BatteryGen: mechanism-constrained EV battery-pack data with faults, and the fault-diagnosis benchmark.

A pack of cells in series, each a Thevenin equivalent circuit with pybamm-derived parameters (NCM:
Chen2020 OCV, LFP: Prada2013 OCV with its flat plateau; R0/R1/C1 from pybamm's ECM tables), with
cell-to-cell variation, temperature, CC-CV charging, generated drive cycles and rests; faults injected in
one cell (self-discharge, high internal resistance, low capacity; 3 severities each). Output in the
released CH-BatteryGen schema and layout, plus a loader for that layout, and the paper's benchmark
(RF, SVM, LSTM, 1-D CNN; fault classification and grading; macro-F1 per chemistry x scenario).
"""

from ._benchmark import (
    CHANNELS,
    MODELS,
    TASKS,
    TaskResult,
    WindowSet,
    evaluate_task,
    macro_f1,
    make_model,
    make_windows,
    segment_channels,
    task_labels,
    vehicle_folds,
    window_features,
)
from ._cells import ChemistryParameters, chemistry_parameters
from ._generate import (
    FAULT_LEVELS,
    PACK_DESIGNS,
    Segment,
    VehicleData,
    VehicleSpec,
    build_pack,
    generate_fleet,
    make_fleet,
    simulate_vehicle,
)
from ._io import (
    BatteryDataset,
    SegmentRef,
    discover,
    load_dataset,
    load_labels,
    read_segment,
    validate_segment,
    write_labels,
    write_vehicle,
)
from ._pack import PackParameters, PackState, Trace, park, run_cccv, run_current, terminal_voltage
from ._schema import (
    BASE_COLUMNS,
    CATEGORIES,
    CHARGE_STATUS_CHARGING,
    CHARGE_STATUS_DRIVING_OR_STANDING,
    CHEMISTRIES,
    LABEL_COLUMNS,
    PRECISION,
    SCENARIOS,
    cell_columns,
    columns,
)

__all__ = [
    "BASE_COLUMNS",
    "CATEGORIES",
    "CHANNELS",
    "CHARGE_STATUS_CHARGING",
    "CHARGE_STATUS_DRIVING_OR_STANDING",
    "CHEMISTRIES",
    "FAULT_LEVELS",
    "LABEL_COLUMNS",
    "MODELS",
    "PACK_DESIGNS",
    "PRECISION",
    "SCENARIOS",
    "TASKS",
    "BatteryDataset",
    "ChemistryParameters",
    "PackParameters",
    "PackState",
    "Segment",
    "SegmentRef",
    "TaskResult",
    "Trace",
    "VehicleData",
    "VehicleSpec",
    "WindowSet",
    "build_pack",
    "cell_columns",
    "chemistry_parameters",
    "columns",
    "discover",
    "evaluate_task",
    "generate_fleet",
    "load_dataset",
    "load_labels",
    "macro_f1",
    "make_fleet",
    "make_model",
    "make_windows",
    "park",
    "read_segment",
    "run_cccv",
    "run_current",
    "segment_channels",
    "simulate_vehicle",
    "task_labels",
    "terminal_voltage",
    "validate_segment",
    "vehicle_folds",
    "window_features",
    "write_labels",
    "write_vehicle",
]
