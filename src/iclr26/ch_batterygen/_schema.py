"""The released CH-BatteryGen format: columns, units, precision, folder layout and labels.

Facts taken from the authors' dataset repository (``CH-BatteryGen/dataset-warehouse``, README, v1.0):

========================  =============================================  ======  =========
column                    meaning                                        unit    precision
========================  =============================================  ======  =========
``TIME``                  time                                           s       1
``CHARGE_STATUS``         1 = charging, 3 = driving or standing          --      1
``SUM_VOLTAGE``           total (pack) voltage                           V       0.1
``SUM_CURRENT``           total (pack) current                           A       0.1
``SOC``                   state of charge (BMS)                          %       1
``MAX_CELL_VOLT``         maximum cell voltage                           V       0.001
``MIN_CELL_VOLT``         minimum cell voltage                           V       0.001
``MAX_TEMP``              maximum temperature                            degC    1
``MIN_TEMP``              minimum temperature                            degC    1
``VOLT_1`` .. ``VOLT_N``  cell voltage n                                 V       0.001
========================  =============================================  ======  =========

Layout (the release's README does not spell it out; this is the layout of the v1.0 download as its users
describe it, e.g. the loaders in ``sapiyihao/soc-sohANDfaultFORCH-BatteryGen``, 19,478 CSV files of 1,000
vehicles): ``ROOT/<LFP|NCM>/<category>/<vin>/<vin>_<charge|discharge>_<k>.csv``
with ``category`` in ``normal, low_capacity, high_resistance, self_discharge``; sampling about 10 s;
``SUM_CURRENT < 0`` while charging, ``> 0`` while discharging. Per-vehicle fault details (severity, fault
cell id, fault value) are released as a table (``faults details - LFP batteries.xlsx``); our generator
writes the same fields (plus the chemistry, the pack and the generator's seed) as ``faults_details.csv``
at the root.
"""

from __future__ import annotations

import re

CHEMISTRIES = ("LFP", "NCM")
#: Fault classes in the order used for integer labels (normal first).
CATEGORIES = ("normal", "self_discharge", "high_resistance", "low_capacity")
SCENARIOS = ("charge", "discharge")
SEVERITIES = (1, 2, 3)

CHARGE_STATUS_CHARGING = 1
CHARGE_STATUS_DRIVING_OR_STANDING = 3

BASE_COLUMNS = (
    "TIME",
    "CHARGE_STATUS",
    "SUM_VOLTAGE",
    "SUM_CURRENT",
    "SOC",
    "MAX_CELL_VOLT",
    "MIN_CELL_VOLT",
    "MAX_TEMP",
    "MIN_TEMP",
)
#: Decimal places of each column in the release (cell voltages: 3).
PRECISION = {
    "TIME": 0,
    "CHARGE_STATUS": 0,
    "SUM_VOLTAGE": 1,
    "SUM_CURRENT": 1,
    "SOC": 0,
    "MAX_CELL_VOLT": 3,
    "MIN_CELL_VOLT": 3,
    "MAX_TEMP": 0,
    "MIN_TEMP": 0,
}
CELL_VOLTAGE_DECIMALS = 3
#: Columns of the per-vehicle label table (``faults_details.csv``).
LABEL_COLUMNS = (
    "vin",
    "chemistry",
    "category",
    "severity",
    "fault_cell_id",
    "fault_value",
    "fault_unit",
    "n_cells",
    "capacity_ah",
    "n_cycles",
    "seed",
)
LABEL_FILE = "faults_details.csv"

_VOLT_RE = re.compile(r"^VOLT_(\d+)$")
_FILE_RE = re.compile(r"^(?P<vin>.+)_(?P<scenario>discharge|charge)_(?P<k>\d+)\.(?P<ext>csv|parquet)$")


def cell_columns(n_cells: int) -> list[str]:
    """``["VOLT_1", ..., "VOLT_<n_cells>"]``."""
    return [f"VOLT_{i}" for i in range(1, n_cells + 1)]


def columns(n_cells: int) -> list[str]:
    """All columns of one segment file for a pack of ``n_cells`` cells in series, in release order."""
    return [*BASE_COLUMNS, *cell_columns(n_cells)]


def volt_columns_of(names) -> list[str]:
    """The ``VOLT_n`` columns among ``names``, sorted by ``n``."""
    found = [(int(m.group(1)), c) for c in names if (m := _VOLT_RE.match(str(c)))]
    return [c for _, c in sorted(found)]


def segment_filename(vin: str, scenario: str, k: int, ext: str = "csv") -> str:
    """``<vin>_<scenario>_<k>.<ext>`` (``k`` counts from 1, per scenario)."""
    return f"{vin}_{scenario}_{k}.{ext}"


def parse_segment_filename(name: str) -> tuple[str, str, int] | None:
    """``(vin, scenario, k)`` from a segment file name, or ``None`` if it is not one.

    ``discharge`` is matched before ``charge`` (the word contains it).
    """
    m = _FILE_RE.match(name)
    if m is None:
        return None
    return m.group("vin"), m.group("scenario"), int(m.group("k"))
