"""Benchmarks behind `referee bench`: they measure, the CLI prints."""
