"""sed_scores_eval's ``plot_psd_roc`` under its name and keywords: the PSD-ROC ``(etpr, efpr)``
as a staircase with its area shaded up to ``max_efpr``, the PSDS and its settings in the title,
drawn on ``axes`` or on a figure of its own (``figsize`` in ``kwargs``) and saved to
``filename``. matplotlib is imported when a figure is drawn, on the Agg backend: nothing is
shown on screen."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.figures import pyplot


def plot_psd_roc(psd_roc: Any, *, dtc_threshold: float, gtc_threshold: float,
                 cttc_threshold: float | None, alpha_ct: float, alpha_st: float,
                 unit_of_time: str, max_efpr: float, psds: float, axes: Any = None,
                 filename: str | os.PathLike | None = None, **kwargs: Any) -> None:
    """Draw the PSD-ROC as sed_scores_eval draws it; ``psd_roc`` must be the pair ``(etpr,
    efpr)`` (the third element of what ``intersection_based.psds`` returns)."""
    if not isinstance(psd_roc, tuple) or len(psd_roc) != 2:
        raise SedContractError(f"the PSD-ROC is the pair (etpr, efpr), got "
                               f"{type(psd_roc).__name__}"
                               f"{f' of {len(psd_roc)}' if isinstance(psd_roc, tuple) else ''}")
    plt = pyplot()
    own = axes is None
    if own:
        figure = plt.figure(figsize=kwargs.get("figsize", (7, 7)))
        axes = figure.add_subplot()
    etpr, efpr = (np.asarray(a, dtype=np.float64) for a in psd_roc)
    axes.vlines(max_efpr, ymin=0, ymax=1.0, linestyles="dashed")
    axes.step(efpr, etpr, "b-", label="PSD-ROC", where="post")
    axes.fill_between(efpr, y1=etpr, y2=0, label="AUC", alpha=0.3, color="tab:blue",
                      linewidth=3, step="post")
    axes.set_xlim([0, max_efpr])
    axes.set_ylim([0, 1.0])
    axes.legend()
    axes.set_ylabel("eTPR")
    axes.set_xlabel(f"eFPR per {unit_of_time}")
    cttc = "na" if cttc_threshold is None else f"{cttc_threshold:.2f}"
    axes.set_title(f"PSDS: {psds:.5f}\ndtc: {dtc_threshold:.2f}, gtc: {gtc_threshold:.2f}, "
                   f"cttc: {cttc}, alpha_st: {alpha_st:.2f}, alpha_ct: {alpha_ct:.2f}, "
                   f"max_efpr: {max_efpr}")
    axes.grid()
    if filename:
        axes.figure.savefig(filename)
    if own:
        plt.close(axes.figure)
