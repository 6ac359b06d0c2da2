"""Reproducible CPU kernels: the instruction set each numerical library under torch may pick,
pinned so that a run regenerates bit for bit on another machine (``reproducible=true``;
docs/training.md#reproducible-runs, the experiment: docs/results/reproducibility.md).

torch picks its CPU kernels by the machine it finds: ATen's vectorised kernels by instruction
set (AVX-512 or AVX2), oneDNN's convolutions by its own, and MKL (matrix products, the FFT of
the front end, the vector maths behind ``exp`` and ``log``) by the CPU's model and vendor. Each
of the three alone changes trained weights. The pins are environment variables that each
library reads once, at its first kernel: this module imports no torch at its top, so the
evaluation half never loads it."""

from __future__ import annotations

import ctypes
import logging
import os
import platform
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from sedcontract.errors import SedContractError

log = logging.getLogger(__name__)

__all__ = ["KernelState", "fix_kernels", "kernel_state", "pin_environment", "pins"]

# x86-64: AVX2 kernels everywhere, the MKL branch that returns the same bits on every Intel CPU
# with AVX2, and thread counts that neither library adjusts at run time
X86_64 = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "MKL_DYNAMIC": "FALSE",
    "OMP_DYNAMIC": "FALSE",
}
# mkl_cbwr_get's branch codes (MKL's named constants for CNR control)
MKL_BRANCHES = {1: "off", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
                8: "SSE4_2", 9: "AVX", 10: "AVX2", 12: "AVX512", 14: "AVX512_E1"}


def pins(machine: str | None = None) -> dict[str, str]:
    """The environment a reproducible run sets on ``machine`` (``platform.machine()``): the
    x86-64 pins, or none where the project has verified none (aarch64 and others)."""
    name = (machine if machine is not None else platform.machine()).lower()
    return dict(X86_64) if name in ("x86_64", "amd64") else {}


def pin_environment(environ: MutableMapping[str, str] | None = None,
                    machine: str | None = None) -> dict[str, str]:
    """Set the pins in ``environ`` (this process's environment by default, where torch's
    libraries read them at their first kernel; a child process's for one started later) and
    return them."""
    wanted = pins(machine)
    (os.environ if environ is None else environ).update(wanted)
    return wanted


def _cpuinfo() -> tuple[str, set[str]]:
    """The CPU's vendor and flags from ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return "", set()
    vendor, flags = "", set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "vendor_id" and not vendor:
            vendor = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return vendor, flags


def _mkl_branch() -> str | None:
    """The MKL code branch torch's bundled MKL runs (``AVX2``, ``off``, ...), None where it
    cannot be read (another build of torch, no MKL)."""
    import torch

    if not torch.backends.mkl.is_available():
        return None
    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        get = ctypes.CDLL(str(library)).mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    code = int(get(1))  # 1: MKL_CBWR_BRANCH
    return MKL_BRANCHES.get(code, str(code))


@dataclass(frozen=True)
class KernelState:
    """Which CPU kernels this process's torch runs: ATen's instruction set, MKL's branch (None:
    unknown), oneDNN's ceiling (from the environment), the thread count and the CPU vendor;
    ``notes`` say what the project has not verified here."""

    reproducible: bool
    aten: str
    mkl: str | None
    onednn: str
    threads: int
    vendor: str
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the run's log."""
        return (f"CPU kernels: ATen {self.aten}, oneDNN up to {self.onednn}, MKL branch "
                f"{self.mkl or 'unknown'}, {self.threads} threads"
                + (" (reproducible=true)" if self.reproducible else " (reproducible=false: "
                   "the machine's own kernels)"))


def kernel_state(reproducible: bool = False) -> KernelState:
    """The kernels this process runs now (imports torch)."""
    import torch

    vendor, _ = _cpuinfo()
    return KernelState(bool(reproducible), torch.backends.cpu.get_cpu_capability(),
                       _mkl_branch(), os.environ.get("ONEDNN_MAX_CPU_ISA", "the CPU's best"),
                       torch.get_num_threads(), vendor)


def fix_kernels(reproducible: object) -> KernelState:
    """Pin the kernels (``reproducible`` true) before the run's first tensor, check that they
    took, and return the state. Refused, saying why, when torch already ran other kernels in
    this process or the CPU lacks AVX2; on a CPU the pins are not verified for (not Intel, not
    x86-64) the run goes on and the state's notes say so. On a GPU it also turns off TF32 and
    cuDNN's benchmark search (kernels picked by timing)."""
    if not isinstance(reproducible, bool):
        raise SedContractError(f"reproducible must be true or false, got {reproducible!r}")
    if not reproducible:
        return kernel_state(False)
    wanted = pin_environment()
    import torch

    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    state = kernel_state(True)
    notes: list[str] = []
    if not wanted:
        notes.append(f"reproducible=true pins CPU kernels on x86-64 only; on {platform.machine()} "
                     "the run fixes its threads, and whether other machines regenerate it "
                     "bit for bit is not verified")
    else:
        vendor, flags = _cpuinfo()
        if state.aten != "AVX2":
            if flags and not {"avx2", "fma"} <= flags:
                raise SedContractError(
                    "reproducible=true runs AVX2 kernels, and this CPU has no AVX2 (or no "
                    "FMA): its runs cannot regenerate another machine's; set "
                    "reproducible=false")
            raise SedContractError(
                f"reproducible=true pins ATen's kernels to AVX2, but this process already ran "
                f"torch kernels ({state.aten}) before the run started; start the run in a fresh "
                "process (train.py and evaluate.py do), or set "
                + " ".join(f"{k}={v}" for k, v in wanted.items())
                + " before importing torch")
        if state.mkl == "AUTO" or (state.mkl is None and vendor and vendor != "GenuineIntel"):
            # MKL read the pin and declined it: its AVX2 branch is for Intel CPUs only
            notes.append(f"this CPU ({vendor or 'vendor unknown'}) runs MKL's automatic branch, "
                         "not its AVX2 one, which MKL keeps for Intel CPUs: this run's matrix "
                         "products, FFT and exp/log differ from an Intel machine's "
                         "(docs/results/reproducibility.md)")
        elif state.mkl not in (None, "AVX2"):
            raise SedContractError(
                f"reproducible=true pins MKL to its AVX2 branch, but this process already ran "
                f"MKL (branch {state.mkl}) before the run started; start the run in a fresh "
                "process (train.py and evaluate.py do), or set MKL_CBWR=AVX2 before the first "
                "tensor")
    for note in notes:
        log.warning(note)
    return KernelState(**{**state.__dict__, "notes": tuple(notes)})
