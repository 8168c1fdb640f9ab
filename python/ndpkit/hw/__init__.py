"""Hardware as data: validated platform specs and the shipped presets."""

from ndpkit.hw.cell import PublicCell, Reconfiguration
from ndpkit.hw.engine import Engine, EngineKind
from ndpkit.hw.host import Host
from ndpkit.hw.interfaces import interface_names, interface_spec
from ndpkit.hw.link import Link
from ndpkit.hw.loader import load_platform, preset_names, validate_platform
from ndpkit.hw.platform import Platform
from ndpkit.hw.storage import Controller, DeviceDram, StorageDevice
from ndpkit.hw.switch import PcieSwitch, SwitchLayer
from ndpkit.hw.writer import platform_toml

__all__ = [
    "Controller",
    "DeviceDram",
    "Engine",
    "EngineKind",
    "Host",
    "Link",
    "PcieSwitch",
    "Platform",
    "PublicCell",
    "Reconfiguration",
    "StorageDevice",
    "SwitchLayer",
    "interface_names",
    "interface_spec",
    "load_platform",
    "platform_toml",
    "preset_names",
    "validate_platform",
]
