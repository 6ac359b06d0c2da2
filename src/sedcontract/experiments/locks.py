"""The lock of a round: its choices written before any held-out run, with their sha256 in a
lock file beside them, and read back only while they are unchanged and still the choices the
protocol makes now."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError
from sedcontract.experiments.tables import read_json
from sedcontract.outputs import Outputs

CodeState = Callable[[], tuple[str, bool]]  # HEAD, and whether the code has changes


def digest_of(data: bytes) -> str:
    """The hex sha256 of ``data``: what a lock records of its choices file."""
    return hashlib.sha256(data).hexdigest()


def commit(root: Path) -> tuple[str, bool]:
    """HEAD of the checkout at ``root`` and whether the code that makes the choices
    (``scripts/``, ``src/`` with the configs) has changes not committed."""
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=root, capture_output=True, text=True)
        if done.returncode:
            raise ProtocolError(f"git {' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--", "scripts", "src"))


def write_lock(choices_path: Path, lock_path: Path, chosen: Mapping[str, Any]) -> str:
    """The choices as JSON and the lock holding the sha256 of the bytes written, put in place
    together; the digest."""
    text = json.dumps(chosen, indent=2) + "\n"
    digest = digest_of(text.encode())
    with Outputs(writes={"choices": choices_path, "lock": lock_path}) as out:
        out.write(choices_path, text)
        out.write(lock_path, json.dumps({"choices": choices_path.name, "sha256": digest},
                                        indent=2) + "\n")
    return digest


def read_lock(choices_path: Path, lock_path: Path,
              now_of: Callable[[dict[str, Any]], dict[str, Any]], how: str) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and each equals what
    ``now_of`` makes of them now (a change is named); ``how``: the command that locks."""
    for path in (choices_path, lock_path):
        if not path.is_file():
            raise ProtocolError(f"{path} does not exist: lock the choices first ({how})")
    recorded = read_json(lock_path, "the lock").get("sha256")
    if not isinstance(recorded, str):
        raise ProtocolError(f"{lock_path}: the lock holds no sha256 of the choices; lock them "
                            f"again ({how})")
    digest = digest_of(choices_path.read_bytes())
    if digest != recorded:
        raise ProtocolError(f"{choices_path} has sha256 {digest}, the lock {recorded}: the "
                         "choices were changed after the lock")
    chosen = read_json(choices_path, "the locked choices")
    now = now_of(chosen)
    differ = [k for k in sorted((set(now) | set(chosen)) - {"commit"})
              if now.get(k) != chosen.get(k)]
    if differ:
        raise ProtocolError("the script's choices differ from the lock's in " + "; ".join(
            f"{k}: locked {json.dumps(chosen.get(k))}, now {json.dumps(now.get(k))}"
            for k in differ))
    return chosen
