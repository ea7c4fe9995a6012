"""Binding a pyop's arguments to the names of the op registry's schema
(`trace-translate --print-op-registry` documents the same lists)."""
import ast
import functools

from . import _traceir


@functools.lru_cache(maxsize=None)
def parameters(op):
    """[(name, has_default, default)] of the registry's signature for `op`,
    or None for an op the registry does not know."""
    text = _traceir.op_signature(op)
    if not text:
        return None
    params = []
    for part in _split(text):
        name, eq, default = part.partition("=")
        name = name.strip().lstrip("*")
        if not name:
            continue
        if eq:
            try:
                value = ast.literal_eval(default.strip())
            except (ValueError, SyntaxError):
                value = default.strip()
            params.append((name, True, value))
        else:
            params.append((name, False, None))
    return params


def bind(op, args):
    """{name: argument} for every parameter of the schema: the given
    arguments in order, then the defaults; {} for an unknown op."""
    params = parameters(op)
    if params is None:
        return {}
    out = {}
    for i, (name, has_default, default) in enumerate(params):
        if i < len(args):
            out[name] = args[i]
        elif has_default:
            out[name] = default
    return out


def _split(text):
    """Splits at the commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]
