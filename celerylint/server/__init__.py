"""``celerylint server``: a Language Server Protocol server over stdio (pygls).

- ``settings``: the project's configuration for each file, and the editor's overrides;
- ``engine``: the one adapter to the lint engine (the project held in memory, buffers as an overlay);
- ``diagnostics``: findings as diagnostics, positions in the client's units;
- ``actions``, ``hover``: code actions (fixes, noqa, fix all) and the rule's documentation;
- ``protocol``: the server, its worker thread and publishing; ``features``: the LSP methods.

pygls is an optional dependency (``pip install 'celerylint[server]'``).
"""

from __future__ import annotations

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
def command() -> None:
    """Run the language server over stdio (for editors; see docs/editors.md)."""
    try:
        from .features import serve
    except ImportError as exc:
        raise click.ClickException(f"{exc}: the server needs pygls: pip install 'celerylint[server]'") from None
    serve()
