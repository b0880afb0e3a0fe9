"""Benchmarks for mindbank: LoCoMo evidence recall and retain throughput (run ``python -m bench --help``).

Results are written as JSON under ``bench/results/``; docs/benchmarks.md describes the figures.
"""
