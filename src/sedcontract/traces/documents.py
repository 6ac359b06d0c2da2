"""One safe reader for every YAML and JSON file a user hands the project (decision files, risk
orders, the protocol's locks and run records, shard reports): a regular file (a pipe would
block, a folder is no file), of bounded size, nested at most so deep, and YAML without aliases
(a few hundred bytes of aliases expand to gigabytes). Errors name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sedcontract.errors import TraceFormatError
from sedcontract.traces.csv_files import read_text
from sedcontract.traces.tsv import regular_file

__all__ = ["MAX_BYTES", "MAX_DEPTH", "compose_yaml", "depth_of", "read_json", "read_yaml"]

MAX_BYTES = 1 << 20  # a settings file (decision, risk order, lock, record) is a few kB
MAX_DEPTH = 32  # mappings and lists inside each other; the deepest file the project writes: 7


def _text(path: str | Path, what: str, max_bytes: int | None) -> str:
    """The file's text (``what``: the kind of file, a noun such as "decision file"), refused
    when it is no regular file or larger than ``max_bytes``."""
    size = regular_file(Path(path)).stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise TraceFormatError(f"{size:,} bytes is too large for a {what} (at most "
                               f"{max_bytes:,})", path=str(path))
    return read_text(path)


def _loader(path: str | Path, what: str, max_depth: int) -> type:
    """A safe YAML loader that refuses aliases and nesting deeper than ``max_depth``."""
    import yaml

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise TraceFormatError(f"an alias (*{event.anchor}) is not read in a {what}: "
                                       "write the value out", path=str(path),
                                       row=event.start_mark.line + 1)
            if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
                return super().compose_node(parent, index)
            self.depth += 1  # mappings and lists count, as in depth_of
            if self.depth > max_depth:
                mark = self.peek_event().start_mark
                raise TraceFormatError(f"nested too deeply for a {what} (more than {max_depth} "
                                       "levels)", path=str(path), row=mark.line + 1)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return Loader


def _yaml_error(exc: Exception, path: str | Path, what: str) -> TraceFormatError:
    mark = getattr(exc, "problem_mark", None)
    return TraceFormatError(f"not a YAML {what}: {exc}", path=str(path),
                            row=mark.line + 1 if mark else None)


def _yaml(path: str | Path, what: str, max_bytes: int | None, max_depth: int,
          nodes: bool) -> Any:
    """The YAML file's node tree (``nodes``) or data, read by the safe loader."""
    import yaml

    loader = _loader(path, what, max_depth)(_text(path, what, max_bytes))
    try:
        return loader.get_single_node() if nodes else loader.get_single_data()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path, what) from None
    finally:
        loader.dispose()


def compose_yaml(path: str | Path, what: str, *, max_bytes: int | None = MAX_BYTES,
                 max_depth: int = MAX_DEPTH) -> Any:
    """The YAML file's node tree (lines and columns kept for messages); None when empty."""
    return _yaml(path, what, max_bytes, max_depth, nodes=True)


def read_yaml(path: str | Path, what: str, *, max_bytes: int | None = MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """The YAML file's data (mappings, lists, scalars), read safely."""
    return _yaml(path, what, max_bytes, max_depth, nodes=False)


def read_json(path: str | Path, what: str, *, max_bytes: int | None = MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """The JSON file's data, nested at most ``max_depth`` deep."""
    text = _text(path, what, max_bytes)
    try:
        data = json.loads(text)
    except RecursionError:
        raise TraceFormatError(f"nested too deeply for a {what} (more than {max_depth} "
                               "levels)", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise TraceFormatError(f"not a JSON {what}: {exc.msg} (column {exc.colno})",
                               path=str(path), row=exc.lineno) from None
    if depth_of(data) > max_depth:
        raise TraceFormatError(f"nested too deeply for a {what} (more than {max_depth} "
                               "levels)", path=str(path))
    return data


def depth_of(data: Any) -> int:
    """How deep mappings and lists nest in ``data`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict)
                                                   else value))
    return deepest
