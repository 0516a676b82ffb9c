"""Example league files (TOML), shipped with the package so `referee bench league` finds its league."""
