"""The whole run: discovery and ignore files, the cache and stat index, the worker pool, the
project phase, the fix loop and writing files (``runner`` drives it).
"""
