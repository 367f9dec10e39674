"""Hypothesis strategies for tests/test_fuzz.py: frontmatter, whole file bytes,
hook payloads, queries.

Frontmatter mixes the keys memstore reads (with values biased towards what each key is
parsed as, and away from it) with junk keys, and is written either by yaml.safe_dump
or by hand, so both valid YAML with wrong types and YAML that does not parse occur.
File bytes then get the damage files really suffer: a BOM, CRLF (whole or mixed),
a cut at a random byte, stray bytes, or they are plain binary or empty.
"""

from __future__ import annotations

import datetime as dt
import string

import yaml
from hypothesis import strategies as st

from memstore.core.kinds import MEMORY_TYPES

# ---------------------------------------------------------------- values

HUGE_INTS = (10**400, -(10**400), 2**63, -(2**63) - 1, 2**64, 10**18, -1, 0, 1)
huge_ints = st.sampled_from(HUGE_INTS)
integers = st.one_of(st.integers(), huge_ints)
floats = st.floats(allow_nan=True, allow_infinity=True)
# Fixed UTC offsets, as YAML timestamps and ISO strings carry them.
offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
)
datetimes = st.datetimes(timezones=st.none() | st.just(dt.UTC) | offsets)
dates = st.dates()
DATE_TEXTS = (
    "9999-12-31T23:59:59-01:00",
    "9999-12-31T23:59:59+01:00",
    "0001-01-01T00:00:00+01:00",
    "0001-01-01T00:00:00-01:00",
    "9999-12-31",
    "0001-01-01",
    "2026-02-30",
    "2026-07-30T25:00:00Z",
    "2026-07-30T12:00:00Z",
    "2026-07-30T12:00:00z",
    "2026-07-30 12:00:00",
    "99999-01-01",
    "-2026-01-01",
    "now",
    "yesterday",
    "",
    " ",
)
date_texts = st.one_of(
    st.sampled_from(DATE_TEXTS),
    datetimes.map(lambda d: d.isoformat()),
    datetimes.map(lambda d: d.isoformat(" ")),
    dates.map(lambda d: d.isoformat()),
)
NUMBER_TEXTS = ("1e999", "-1e999", "nan", "NaN", "inf", "-inf", " 5 ", "0x10", "1_000", "-0", "3.5",
                "1" + "0" * 400, "10", "14", "365", "366", "0", "-3")
number_texts = st.sampled_from(NUMBER_TEXTS)
BOOL_TEXTS = ("true", "yes", "on", "1", "false", "no", "off", "0", "", "maybe", "TRUE", "Y", "n")
bool_texts = st.sampled_from(BOOL_TEXTS)
texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=string.printable, max_size=40),
    st.text(alphabet=st.characters(categories=["Cc", "Zs", "Zl", "Zp", "Cf", "So", "Lo"]),
            max_size=20),
)
scalars = st.one_of(st.none(), st.booleans(), integers, floats, texts, date_texts, number_texts,
                    dates, datetimes)
values = st.recursive(
    scalars,
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=8,
)

NUMERIC_KEYS = ("access_count", "stability", "importance", "body_token_cap", "cadence_weight")
DATE_KEYS = ("created", "last_updated", "last_accessed", "last_reinforced")
BOOL_KEYS = ("pin", "in_flight")
TEXT_KEYS = ("name", "type", "summary", "description", "status", "state", "content", "shelf",
             "title")
KEYS = (*NUMERIC_KEYS, *DATE_KEYS, *BOOL_KEYS, *TEXT_KEYS, "trigger")

regexish = st.one_of(
    st.sampled_from(["^Bash$", "Edit|Write", "(", "[", "*", "a{2,", "(?P<x>", "", ".*", "notes/",
                     "\\"]),
    st.text(max_size=12),
)
trigger = st.one_of(
    st.fixed_dictionaries({}, optional={"tool_match": regexish | values,
                                        "path_pattern": regexish | values}),
    values,
)


