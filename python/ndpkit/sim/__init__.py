"""The discrete-event simulator (Rust, `ndpkit._core`): what the closed-form models cannot see.

`simulate(platform, profile, config, options, sim)` returns a `Simulation` with the
`Estimate`'s figures plus utilisation, a delivered-bandwidth timeline and, on request, a
Chrome trace; `ndpkit.sim.sweep.sweep` runs it over a grid of points (`grid`: platforms,
apps, engines on, chunk sizes), on a thread per CPU this process may run on.
"""

from ndpkit.sim.options import SimOptions
from ndpkit.sim.simulation import Simulation, matching_basis, simulate

__all__ = ["SimOptions", "Simulation", "matching_basis", "simulate"]
