"""One file, end to end: read and triage, prefilter, the syntax guard, CPython's ``ast`` pass,
the libcst parse, the batched walk of every checker, positions and fix edits (``analysis`` drives it).
"""
