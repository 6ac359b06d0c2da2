"""``ContractLoss``: the clauses of the policy's contract, relaxed, as training losses. One
source of truth: the same contract text, bounds and grid the exact monitor scores in
validation. Each clause's loss is ``Σ obligation·(1 − soft) / Σ obligation`` over its
obligations in the batch, and 0 (never NaN) when the batch holds none. Every step runs on the
device of the detector's outputs: the reference's runs are found there too."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F

from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.soft.events import (
    EVENT_RELAXATIONS,
    ClauseTerms,
    NoRelaxation,
    SoftEvents,
)
from sedcontract.contracts.soft.frame import (
    SEMANTICS,
    Signal,
    SoftTable,
    make_ops,
    smoothing_depth,
)
from sedcontract.contracts.soft.logic import WITNESSES, LogPair, log1mexp
from sedcontract.contracts.syntax import (
    Atom,
    EventClause,
    FrameClause,
    Temporal,
    atoms,
    children,
    postorder,
)
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number
from sedcontract.traces.names import signal_name
from sedcontract.traces.traceset import MODES

Tensor = torch.Tensor
DEFAULT_WITNESS = "rise"  # of windows over predicted boundaries: monotone, one ramp counts once
YAML_FALSE = ("; YAML reads a bare true/false as a Boolean: quote the clause name "
              "(\"false\": 1.0); on the command line, set it by its path "
              "(+loss.contract.targets.false=0.9)")


def check_clause_names(policy: AuditPolicy, given: object, what: str, values: str) -> None:
    """Refuse a per-clause setting ``what`` that is not a mapping of the policy's contract's
    clause names (to ``values``), naming the clauses it does not have."""
    if not isinstance(given, Mapping):
        raise SedContractError(f"{what} must map clause names to {values}, got {given!r}")
    clauses = [c.name for c in policy.parsed.clauses]
    unknown = sorted((k for k in given if k not in clauses), key=str)
    if unknown:
        raise SedContractError(
            f"{what} names clause {', '.join(map(repr, unknown))}, which contract "
            f"{policy.contract_name} does not have; its clauses are {', '.join(clauses)}"
            f"{YAML_FALSE if any(isinstance(k, bool) for k in unknown) else ''}")


def _windows(clause: FrameClause) -> list[Temporal]:
    """The existential windows (N/F/P) of a frame clause's requirement."""
    return [n for n in postorder(clause.requirement, children)
            if isinstance(n, Temporal) and n.op in "NFP"]


def _boundary_windows(clause: FrameClause) -> bool:
    """Some window of the requirement is over ``pred.onset`` or ``pred.offset``."""
    return any(isinstance(w.arg, Atom) and w.arg.side == "pred"
               and w.arg.kind in ("onset", "offset") for w in _windows(clause))