def value_for(key: str) -> st.SearchStrategy[object]:
    """Values for one key: mostly of the kind memstore parses it as, often not."""
    if key in NUMERIC_KEYS:
        own = st.one_of(integers, floats, number_texts)
    elif key in DATE_KEYS:
        own = st.one_of(dates, datetimes, date_texts)
    elif key in BOOL_KEYS:
        own = st.one_of(st.booleans(), bool_texts, integers)
    elif key == "trigger":
        return trigger
    elif key == "status":
        own = st.sampled_from(["superseded", "superseded by feedback_x", "Superseded", "open",
                               "closed", "active"])
    elif key == "type":
        own = st.sampled_from([*MEMORY_TYPES, "lens", "meditation", "Feedback"])
    else:
        own = texts
    return st.one_of(own, own, values)


junk_keys = st.one_of(st.text(max_size=10), st.integers(), st.none(), st.booleans(), floats, dates)


@st.composite
def mappings(draw: st.DrawFn) -> dict[object, object]:
    """A frontmatter mapping: some known keys (each with a value for it), some junk keys,
    shuffled."""
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=8, unique=True))
    known = {key: draw(value_for(key)) for key in keys}
    junk = draw(st.dictionaries(junk_keys, values, max_size=3))
    items = list(junk.items()) + list(known.items())
    items = draw(st.permutations(items)) if items else items
    return dict(items)


# ---------------------------------------------------------------- YAML text

BROKEN_LINES = (
    'name: "unclosed',
    "summary: 'unclosed",
    ": :",
    "key: value: other",
    "\tname: tab-indented",
    "  indented: oddly",
    "- a list item",
    "[1, 2",
    "{",
    "}",
    "&anchor",
    "alias: *missing",
    "x: !!python/object:os.system echo",
    "x: !!binary not-base64!",
    "x: !!timestamp 2026-13-45",
    "x: !!float abc",
    "x: !!int 0xZZ",
    "? complex key",
    "%YAML 1.1",
    "...",
    "---",
    "----",
    "@reserved",
    "`backtick",
    "x: |",
    "y: >-",
    "access_count:",
    "access_count: [1, 2]",
    "stability: {a: 1}",
    "last_accessed: 2026-07-30T12:00:00+99:00",
    "x: " + "[" * 300 + "]" * 300,
    "x: " + "[" * 3000,
    "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]",
    "<<: *missing",
    "<<: [1, 2]",
    "1: numeric key",
    "null: null key",
    "? [a, b]\n: list key",
    "\x00",
    "\x85",
    "\ufeff",
)


# Scalar text as a person might type it; several make the YAML constructor itself fail
# (a date that does not exist, a bad explicit tag), which is not a YAMLError.
RAW_SCALARS = ("2026-02-30", "2026-13-45", "2026-07-30T25:00:00Z", "2026-07-30 12:61:00",
               "!!int 0xZZ", "!!float abc", "!!timestamp soon", "!!bool maybe", "!!null x",
               "!!binary ===", "!!str 3", "!!set {a, b}", "!!omap [a: 1]",
               "!!python/name:os.system", "0x_", "0o9", ".nan", ".inf", "-.inf", "1e400",
               "1" + "0" * 400, "-" + "9" * 30, "~", "null", "yes", "No", "''", '""', "'it''s'",
               "&a 1", "*a", "[a, b", "{a: 1", "|", ">-", "@x", "`x", "% x",
               "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+14:00",
               "2026-07-30T12:00:00.123456789Z", "2026-7-3", "20260730", "12:30:00", "1_000",
               "0b101", "+12")
raw_scalars = st.sampled_from(RAW_SCALARS) | number_texts | bool_texts


