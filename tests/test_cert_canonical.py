"""The checker's own canonical text of a library (`pcsc.certify.check.canonical_library`)
against the compiler's (`pcsc fmt`, which a policy's pin hashes): the same on every
shipped library, on random re-layouts of them (spacing, line breaks, indentation,
blank lines, `;`, CRLF, a lone CR, a byte order mark), on comments added or moved, and
a change of any token changes both alike."""

from __future__ import annotations

import hashlib
import random
import re
import tomllib
from pathlib import Path

import pytest

from pcsc.certify.check import library as certcheck
from pcsc.compiler.session import library_hash
from pcsc.lang.fmt import canonical_library as compiler_canonical
from tests.conftest import ROOT

LIBRARIES = sorted([*(ROOT / "obligations").glob("*.obl"), *(ROOT / "tests" / "data").rglob("*.obl")])
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|[ \t\n\r\f]+|[A-Za-z0-9_.%]+|>=|<=|==|!=|.')


def pieces(text: str) -> list[str]:
    """``text`` cut into tokens, comments and runs of whitespace (a number's `.` kept in it)."""
    out = TOKEN.findall(text)
    assert "".join(out) == text
    return out


def relayout(text: str, rng: random.Random) -> str:
    """``text`` with only its layout changed: each run of whitespace between two tokens
    replaced (spaces, tabs, form feeds, line breaks, indentation, blank lines; a line
    break may become a space, two statements then share a line), `;` added before a
    `require` and a `}`, spaces before a comment and after a line. What `pcsc fmt`
    keeps is kept: whether a comment ends a line or stands on its own, and a blank line
    next to a comment."""
    parts = pieces(text)
    out: list[str] = []
    for k, part in enumerate(parts):
        if not part.isspace():
            out.append(part)
            continue
        before, after = parts[k - 1] if k else "", parts[k + 1] if k + 1 < len(parts) else ""
        breaks = part.count("\n")
        spaces = "".join(rng.choice([" ", "  ", "\t", "\f", " \t"]) for _ in range(rng.randint(1, 2)))
        indent = rng.choice(["", "  ", "\t", "        "])
        if before.startswith("#") or after.startswith("#") or not before:
            # next to a comment: where it stands and a blank line beside it are content
            if breaks == 0:
                out.append(spaces)
            elif breaks == 1:
                out.append(rng.choice(["", " ", "\t"]) + "\n" + indent)
            else:
                out.append("\n" + rng.choice(["", "  "]) + "\n" * rng.randint(1, 2) + indent)
            continue
        semicolon = " ; " if after in ("require", "}") and before not in ("covers",) and rng.random() < 0.3 else ""
        if breaks == 0 or rng.random() < 0.15:
            out.append(semicolon or spaces if rng.random() < 0.8 else "\n" + indent)
        else:
            out.append(semicolon + rng.choice(["", " ", "\t "]) + "\n" * rng.randint(1, 3) + indent)
    moved = "".join(out)
    return moved


def encode(text: str, rng: random.Random) -> bytes:
    """The text as file bytes: LF, CRLF or (once in a while) a lone CR; a byte order mark or not."""
    ends = rng.choices(["\n", "\r\n", "\r"], weights=[4, 4, 1])[0]
    data = text.replace("\n", ends).encode("utf-8")
    return b"\xef\xbb\xbf" + data if rng.random() < 0.3 else data


def both(path: Path) -> tuple[str | None, str | None]:
    """The canonical hash of a library file, by the compiler and by the checker."""
    compiler = library_hash(path)
    _, raw, checker = certcheck.library_file(path, "library", "libraries[0]")
    assert compiler is not None and compiler.text == raw  # the file's own hash, read alike
    return compiler.canonical, checker


def checked(text: str) -> str | None:
    try:
        return certcheck.canonical_library(text)
    except certcheck.NotALibrary:
        return None


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_checker_lays_out_each_library_as_the_compiler_does(library: Path) -> None:
    text = library.read_text(encoding="utf-8")
    expected = compiler_canonical(text)
    assert expected is not None
    assert checked(text) == expected


def test_the_shipped_libraries_hash_to_what_the_shipped_policies_pin() -> None:
    """Read from the files themselves, not from either implementation: every pin a
    shipped policy writes is the checker's canonical hash of that library."""
    pins = {}
    for policy in (ROOT / "policies").rglob("*.toml"):
        for name, pin in tomllib.loads(policy.read_text(encoding="utf-8")).get("libraries", {}).items():
            if "sha256" in pin:
                pins[name, pin["sha256"]] = policy
    assert pins
    for name, pin in pins:
        text = (ROOT / "obligations" / f"{name}.obl").read_text(encoding="utf-8")
        assert certcheck.library_sha256(text) == pin == hashlib.sha256(text.encode()).hexdigest()


