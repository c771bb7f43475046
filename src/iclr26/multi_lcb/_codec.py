"""The STDIN/STDOUT encoding of function arguments and return values (self-contained: this module's
source is also pasted into the Python programs that run converted HumanEval solutions).

A value becomes lines:

- ``bool``: ``true`` / ``false``; ``None``: ``null``;
- ``int`` / ``float``: one line (``repr``: ``3``, ``0.5``, ``1e-05``);
- ``str``: the string verbatim on one line (a string holding a newline cannot be encoded);
- a list (or tuple) of numbers or booleans: its length on one line, then the items space-separated on the
  next line (an empty line for an empty list);
- a list of strings: its length, then one string per line (strings may hold spaces); an empty list of
  any kind is ``0`` and an empty line;
- a 2-D list of numbers or booleans: the row count, then each row's items space-separated on its own line.

Arguments are encoded one after the other, in order. Decoding needs each argument's *kind*
(``"int"``, ``"float"``, ``"bool"``, ``"str"``, ``"list[int]"``, ``"list[list[float]]"``, ...).
"""

KINDS = (
    "bool",
    "int",
    "float",
    "str",
    "list[bool]",
    "list[int]",
    "list[float]",
    "list[str]",
    "list[list[bool]]",
    "list[list[int]]",
    "list[list[float]]",
)


def _scalar(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    raise ValueError(f"cannot encode {type(v).__name__} value {v!r}")


def encode_value(v):
    """The lines (a list of str) that encode ``v``; ValueError for what the format cannot express."""
    if isinstance(v, str):
        if "\n" in v or "\r" in v:
            raise ValueError(f"cannot encode a string holding a newline: {v!r}")
        return [v]
    if isinstance(v, list | tuple):
        if any(isinstance(x, str) for x in v):
            if not all(isinstance(x, str) for x in v):
                raise ValueError(f"cannot encode a list mixing strings and other values: {v!r}")
            return [str(len(v))] + [line for x in v for line in encode_value(x)]
        if any(isinstance(x, list | tuple) for x in v):
            rows = []
            for row in v:
                if not isinstance(row, list | tuple) or any(isinstance(x, list | tuple | str) for x in row):
                    raise ValueError(f"cannot encode a list nested deeper than 2-D or ragged in kind: {v!r}")
                rows.append(" ".join(_scalar(x) for x in row))
            return [str(len(v))] + rows
        return [str(len(v)), " ".join(_scalar(x) for x in v)]
    return [_scalar(v)]


def encode_args(args):
    """STDIN text for a call with positional ``args`` (each value's lines, then a final newline)."""
    return "".join(line + "\n" for a in args for line in encode_value(a))


def encode_output(v):
    """Expected STDOUT text for a return value ``v``."""
    return "".join(line + "\n" for line in encode_value(v))


def _parse_scalar(tok, kind):
    if tok == "null":
        return None
    if kind == "bool":
        if tok not in ("true", "false"):
            raise ValueError(f"expected true/false, got {tok!r}")
        return tok == "true"
    if kind == "int":
        return int(tok)
    return float(tok)


def decode_args(text, kinds):
    """Decode STDIN ``text`` into one value per entry of ``kinds`` (the inverse of :func:`encode_args`)."""
    lines = text.split("\n")
    pos = 0
    out = []
    for kind in kinds:
        if kind == "str":
            out.append(lines[pos])
            pos += 1
        elif kind in ("bool", "int", "float"):
            out.append(_parse_scalar(lines[pos].strip(), kind))
            pos += 1
        elif kind == "list[str]":
            n = int(lines[pos])
            out.append(lines[pos + 1 : pos + 1 + n])
            pos += 1 + max(n, 1)  # an empty list is "0" and an empty line, as for numbers
        elif kind.startswith("list[list["):
            inner = kind[len("list[list[") : -2]
            n = int(lines[pos])
            out.append([[_parse_scalar(t, inner) for t in lines[pos + 1 + i].split()] for i in range(n)])
            pos += 1 + max(n, 1)
        elif kind.startswith("list["):
            inner = kind[len("list[") : -1]
            n = int(lines[pos])
            out.append([_parse_scalar(t, inner) for t in lines[pos + 1].split()][:n])
            pos += 2
        else:
            raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    return out
