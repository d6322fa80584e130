"""The command line: the click commands (``commands``) and what only they use.
"""
