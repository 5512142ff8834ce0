"""``coderlm``: the command line. ``main`` holds the command table; each command is one module
(``train``, ``predict``, ``evaluate``, ``split``, ``collect``, ``profile``, ``quickstart``) that
parses its flags, calls the library and prints. ``flags`` makes flags from where options are
declared (dataclass fields, signatures) and reads YAML configs."""

from coderlm.cli.main import main

__all__ = ["main"]
