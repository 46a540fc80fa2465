"""Whether a call's arguments bind to a `def`'s parameters, as Python binds them:
positional-only, positional-or-keyword, `*args`, keyword-only, `**kwargs`, defaults.
A call that passes `*xs` or `**kw` is judged only on what it spells out."""

from __future__ import annotations

import ast


def misfit(args: ast.arguments, call: ast.Call, skip: int, name: str) -> str | None:
    """Why `call` cannot bind to a function whose parameters are `args` (the first
    `skip` bound already: `self`, `cls`); None when it can, or when it cannot be told."""
    positional = [*args.posonlyargs, *args.args][skip:]
    posonly = {a.arg for a in args.posonlyargs[skip:]}
    starred = any(isinstance(a, ast.Starred) for a in call.args)
    splatted = any(k.arg is None for k in call.keywords)
    given = 0 if starred else len(call.args)
    if not starred and args.vararg is None and len(call.args) > len(positional):
        most, many = len(positional) + skip, len(call.args) + skip  # (as Python counts)
        return (
            f"{name}() takes {most} positional argument{'s' * (most != 1)} "
            f"but {many} {'was' if many == 1 else 'were'} given"
        )
    names = {a.arg for a in positional} - posonly
    kwonly = {a.arg for a in args.kwonlyargs}
    seen: set[str] = set()
    for keyword in call.keywords:
        word = keyword.arg
        if word is None:
            continue
        if word in seen:
            return None  # (a SyntaxError, reported by Python itself)
        seen.add(word)
        if word in names or word in kwonly:
            index = next((i for i, a in enumerate(positional) if a.arg == word), None)
            if index is not None and index < given:
                return f"{name}() got multiple values for argument `{word}`"
            continue
        if args.kwarg is not None:
            continue
        return f"{name}() got an unexpected keyword argument `{word}`"
    if starred or splatted:
        return None
    defaults = len(args.defaults)
    # (defaults count from the end of posonly + args; a skipped one never needs one)
    required = positional[: max(0, len(positional) - defaults)]
    missing = [a.arg for a in required[given:] if a.arg not in seen]
    missing += [
        a.arg
        for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        if default is None and a.arg not in seen
    ]
    if missing:
        listed = ", ".join(f"`{m}`" for m in missing)
        return f"{name}() is missing required argument{'s' * (len(missing) > 1)} {listed}"
    return None


__all__ = ["misfit"]
