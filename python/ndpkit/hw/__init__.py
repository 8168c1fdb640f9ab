"""Hardware as data: validated platform specs and the shipped presets."""

from ndpkit.hw.engine import Engine, EngineKind
from ndpkit.hw.host import Host
from ndpkit.hw.link import Link
from ndpkit.hw.loader import load_platform, preset_names, validate_platform
from ndpkit.hw.platform import Platform
from ndpkit.hw.storage import StorageDevice
from ndpkit.hw.switch import PcieSwitch, SwitchLayer

__all__ = [
    "Engine",
    "EngineKind",
    "Host",
    "Link",
    "PcieSwitch",
    "Platform",
    "StorageDevice",
    "SwitchLayer",
    "load_platform",
    "preset_names",
    "validate_platform",
]
