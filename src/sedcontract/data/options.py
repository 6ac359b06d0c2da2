"""The controlled benchmark's options — its splits with their default sizes, its speech
sources — and the check of requested sizes. Light (no audio code), so the command line and
configs can name them without importing the generator."""

from __future__ import annotations

from collections.abc import Mapping

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole

SPLITS: dict[str, int] = {"train": 960, "validation": 120, "test": 420}
SPEECH_SOURCES: tuple[str, ...] = ("auto", "librispeech", "synthetic")


def check_sizes(sizes: Mapping[str, int] | None, what: str = "sizes") -> dict[str, int]:
    """``{split: scenes}`` checked: a mapping of known splits to non-negative integers (the
    default sizes when None)."""
    if sizes is None:
        return dict(SPLITS)
    if not isinstance(sizes, Mapping):
        raise SedContractError(f"{what} must map splits to scene counts, e.g. "
                               f"{{train: 8, validation: 4, test: 12}}; got {sizes!r}")
    unknown = sorted(str(k) for k in sizes if k not in SPLITS)
    if unknown:
        raise SedContractError(f"{what} names unknown split(s) {unknown}; the splits are "
                               f"{', '.join(SPLITS)}")
    for split, count in sizes.items():
        if not is_whole(count) or count < 0:
            raise SedContractError(f"{what}: the {split} split needs a non-negative number of "
                                   f"scenes, got {count!r}")
    return dict(sizes)
