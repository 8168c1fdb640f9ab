"""ndpkit: run, model and plan near-data processing (NDP).

>>> from ndpkit.hw import load_platform
>>> from ndpkit.profile import load_profile
>>> from ndpkit.model import estimate
>>> e = estimate(load_platform("rfns"), load_profile("he"))
>>> e.bottleneck
'ndp2cpu'
"""

__version__ = "0.1.0"
