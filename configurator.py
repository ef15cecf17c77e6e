"""
Config for the scripts, nanoGPT style: a script defines its settings as plain module
globals, then calls

    config = configure(globals())

which applies, in order, every config file named on the command line (a Python script
that assigns some of those globals, e.g. config/train_shakespeare_char.py) and every
--key=value override, and returns {key: value}. A config key is a global whose value
is an int, float, bool, str or None. Values are Python literals; a str key takes the
raw text. Unknown keys, wrong types and missing files end the program with a one-line
error (exit code 2). --help lists the keys and their defaults.
"""
import ast
import sys
import types
import difflib

CONFIG_TYPES = (int, float, bool, str, type(None))

def _fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)

def _unknown(key, keys, where):
    close = difflib.get_close_matches(key, keys, n=3)
    hint = f"did you mean: {', '.join(close)}?" if close else "run with --help to list them"
    _fail(f"unknown config key '{key}'{where} ({hint})")

def _checked(key, value, default, where):
    """value if it fits the type of the key's default (an int is fine for a float)."""
    if default is None or value is None:
        return value
    if type(default) is float and type(value) is int:
        return float(value)
    if type(value) is not type(default):
        _fail(f"{key}{where} expects {type(default).__name__}, got {value!r} ({type(value).__name__})")
    return value

def _parse(raw, default):
    if isinstance(default, str):  # raw text, unquoted if it was written as a literal
        try:
            value = ast.literal_eval(raw)
            return value if isinstance(value, str) else raw
        except (ValueError, SyntaxError):
            return raw
    if isinstance(default, bool) and raw in ('true', 'false'):
        return raw == 'true'
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw

def configure(g, argv=None):
    argv = sys.argv[1:] if argv is None else argv
    keys = [k for k, v in g.items() if not k.startswith('_') and isinstance(v, CONFIG_TYPES)]
    if '--help' in argv or '-h' in argv:
        width = max(map(len, keys))
        for k in keys:
            print(f"--{k.ljust(width)} = {g[k]!r}")
        sys.exit(0)
    for arg in argv:
        if not arg.startswith('--'):  # a config file
            try:
                with open(arg) as f:
                    source = f.read()
            except OSError:
                _fail(f"config file '{arg}' not found")
            print(f"config: applying {arg}")
            scope = {k: g[k] for k in keys}
            try:
                exec(compile(source, arg, 'exec'), scope)
            except Exception as e:
                _fail(f"config file '{arg}' failed: {type(e).__name__}: {e}")
            for k, v in scope.items():
                if k.startswith('_') or isinstance(v, (types.ModuleType, types.FunctionType, type)):
                    continue
                if k not in keys:
                    _unknown(k, keys, f" in {arg}")
                if v is not g[k]:
                    g[k] = _checked(k, v, g[k], f" in {arg}")
        else:
            key, eq, raw = arg[2:].partition('=')
            if not eq:
                _fail(f"'{arg}' is not of the form --key=value")
            if key not in keys:
                _unknown(key, keys, "")
            g[key] = _checked(key, _parse(raw, g[key]), g[key], "")
            print(f"config: {key} = {g[key]!r}")
    return {k: g[k] for k in keys}
