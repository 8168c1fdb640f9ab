"""Analytic models: pure functions of (Platform, Profile, Configuration, Options)."""

from ndpkit.model.configuration import FULL_GEAR, HOST_ONLY, Configuration
from ndpkit.model.energy import Energy, StateTimes, efficiency_mb_per_j, price
from ndpkit.model.estimate import Estimate, estimate
from ndpkit.model.options import Options
from ndpkit.model.pipeline import Pipeline, engine_bandwidth, full_ndp_time_s, pipeline

__all__ = [
    "FULL_GEAR",
    "HOST_ONLY",
    "Configuration",
    "Energy",
    "Estimate",
    "Options",
    "Pipeline",
    "StateTimes",
    "efficiency_mb_per_j",
    "engine_bandwidth",
    "estimate",
    "full_ndp_time_s",
    "pipeline",
    "price",
]
