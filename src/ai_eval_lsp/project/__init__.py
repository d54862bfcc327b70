"""A project: its settings, the registry of executors and the combined schema their kinds make,
its rules, and the summaries of its files."""
