"""The ``[tool.celerylint]`` configuration: the frozen ``Settings``, reading one file's table,
``extend`` chains and the suggestions its errors make.
"""