def dump(value: object, flow: bool | None, unicode: bool) -> str:
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=flow, allow_unicode=unicode,
                          width=10**6)


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """Frontmatter text (between the fences): valid, hand-written, broken, or not a mapping."""
    style = draw(st.sampled_from(["dump", "dump", "dump", "dump", "lines", "lines", "broken",
                                  "other-shape"]))
    if style == "dump":
        return dump(draw(mappings()), draw(st.sampled_from([False, None, True])),
                    draw(st.booleans()))
    if style == "other-shape":
        return dump(draw(values), draw(st.sampled_from([False, None])), draw(st.booleans()))
    mapping = draw(mappings())
    lines = []
    for key, value in mapping.items():
        how = draw(st.integers(0, 5))
        if how == 0:
            # Python's str(), not YAML: often not what it looks like
            lines.append(f"{key}: {value}")
        elif how in (1, 2):
            lines.append(f"{key}: {draw(raw_scalars)}")  # YAML scalar text written by hand
        else:
            lines.append(dump({key: value}, False, True).rstrip("\n"))
    if style == "broken":
        for _ in range(draw(st.integers(min_value=1, max_value=4))):
            at = draw(st.integers(min_value=0, max_value=len(lines)))
            lines.insert(at, draw(st.sampled_from(BROKEN_LINES) | texts))
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------- whole files

bodies = st.one_of(
    st.just(""),
    st.text(max_size=200),
    st.sampled_from(["# Title\n\nA body line.\n", "---\nA rule above.\n", "\n\n\n",
                     "zebra body\n"]),
)


# True about one time in eight (hypothesis draws sampled_from unevenly: the weights are explicit)
rarely = st.tuples(st.booleans(), st.booleans(), st.booleans()).map(all)


@st.composite
def file_texts(draw: st.DrawFn) -> str:
    # Mostly the plain fence; now and then one the parser and the editor may read differently.
    opening = draw(st.sampled_from(["----", "--- ", "---\t", "-- -", "+++"])) if draw(rarely) \
        else "---"
    closing = draw(st.sampled_from(["----", "--- ", "...", "", "-----"])) if draw(rarely) else "---"
    head = draw(yaml_texts())
    body = draw(bodies)
    lead = draw(st.sampled_from(["\n", " "])) if draw(rarely) else ""
    return f"{lead}{opening}\n{head}{closing}\n{body}" if closing \
        else f"{lead}{opening}\n{head}{body}"


@st.composite
def damaged(draw: st.DrawFn, text: str) -> bytes:
    """Encode, then maybe: CRLF (all lines or some), a BOM, stray bytes, a cut at a random byte."""
    eol = draw(st.sampled_from(["mixed", "cr"])) if draw(rarely) \
        else draw(st.sampled_from(["lf", "crlf"]))
    if eol == "crlf":
        text = text.replace("\n", "\r\n")
    elif eol == "cr":
        text = text.replace("\n", "\r")
    elif eol == "mixed":
        parts = text.split("\n")
        flags = draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts)))
        text = "".join(p + ("\r\n" if f else "\n")
                       for p, f in zip(parts[:-1], flags, strict=False)) + parts[-1]
    raw = text.encode("utf-8")
    if draw(rarely):
        raw = b"\xef\xbb\xbf" + raw
    if draw(rarely):
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\x00", b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\r",
                                               b"\x00\x00"]))\
            + raw[at:]
    if draw(rarely):
        raw = raw[: draw(st.integers(min_value=0, max_value=len(raw)))]
    return raw


@st.composite
def file_bytes(draw: st.DrawFn) -> bytes:
    """The bytes of one memory file, from healthy to hopeless."""
    kind = draw(st.sampled_from(["plain", "empty", "binary"])) if draw(rarely) else "front"
    if kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"\xef\xbb\xbf", b"\r\n", b"   "]))
    if kind == "binary":
        return draw(st.binary(max_size=300))
    text = draw(file_texts()) if kind == "front" else draw(bodies)
    return draw(damaged(text))


# ---------------------------------------------------------------- file names

