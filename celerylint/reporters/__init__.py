"""Report formats.  Reporters see plain findings, never CST nodes."""
