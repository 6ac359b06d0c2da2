"""sed_scores_eval's ``utils`` as DESED_task's recipe calls it: ``visualization.plot_psd_roc``."""

from sedcontract.scores.utils import visualization

__all__ = ["visualization"]
