"""iclr26: faithful, fast implementations of 38 ICLR 2026 research systems.

Each system lives in its own subpackage (``iclr26.disco``, ``iclr26.graphuniverse``, ...), named after
its slug with ``-`` replaced by ``_``. The core modules here (catalogue, claims, store, report, CLI)
never import a system's heavy dependencies until that system runs.
"""

__version__ = "0.1.0"
