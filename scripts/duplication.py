"""Count duplicated code in a Python tree: pairs of places that share six or more lines of the same shape.

A line's shape is its tokens with every name that is not a keyword written ``N``, every string (docstrings and
f-strings included) ``S`` and every number ``0``; comments, blank lines and indentation do not count, a multi-line
token (a docstring) counts as the one line it starts on. Signatures, imports and docstrings are NOT skipped: a
signature copied into a second interface is duplication too. Two places whose six-line windows have the same shapes
form a pair; the overlapping windows of one pair (window i ~ window j, i+1 ~ j+1, ...) merge into one run, and each
run counts once. Two kinds of window are patterns rather than copies and are left out: one found in more than
``--most-places`` places (8, as the workplace ``duplicates`` tool), and one with more than ``--most-thin`` (2) thin
lines, a thin line having at most four tokens (``N ,``, ``N = N ,``, ``S : S ,``, ``)``, ``return N``): six
keyword arguments or six dictionary keys in a row are a list, not logic. Signatures, imports and docstrings count
like any other line.

Usage: ``python scripts/duplication.py [ROOT ...] [--window 6] [--list N]`` (``make duplication``); prints
``duplication: P pairs, L lines of src, R pairs per 1,000 lines`` (L counts every line of the ``.py`` files read),
and with ``--list N`` the N longest runs first. Exits 0; it measures, it does not judge.
"""

from __future__ import annotations

import argparse
import io
import keyword
import tokenize
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


@dataclass(frozen=True)
class Place:
    """A file and the index of a shaped line in it (an index into that file's shaped lines, not a line number)."""

    file: int
    index: int


@dataclass(frozen=True)
class Run:
    """One pair of places: ``length`` shaped lines from ``a`` equal to as many from ``b`` (``length`` >= window)."""

    a: Place
    b: Place
    length: int


def shape(token: tokenize.TokenInfo) -> str:
    """The normalised spelling of one token: ``N`` for a non-keyword name, ``S`` for a string, ``0`` for a number."""
    if token.type == tokenize.NAME:
        return token.string if keyword.iskeyword(token.string) else "N"
    if token.type == tokenize.STRING:
        return "S"
    if token.type == tokenize.NUMBER:
        return "0"
    return token.string


def shaped_lines(source: str) -> list[tuple[int, str]]:
    """``(line number, shape)`` for every line of ``source`` that holds a token, in order.

    A token belongs to the line it starts on. Raises ``tokenize.TokenError`` or ``SyntaxError`` on a file that
    does not tokenize.
    """
    lines: dict[int, list[str]] = defaultdict(list)
    inside_fstring = 0  # Python 3.12+ splits an f-string into tokens: it stays one string, as on 3.11
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == FSTRING_START:
            if not inside_fstring:
                lines[token.start[0]].append("S")
            inside_fstring += 1
        elif token.type == FSTRING_END:
            inside_fstring -= 1
        elif token.type not in SKIPPED and not inside_fstring:
            lines[token.start[0]].append(shape(token))
    return [(number, " ".join(tokens)) for number, tokens in sorted(lines.items())]


def python_files(roots: Iterable[Path]) -> list[Path]:
    """Every ``.py`` file below the roots, sorted, caches left out."""
    found: set[Path] = set()
    for root in roots:
        found.update(p for p in (root.rglob("*.py") if root.is_dir() else [root]) if "__pycache__" not in p.parts)
    return sorted(found)


THIN_TOKENS = 4


def thin(line: str) -> bool:
    """Whether a shaped line is thin: four tokens or fewer (a lone name, ``key=value,``, a bracket)."""
    return line.count(" ") < THIN_TOKENS


def runs(files: list[list[tuple[int, str]]], window: int, most_places: int, most_thin: int) -> Iterator[Run]:
    """Every run of ``window`` or more equal shaped lines between two places (a file with itself included).

    Two windows of one file that overlap are not a pair (a repeated line is not a copied block); a window with more
    than ``most_thin`` thin lines, or whose shape stands in more than ``most_places`` places, is a pattern and left out.
    """
    places: dict[tuple[str, ...], list[Place]] = defaultdict(list)
    for f, lines in enumerate(files):
        shapes = [s for _, s in lines]
        for i in range(len(shapes) - window + 1):
            shapes_here = tuple(shapes[i : i + window])
            if sum(map(thin, shapes_here)) <= most_thin:
                places[shapes_here].append(Place(f, i))
    pairs: set[tuple[Place, Place]] = set()
    for found in places.values():
        if len(found) < 2 or len(found) > most_places:
            continue
        for x, a in enumerate(found):
            for b in found[x + 1 :]:
                if a.file == b.file and b.index - a.index < window:
                    continue
                pairs.add((a, b))
    for a, b in pairs:
        if (Place(a.file, a.index - 1), Place(b.file, b.index - 1)) in pairs:
            continue  # the middle of a run already counted from its first window
        length = window
        while (Place(a.file, a.index + length - window + 1), Place(b.file, b.index + length - window + 1)) in pairs:
            length += 1
        yield Run(a, b, length)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, count, print the figure line (and the longest runs with ``--list``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, default=[Path("src")])
    parser.add_argument("--window", type=int, default=6, help="lines a pair must share (default 6)")
    parser.add_argument("--most-places", type=int, default=8, help="a shape in more places is a pattern (default 8)")
    parser.add_argument("--most-thin", type=int, default=2, help="thin lines a window may hold (default 2)")
    parser.add_argument("--list", type=int, default=0, metavar="N", help="also print the N longest runs")
    args = parser.parse_args(argv)

    paths = python_files(args.roots)
    sources = [p.read_text(encoding="utf-8") for p in paths]
    files = [shaped_lines(s) for s in sources]
    found = sorted(runs(files, args.window, args.most_places, args.most_thin), key=lambda r: -r.length)
    total = sum(len(s.splitlines()) for s in sources)
    rate = 1000 * len(found) / total if total else 0.0
    print(f"duplication: {len(found)} pairs, {total} lines of src, {rate:.1f} pairs per 1,000 lines")
    for run in found[: args.list]:
        first_a, last_a = files[run.a.file][run.a.index][0], files[run.a.file][run.a.index + run.length - 1][0]
        first_b, last_b = files[run.b.file][run.b.index][0], files[run.b.file][run.b.index + run.length - 1][0]
        print(f"{paths[run.a.file]}:{first_a}-{last_a} ~ {paths[run.b.file]}:{first_b}-{last_b} ({run.length} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
