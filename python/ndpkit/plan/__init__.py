"""Planning: how many engines to power on, the SSD-to-engine mapping, and the saving."""

from ndpkit.plan.mapping import Mapping, activate, minimum_engines
from ndpkit.plan.optimize import optimise
from ndpkit.plan.reconfigure import (
    Plan,
    configuration_of,
    engines_allowed,
    plan,
    required_engines,
)
from ndpkit.plan.splits import SplitComparison, compare_splits

__all__ = [
    "Mapping",
    "Plan",
    "SplitComparison",
    "activate",
    "compare_splits",
    "configuration_of",
    "engines_allowed",
    "minimum_engines",
    "optimise",
    "plan",
    "required_engines",
]