kebab = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)
odd_topics = st.text(
    alphabet=st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="/\\"),
    min_size=1, max_size=24
)


@st.composite
def t2_names(draw: st.DrawFn) -> str:
    """A file name that makes a T2 memory: <type>_<topic>.md."""
    topic = draw(st.one_of(kebab, kebab, odd_topics))
    name = f"{draw(st.sampled_from(MEMORY_TYPES))}_{topic}.md"
    return name if len(name.encode()) <= 200 else name[:60] + ".md"


OTHER_FOLDERS = ("memory/short-term/260729-", "memory/dream-journal/260728-", "memory/bugs/0001-",
                 "lenses/", "meditations/", "memory/", "")


@st.composite
def corpora(draw: st.DrawFn) -> dict[str, bytes]:
    """{path relative to the root: bytes}: a few T2 memories and maybe some other markdown files."""
    names = draw(st.lists(t2_names(), min_size=1, max_size=6, unique=True))
    files = {f"memory/{name}": draw(file_bytes()) for name in names}
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        folder = draw(st.sampled_from(OTHER_FOLDERS))
        files.setdefault(f"{folder}{draw(kebab)}.md", draw(file_bytes()))
    return files


# ----------------------------------------------------------- files for fmedit: fenced, hand-written

EDIT_KEYS = ("access_count", "stability", "last_accessed", "last_reinforced", "name", "type",
             "created")
EDIT_VALUES = ("", "3", "57.3", "-1", "2026-07-30", "2026-07-30T06:12:00Z", "'quoted'",
               '"double # not a comment"', "'a: b'", "null", "~", "|", ">-", "[1, 2]", "{a: 1}",
               "&anchor 3", "*anchor", "!!str 3", "x #y", "'it''s'", '"unterminated', "feedback_x",
               "true", "1e3", ".inf", "0o17", "[a,", "a: b")
COMMENTS = ("", "", "", " # spaced reinforcements", "\t# tab comment", "  #", " #x #y", "   ")
OTHER_LINES = ("# a comment the person wrote", "", "summary: 'Quoted: keep my quotes'",
               "tags: [a, b]", "description: >", "  folded text", "  - item", "list:", "- top item",
               "nested:", "  access_count: 9", "  stability: 2", '"access_count": 5',
               "'stability': 6", "? last_accessed", ": 2026-01-01", "summary: |",
               "  access_count: 7", "{access_count: 1}", "pin: true", "status: superseded",
               "summary: \"line one", "access_count: 3\"", "anchor: &a 1", "alias: *a", "...",
               "---x", "-----", "access_count_extra: 1", "xaccess_count: 2", "stability.5: 3")


TIDY_VALUES = ("", "3", "57.3", "2026-07-30", "2026-07-30T06:12:00Z", "'quoted'",
               '"double # not a comment"', "'a: b'", "null", "~", "[1, 2]", "{a: 1}", "!!str 3",
               "x #y", "'it''s'", "feedback_x", "true", "1e3", ".inf", "plain words here",
               "\"\\u00e9t\\u00e9\"", "14.0", "0")
TIDY_LINES = ("# a comment the person wrote", "", "summary: 'Quoted: keep my quotes'",
              "tags: [a, b]", "description: >", "  folded text", "list:", "  - item", "nested:",
              "  access_count: 9", "pin: true", "status: superseded", "anchor: &a 1", "alias: *a",
              "summary: |", "  access_count: 7", "access_count_extra: 1", "xaccess_count: 2",
              '"quoted key": 1', "summary: \"line one", "  access_count: 3\"")


