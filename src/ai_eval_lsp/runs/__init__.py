"""Runs of cases files: grading (in one process or in case workers), the SQLite store of result
rows, and the run-complete subscribers."""
