"""The git checkout a run is in, for SARIF's ``versionControlProvenance``:
read from the ``.git`` files directly (no ``git`` process: it may be
missing, and a run starts no subprocess), so nothing fails outside git.

``.git`` may be a directory or a ``gitdir:`` file (worktrees, submodules);
refs are loose files or ``packed-refs``; the remote is ``origin`` (else the
first one) with any user name or token removed from its URL, an scp-like
``git@host:path`` written as ``ssh://git@host/path``.  Without a remote the
checkout's own ``file://`` URI stands for the repository."""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_SCP = re.compile(r"^([\w.-]+@)?([\w.-]+):(?!//)(.+)$")
MAX = 1 << 20


def _read(path: Path) -> str | None:
    try:
        if path.is_file() and path.stat().st_size <= MAX:
            return path.read_text("utf-8", "replace")
    except (OSError, ValueError):
        pass
    return None


def _gitdir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    text = _read(dot)
    if text and text.startswith("gitdir:"):
        target = Path(text[len("gitdir:"):].strip())
        target = target if target.is_absolute() else root / target
        return target if target.is_dir() else None
    return None


def _resolve(gitdir: Path, common: Path, ref: str) -> str | None:
    for _ in range(5):  # symbolic refs pointing at symbolic refs
        text = None
        for base in (gitdir, common):
            text = _read(base / ref)
            if text is not None:
                break
        if text is None:
            packed = _read(common / "packed-refs") or ""
            for line in packed.splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2 and parts[1].strip() == ref and _SHA.fullmatch(parts[0]):
                    return parts[0]
            return None
        text = text.strip()
        if _SHA.fullmatch(text):
            return text
        if not text.startswith("ref:"):
            return None
        ref = text[4:].strip()
    return None


def _remote(config: str) -> str | None:
    urls: dict[str, str] = {}
    section = None
    for raw in config.splitlines():
        line = raw.strip()
        header = re.match(r'^\[\s*remote\s+"([^"]*)"\s*\]', line)
        if header:
            section = header.group(1)
            continue
        if line.startswith("["):
            section = None
            continue
        match = re.match(r"^url\s*=\s*(.+)$", line)
        if section is not None and match and section not in urls:
            urls[section] = match.group(1).strip().strip('"')
    url = urls.get("origin") or next(iter(urls.values()), None)
    return _clean_url(url) if url else None


def _clean_url(url: str) -> str | None:
    from urllib.parse import urlsplit, urlunsplit

    scp = _SCP.match(url)
    if "://" not in url and scp:
        url = f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3)}"
    elif "://" not in url:
        path = Path(url)
        return path.resolve().as_uri() if path.is_absolute() else None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    user = "git@" if parts.scheme == "ssh" and parts.username == "git" else ""  # never a password or token
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, "", ""))


def provenance(root: Path) -> dict | None:
    """``{"repositoryUri", "revisionId"?, "branch"?}`` of the checkout at
    ``root``, or None when it is not one."""
    try:
        gitdir = _gitdir(root)
        if gitdir is None:
            return None
        common_text = _read(gitdir / "commondir")
        common = gitdir / common_text.strip() if common_text else gitdir
        head = (_read(gitdir / "HEAD") or "").strip()
        out = {"repositoryUri": _remote(_read(common / "config") or "") or root.resolve().as_uri()}
        if _SHA.fullmatch(head):
            out["revisionId"] = head
        elif head.startswith("ref:"):
            ref = head[4:].strip()
            revision = _resolve(gitdir, common, ref)
            if revision:
                out["revisionId"] = revision
            if ref.startswith("refs/heads/"):
                out["branch"] = ref[len("refs/heads/"):]
        return out
    except (OSError, ValueError, RuntimeError):
        return None
