"""The passwords of URLs in text, found by the URL's structure: the one
masking the reports, ``--show-apps`` and ``celerylint doctor`` use.

A URL is ``scheme://authority...`` (the scheme a letter, then letters,
digits, ``+``, ``-`` and ``.``).  Its authority ends at the first ``/``,
``?`` or ``#``, as ``urllib.parse.urlsplit`` reads it, or where quoted text
ends (whitespace, a quote); its userinfo ends at the authority's *last*
``@``, as urlsplit, redis-py and kombu take it, so an unencoded ``@`` or
``;`` in a password is masked with the rest; the password is what follows
the userinfo's first ``:``.  ``redis://:s3cr@t@host:6379/0`` is
``redis://:****@host:6379/0``.

One pass over the text, no backtracking regular expression: time is linear
in the length of the text, whatever it holds.  Only the standard library.
"""

from __future__ import annotations

import re

MASK = "****"

_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
# where an authority ends: a single character class, searched once from the authority's start
_AUTHORITY_END = re.compile(r"[/?#\s'\"]")


def password_spans(text: str) -> list[tuple[int, int]]:
    """Where the passwords of the URLs in ``text`` are, as ``(start, end)``
    offsets, in order.  An empty password is no span."""
    spans: list[tuple[int, int]] = []
    done = 0  # nothing before this offset is looked at again
    while True:
        sep = text.find("://", done)
        if sep < 0:
            return spans
        start = sep
        while start > done and text[start - 1] in _SCHEME:
            start -= 1
        while start < sep and not text[start].isalpha():  # a scheme starts with a letter
            start += 1
        authority = sep + 3
        if start == sep or not text[start].isascii():
            done = authority
            continue
        end_match = _AUTHORITY_END.search(text, authority)
        end = end_match.start() if end_match else len(text)
        if text.startswith("://", end - 1) and end - 1 > authority:
            # the next URL of a list (``sentinel://h1;sentinel://h2``): this authority ends before its scheme
            end -= 1
            while end > authority and text[end - 1] in _SCHEME:
                end -= 1
        at = text.rfind("@", authority, end)
        if at >= 0:
            colon = text.find(":", authority, at)
            if 0 <= colon < at - 1:
                spans.append((colon + 1, at))
        done = max(end, authority)


def masked(text: str, mask: str = MASK) -> str:
    """``text`` with the password of every URL in it replaced by ``mask``."""
    spans = password_spans(text)
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts += [text[at:start], mask]
        at = end
    parts.append(text[at:])
    return "".join(parts)