class ContractLoss:
    """Soft losses of the clauses of ``policy``'s contract for detector outputs.

    ``weights`` maps clause names to weights (default: 1 for every guard coordinate, 0 for the
    diagnostics); a clause of weight 0 is not computed. ``semantics``: ``product`` (product
    logic in log space) or ``sound`` (certified smooth robustness within ``epsilon``, frame
    clauses only; event clauses keep their product surrogates). ``modes``: the traces the
    losses are taken on (``typed`` rows clip × class, ``union`` rows clip). ``relaxation``
    maps frame-clause names to the witness relaxation of the existential windows ``N/F/P`` of
    their requirement (product semantics; one of ``WITNESSES``; default ``rise`` for a clause
    with a window over ``pred.onset``/``pred.offset``, ``noisy_or`` for any other).
    ``events``: the relaxation of the event clauses (``EVENT_RELAXATIONS``, see
    :mod:`~sedcontract.contracts.soft.events`): ``expected`` (default) counts under
    independent frames, ``decided`` the exact values of the thresholded prediction with repair
    gradients, ``straight`` the decided values with both gradients. The ``rise`` witness
    trained better than ``noisy_or`` on the development benchmarks
    (``scripts/contract_losses.py``, docs/results/protocol.md); ``decided`` has the better
    properties (``scripts/relaxation_properties.py``). Which clauses the training config
    weights is chosen there too (``configs/loss/contract.yaml``); here every guard
    coordinate gets 1, for any contract.
    """

    def __init__(self, policy: AuditPolicy, classes: Sequence[str],
                 weights: Mapping[str, float] | None = None, *, semantics: str = "product",
                 epsilon: float = 0.1, modes: Sequence[str] = ("typed",),
                 relaxation: Mapping[str, str] | None = None,
                 events: str = "expected") -> None:
        if events not in EVENT_RELAXATIONS:
            raise SedContractError(f"unknown event relaxation {events!r}; choose one of "
                                   f"{', '.join(EVENT_RELAXATIONS)}")
        self.events = events
        if semantics not in SEMANTICS:
            raise SedContractError(f"unknown soft semantics {semantics!r}; choose one of "
                                   f"{', '.join(SEMANTICS)}")
        if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
            raise SedContractError(f"epsilon (the sound semantics' error budget) must be a "
                                   f"positive number, got {epsilon!r}")
        modes = tuple(modes)
        if not modes or any(m not in MODES for m in modes):
            raise SedContractError(f"modes must be some of {', '.join(MODES)}, got {modes}")
        self.policy, self.classes = policy, tuple(classes)
        self.semantics, self.epsilon, self.modes = semantics, float(epsilon), modes
        self.contract = policy.parsed
        self.resolver = policy.resolver()
        clauses = {c.name: c for c in self.contract.clauses}
        if weights is None:
            weights = {c.name: 0.0 if c.diagnostic else 1.0 for c in clauses.values()}
        unknown = sorted((k for k in weights if k not in clauses), key=str)
        if unknown:
            hint = YAML_FALSE if any(isinstance(k, bool) for k in unknown) else ""
            raise SedContractError(
                f"no clause {', '.join(map(repr, unknown))} in contract "
                f"{policy.contract_name}; its clauses are {', '.join(clauses)}{hint}")
        for name, weight in weights.items():
            if not is_number(weight) \
                    or not math.isfinite(weight) or weight < 0:
                raise SedContractError(f"the weight of clause {name!r} must be a number >= 0, "
                                       f"got {weight!r}")
        self.weights = {n: float(w) for n, w in weights.items() if w}
        self.witness = self._witnesses(relaxation, clauses)
        self.clauses = [clauses[n] for n in clauses if n in self.weights]
        # the (side, class) of every active signal the frame clauses read
        self.signals = sorted({(a.side, a.cls) for c in self.clauses
                               if isinstance(c, FrameClause)
                               for f in (c.obligation, c.requirement) for a in atoms(f)},
                              key=str)
        threshold = policy.decision.threshold if policy.decision is not None else 0.5
        if not 0 < threshold < 1:
            raise SedContractError(f"the contract loss reads sigmoid posteriors; the decision "
                                   f"threshold {threshold:g} must lie strictly between 0 and 1")
        # logits are recentred on the threshold, so soft truth 0.5 is the decision boundary
        self.offset = math.log(threshold) - math.log1p(-threshold)
        self._check()

    def _witnesses(self, relaxation: Mapping[str, str] | None,
                   clauses: Mapping[str, EventClause | FrameClause]) -> dict[str, str]:
        """Each frame clause's witness relaxation (clause → name): those ``relaxation`` names,
        checked, and by default ``rise`` for a clause with a window over a predicted boundary
        (product semantics; ``noisy_or`` for any other)."""
        given = {} if relaxation is None else relaxation
        if relaxation is not None:
            check_clause_names(self.policy, relaxation, "relaxation",
                               f"one of {', '.join(WITNESSES)}")
        out = {}
        for name, clause in clauses.items():
            if not isinstance(clause, FrameClause) or self.semantics != "product":
                continue
            out[name] = DEFAULT_WITNESS if _boundary_windows(clause) else "noisy_or"
        for name, witness in given.items():
            if witness not in WITNESSES:
                raise SedContractError(f"unknown witness relaxation {witness!r} for clause "
                                       f"{name!r}; choose one of {', '.join(WITNESSES)}")
            clause = clauses[name]
            if not isinstance(clause, FrameClause):
                raise SedContractError(f"clause {name!r} is an event clause; the witness "
                                       f"relaxation {witness!r} applies to the N/F/P windows "
                                       "of frame clauses")
            if not _windows(clause):
                raise SedContractError(f"clause {name!r} has no N/F/P window in its "
                                       f"requirement for the witness relaxation {witness!r}")
            if witness == "rise" and not _boundary_windows(clause):
                raise SedContractError(f"clause {name!r}: the rise witness relaxes N/F/P "
                                       "windows over pred.onset or pred.offset; its "
                                       "requirement has none")
            if self.semantics != "product":
                raise SedContractError(f"the witness relaxation {witness!r} of clause "
                                       f"{name!r} is one of product logic; the "
                                       f"{self.semantics} semantics has its own smooth max")
            out[name] = witness
        return out

    def _check(self) -> None:
        """Relax every weighted clause once on a tiny batch, so a clause without a relaxation
        is refused here (naming it) and not in the middle of training."""
        classes = max(len(self.classes), 1)
        reference = torch.zeros(1, classes, 8, dtype=torch.bool)
        reference[..., 2:5] = True
        try:
            self.terms(torch.zeros(1, classes, 8), reference, torch.tensor([8]))
        except NoRelaxation as exc:
            raise NoRelaxation(f"{exc}; give it weight 0 in the contract loss to train the "
                               "other clauses") from None

    def rows(self, logits: Tensor, reference: Tensor, lengths: Tensor, mode: str
             ) -> tuple[dict[str, Signal], Tensor, Tensor, LogPair, Tensor, Tensor]:
        """Signals, reference rows, row lengths, the soft ``pred.active`` rows, the class of
        each row and the rows' recentred logits (union: the max over classes) for one mode."""
        b, c, t = logits.shape
        z = logits - self.offset
        named: dict[str, Signal] = {}
        if mode == "typed":
            ref = reference.reshape(b * c, t)
            z_rows = z.reshape(b * c, t)
            pair = LogPair(F.logsigmoid(z_rows), F.logsigmoid(-z_rows))
            row_lengths = lengths.repeat_interleave(c)
            row_class = torch.arange(c, device=logits.device).repeat(b)
        else:
            ref = reference.any(1)
            log_q = F.logsigmoid(-z).sum(1)
            pair = LogPair(log1mexp(log_q), log_q)
            z_rows = z.max(1).values  # the union's robustness: the max over classes
            row_lengths = lengths
            row_class = torch.full((b,), -1, dtype=torch.long, device=logits.device)

        def per_row(x: Tensor) -> Tensor:  # one clip's class trace on each of its rows
            return x[:, None].expand(b, c, t).reshape(b * c, t) if mode == "typed" else x

        for side, cls in self.signals:
            name = signal_name(side, "active", cls)
            if cls is None:
                source = ref if side == "ref" else None
                robust = z_rows
                soft = pair
            else:
                k = self._class_index(cls)
                source = per_row(reference[:, k]) if side == "ref" else None
                robust = per_row(z[:, k])
                soft = LogPair(F.logsigmoid(robust), F.logsigmoid(-robust))
            if source is not None:
                named[name] = Signal(source, "crisp")
            elif self.semantics == "sound":
                named[name] = Signal(robust, "robustness")
            else:
                named[name] = Signal(torch.stack([soft.true, soft.false]), "log_pair")
        return named, ref, row_lengths, pair, row_class, z_rows

    def _class_index(self, cls: str) -> int:
        if cls not in self.classes:
            raise SedContractError(f"the contract names class {cls!r}; the detector's classes "
                                   f"are {', '.join(self.classes) or 'not named'}")
        return self.classes.index(cls)

    def terms(self, logits: Tensor, reference: Tensor, lengths: Tensor
              ) -> dict[str, ClauseTerms]:
        """Soft violations and obligations of every weighted clause, pooled over ``modes``;
        ``logits``/``reference`` are ``[batch, classes, frames]``, ``lengths`` ``[batch]``."""
        if logits.shape != reference.shape or logits.ndim != 3:
            raise SedContractError(f"logits {list(logits.shape)} and reference "
                                   f"{list(reference.shape)} must both be [batch, classes, "
                                   "frames]")
        reference = reference.bool()
        lengths = lengths.to(logits.device).clamp(max=logits.shape[-1])
        out: dict[str, ClauseTerms] = {}
        for mode in self.modes:
            named, ref, row_lengths, pair, row_class, z_rows = self.rows(
                logits, reference, lengths, mode)
            events: SoftEvents | None = None
            shared: SoftTable | None = None  # product logic: atoms derived once per mode
            for clause in self.clauses:
                if isinstance(clause, EventClause):
                    if events is None:
                        events = SoftEvents(ref, row_lengths, pair.true, pair.false,
                                            row_class, self.classes, self.resolver,
                                            relaxation=self.events, logits=z_rows)
                    term = events.clause(clause)
                else:
                    table = shared or self._table(clause, named, ref.shape, row_lengths,
                                                  logits.dtype)
                    if self.semantics == "product":
                        shared = table
                    term = self._frame(clause, table)
                if clause.name in out:
                    term = ClauseTerms(out[clause.name].violations + term.violations,
                                       out[clause.name].obligations + term.obligations)
                out[clause.name] = term
        return out

    def _table(self, clause: FrameClause, named: Mapping[str, Signal], shape: torch.Size,
               lengths: Tensor, dtype: torch.dtype) -> SoftTable:
        """The signals of one mode on a soft backend (sound: with the node budget of
        ``clause``'s deeper formula)."""
        depth = max(smoothing_depth(clause.obligation), smoothing_depth(clause.requirement), 1)
        device = next(iter(named.values())).value.device if named else lengths.device
        ops = make_ops(self.semantics, shape, lengths, dtype=dtype, device=device,
                       node_eps=self.epsilon / depth)
        return SoftTable(named, ops, edges=self.policy.edges)

    def _frame(self, clause: FrameClause, table: SoftTable) -> ClauseTerms:
        ops = table.ops
        obligation = evaluate_tree(clause.obligation, ops, table.lookup, self.resolver)
        witness = self.witness.get(clause.name, "noisy_or")
        relaxed = ops if witness == "noisy_or" else ops.with_witness(witness)
        requirement = evaluate_tree(clause.requirement, relaxed, table.lookup, self.resolver)
        valid = ops.inside(0)
        if self.semantics == "product":
            weight = torch.exp(obligation.true)
            broken = torch.exp(obligation.true + requirement.false)
        else:
            weight = torch.sigmoid(obligation.lower)
            broken = weight * torch.sigmoid(-requirement.lower)
        weight = torch.where(valid, weight.expand(ops.shape), 0.0)
        broken = torch.where(valid, broken.expand(ops.shape), 0.0)
        return ClauseTerms(broken.sum(), weight.sum().detach())

    def __call__(self, logits: Tensor, reference: Tensor, lengths: Tensor
                 ) -> dict[str, Tensor]:
        """Each weighted clause's loss, and ``total`` = the weighted sum."""
        losses = {name: term.loss() for name, term in self.terms(logits, reference,
                                                                  lengths).items()}
        total = sum((self.weights[n] * v for n, v in losses.items()),
                    torch.zeros((), dtype=logits.dtype, device=logits.device))
        return {**losses, "total": total}
