"""card-referee: the engine room (rules engines, and the referee that runs one match between bot programs)."""

__version__ = "0.1.0"