def check_relayouts(tmp_path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for library in LIBRARIES:
        text = library.read_text(encoding="utf-8")
        pin = certcheck.library_sha256(text)
        assert pin is not None
        for i in range(count):
            moved = tmp_path / f"{library.stem}-{i}.obl"
            moved.write_bytes(encode(relayout(text, rng), rng))
            compiler, checker = both(moved)
            assert compiler == checker == pin, moved.read_bytes()


def test_a_relayout_hashes_to_the_same_pin_for_both(tmp_path: Path) -> None:
    check_relayouts(tmp_path, 25, 18)


@pytest.mark.slow
def test_many_relayouts_hash_to_the_same_pin_for_both(tmp_path: Path) -> None:
    check_relayouts(tmp_path, 500, 1918)


COMMENTS = ["# added", "#", "# ; not a statement", '# "quoted" # twice']


def comment_moved(text: str, rng: random.Random) -> str:
    """A comment added (on its own line, or at the end of a line) or an existing one
    moved to its own line or to the line's end: comments are content, so the
    canonical text changes, the same way for both."""
    parts = pieces(text)
    spots = [k for k, p in enumerate(parts) if p.isspace()]
    k = rng.choice(spots)
    comment = rng.choice(COMMENTS)
    parts[k] = rng.choice([f" {comment}\n", f"\n{comment}\n", f"\n\n{comment}\n\n", f"  {comment}\n  "]) \
        + parts[k].lstrip(" \t\f").lstrip("\n")
    return "".join(parts)


def token_changed(text: str, rng: random.Random) -> str | None:
    """One token changed so that the text still reads: a number, a name, a comparison,
    a text; or one `require` line dropped."""
    parts = pieces(text)
    choices = [k for k, p in enumerate(parts) if re.fullmatch(r"[0-9][0-9_.]*[kMB]?%?|[a-z_]+|>=|<=|\"[^\"]*\"", p)
               and p not in ("library", "version", "field", "material", "obligation", "covers", "require",
                             "and", "or", "not", "usd", "count", "bool", "ratio", "true", "false", "none")]
    if rng.random() < 0.2:
        lines = text.split("\n")
        requires = [i for i, line in enumerate(lines) if line.strip().startswith("require")]
        if len(requires) < 2:
            return None
        del lines[rng.choice(requires)]
        return "\n".join(lines)
    k = rng.choice(choices)
    p = parts[k]
    parts[k] = {">=": "<=", "<=": ">="}.get(p) or (p[:-1] + '2"' if p.startswith('"') else
                                                   "7" + p if p[0].isdigit() else p + "x")
    return "".join(parts)


def check_changes(tmp_path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for library in LIBRARIES:
        text = library.read_text(encoding="utf-8")
        pin = certcheck.library_sha256(text)
        for i in range(count):
            for n, changed in enumerate((comment_moved(text, rng), token_changed(text, rng))):
                if changed is None:
                    continue
                changed = relayout(changed, rng)
                path = tmp_path / f"{library.stem}-{i}-{n}.obl"
                path.write_bytes(encode(changed, rng))
                compiler, checker = both(path)
                assert compiler is not None, changed  # the change keeps the text a library
                assert compiler == checker != pin, changed


def test_a_changed_comment_or_token_changes_both_alike(tmp_path: Path) -> None:
    check_changes(tmp_path, 15, 19)


@pytest.mark.slow
def test_many_changed_comments_and_tokens_change_both_alike(tmp_path: Path) -> None:
    check_changes(tmp_path, 300, 1919)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('library x version "1"\nfieldx a count\n', "`fieldx` where `library`, `field` or `obligation` is expected"),
        ('library x version "1"\nobligation o covers a {\n    requirenot a\n}\n', "`requirenot` where `require`"),
        ('library x version "1"\nobligation o covers a {\n    require a b\n}\n', "line 3, column 15: `b`"),
        ('library x version "1"\nroute r {}\n', "`route` where `library`, `field` or `obligation`"),
        ("\ufefflibrary x", "line 1, column 1"),  # a second byte order mark is a character
        ('library x version "1"\nfield a count material\n', "the file ends where a number is expected"),
    ],
)
def test_what_does_not_read_as_a_library_is_refused_saying_where(text: str, why: str) -> None:
    """A keyword glued to what follows (`requirenot`) is refused: the compiler's lexer
    splits it where no name may stand, the checker reads keywords as whole words."""
    assert checked(text) is None
    assert why in certcheck.why_not_a_library(text)


@pytest.mark.parametrize(
    "expression",
    ["and > 1", "require > 1", "not not a", "p > 1", "true", "nan usd", "inf.x", "5 usd.x", "a.true", "- - a",
     "a - -b", "f(-a, - b)", "(a) and ((b))", "and(x)", "and - 1", "- not(x)", '"a#b" == c', "1e5usd", "2024-01-01",
     "a . b", "not (x < 1) or f()", "x / -(1 + 2) * 3 >= 10%"],
)
def test_an_expression_is_spaced_as_the_compiler_spaces_it(expression: str) -> None:
    """Where a word is a name and where a keyword, and where a `-` is a sign (after
    `and` as a name too, as the spacing rule reads it)."""
    text = f'library x version "1"\nobligation o covers a {{\n  require {expression} ;\n}}\n'
    expected = compiler_canonical(text)
    assert expected is not None
    assert checked(text) == expected


H = 'library x version "1"\n'


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n\n\n# and another\n",
        H + "obligation o covers a {\n    require a\n    # the end of the block\n\n}\n",
        H + "obligation o covers a {\n\n    # before\n\n    require a\n}\n\n\n# the end of the file\n\n",
        H + "obligation o # inside the header\n covers a, # and here\n b { # after the brace\n require a } # after\n",
        H + "obligation o covers a {\n    require a and # inside the line\n        b # at its end\n}\n",
        H + "obligation o covers a { # a comment in an empty block\n ; }\nobligation p covers b {}\n",
        H + "field a count field b usd material 5 # two on a line\nfield # inside\n c bool\n# between\nfield d ratio\n",
        H + "obligation o covers a {\n    require a ; # a semicolon before it\n;}\n",
        H + "obligation o covers a {\n    require a ; require b # shared line\n"
        + "    require " + "x and " * 10 + "y # long\n}\n",
        "# header\n\nlibrary x version \"1\" # trailing\nlibrary y version \"2\"\n\n\n# before fields\nfield a count\n",
    ],
    ids=range(11),
)
def test_comments_and_blank_lines_are_placed_as_the_compiler_places_them(text: str) -> None:
    expected = compiler_canonical(text)
    assert expected is not None
    assert checked(text) == expected
