"""JSON values as parsed records hold them, for the preparation properties: text built from
pieces that exercise redaction, bounding and escaping (secrets, control characters, lone
surrogates, NUL, long strings, the word ``null``), integers past 64 bits, NaN and the
infinities, nested lists and objects."""

from __future__ import annotations

from hypothesis import strategies as st

SECRET = "sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty"
PIECES = st.sampled_from(
    [
        "ls -la",
        "key",
        "API_KEY=",
        SECRET,
        "https://user:pa55w0rd@example.org",
        " ",
        "\t",
        "\n",
        "\x0b",
        "\x1f",
        "\x00",
        "\ud800",
        "e\u0301",
        "é",
        "data:image/png;base64," + "QUJD" * 20,
        "A1b2" * 600,
        "<thinking>x</thinking>",
        '"quoted"',
        "back\\slash",
        "1234567890123456789",
        "x ",
        "null",
        "<b>",
    ]
)
TEXT = st.one_of(st.text(max_size=12), st.lists(PIECES, max_size=4).map("".join))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(TEXT, st.sampled_from(["a", "b "])), inner, max_size=4),
    ),
    max_leaves=12,
)