@st.composite
def key_lines(draw: st.DrawFn, tidy: bool = False) -> str:
    """One `key: value  # comment` line for a key set_fields may be asked to edit."""
    key = draw(st.sampled_from(EDIT_KEYS))
    space = draw(st.sampled_from(["", "", "", " ", "\t"]))
    gap = draw(st.sampled_from([" ", " ", " ", "", "  ", "\t"]))
    if tidy:
        value = draw(st.sampled_from(TIDY_VALUES))
    else:
        value = draw(st.sampled_from(EDIT_VALUES) | st.sampled_from(EDIT_VALUES) | raw_scalars
                     | texts.filter(lambda t: "\n" not in t and "\r" not in t))
    return f"{key}{space}:{gap}{value}{draw(st.sampled_from(COMMENTS))}"


@st.composite
def editable_files(draw: st.DrawFn) -> bytes:
    """Fenced frontmatter in the shapes people write by hand, for set_fields to edit or refuse."""
    if draw(st.booleans()):  # tidy: valid YAML most of the time, so that most edits go through
        lines = draw(st.lists(key_lines(tidy=True) | st.sampled_from(TIDY_LINES), max_size=8))
    else:
        lines = draw(st.lists(st.one_of(key_lines(), key_lines(), st.sampled_from(OTHER_LINES),
                                        texts.filter(lambda t: "\n" not in t)), max_size=8))
    if draw(st.booleans()):
        lines += dump(draw(mappings()), False, True).splitlines()
    opening = draw(st.sampled_from(["---", "---", "---", "--- ", "---\t", "----"]))
    closing = draw(st.sampled_from(["---", "---", "---", "---", "---", "--- ", "----", "..."]))
    body = draw(st.sampled_from(["", "# Body\n---\na rule above must survive\n", "body\n",
                                 "\n\ntext", "---\n"])
                | bodies)
    text = "\n".join([opening, *lines, closing]) + "\n" + body
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    raw = text.replace("\n", eol).encode("utf-8")
    if draw(st.integers(0, 4)) == 0:
        raw = b"\xef\xbb\xbf" + raw
    if draw(st.integers(0, 9)) == 0:
        raw = draw(damaged(text))
    return raw


# -------------------------------------------------------- fmedit updates (what flush and init pass)

utc_datetimes = st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30),
                             timezones=st.just(dt.UTC))
POLICY_VALUES = {
    "access_count": st.integers(min_value=0, max_value=10**9),
    "stability": st.floats(min_value=0.0001, max_value=365.0),
    "last_accessed": st.none() | utc_datetimes,
    "last_reinforced": st.none() | utc_datetimes,
}
INIT_VALUES = {
    "name": t2_names().map(lambda n: n[:-3]),
    "type": st.sampled_from(MEMORY_TYPES),
    "created": dates,
    "access_count": st.just(0),
    "last_reinforced": st.none(),
}


@st.composite
def _updates(draw: st.DrawFn, table: dict[str, st.SearchStrategy[object]]) -> dict[str, object]:
    keys = draw(st.lists(st.sampled_from(sorted(table)), min_size=1, max_size=len(table),
                         unique=True))
    return {key: draw(table[key]) for key in keys}


policy_updates = _updates(POLICY_VALUES)  # what flush passes
init_updates = _updates(INIT_VALUES)  # what init passes


# ---------------------------------------------------------------- search queries

FTS_BITS = ('"', "AND", "OR", "NOT", "NEAR", "NEAR(", ")", "(", "*", "^", ":", "name:", "body:",
            "summary :", "{name summary}:", "-", "+", ",", "'", "zebra", "alpha", "stripes", "x*",
            "^zebra", "NEAR(zebra alpha, 2)", '"unclosed', "\x00", "\udcff", "\ud800", "", " ",
            "\t", "\n", "é", "日本", "—", "%", "_", "\\", ";", "DROP TABLE files;", "' OR 1=1 --")
queries = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(FTS_BITS) | st.text(max_size=6), max_size=8).map(" ".join),
    st.lists(st.sampled_from(FTS_BITS), max_size=8).map("".join),
    # what the command line hands over for bytes that are not UTF-8 (surrogateescape)
    st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\udcff", "\udc80", "\udcc3"]),
            max_size=20),
)
