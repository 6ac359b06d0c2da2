"""Front end and detectors: frames on the contract grid, output shapes, receptive fields, and
that training on one batch lowers the loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sedcontract.models import DETECTORS, DilatedCNN, LogMel
from sedcontract.models.detectors import ThresholdDetector, hysteresis
from sedcontract.traces.decision import DecisionPolicy, decide


def test_logmel_frames_are_the_contract_grid():
    front = LogMel(sample_rate=16_000, hop=0.02, n_mels=32)
    wave = torch.zeros(1, 16_000)
    assert front(wave).shape == (1, 32, 50)
    assert front(torch.zeros(2, 16_100)).shape == (2, 32, 50)  # a partial last frame is dropped
    for t in (0.31, 0.51, 0.87):  # a click mid-frame lights up frame floor(t / hop)
        wave = torch.zeros(1, 16_000)
        wave[0, int(t * 16_000)] = 1.0
        energy = front(wave).exp().sum(dim=1)[0]
        assert int(energy.argmax()) == int(t / 0.02)
    with pytest.raises(ValueError, match="whole number of samples"):
        LogMel(sample_rate=16_000, hop=0.0201)


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_detectors_keep_the_frame_axis(name):
    model = DETECTORS[name](features=32, classes=3)
    out = model(torch.randn(2, 32, 77))
    assert set(out) == {"activity", "onset", "offset"}
    assert all(v.shape == (2, 3, 77) for v in out.values())


def test_dilated_receptive_field_grows_exponentially():
    model = DilatedCNN(features=4, classes=1, blocks=4, kernel=3).eval()
    assert model.receptive_field == 1 + 2 * 15
    x = torch.zeros(1, 4, 101, requires_grad=True)
    model(x)["activity"][0, 0, 50].backward()
    reached = torch.nonzero(x.grad.abs().sum(dim=1)[0]).flatten()
    assert int(reached.max() - reached.min()) + 1 == model.receptive_field


@pytest.mark.parametrize("name", sorted(set(DETECTORS) - {"threshold"}))
def test_one_batch_overfits(name):
    torch.manual_seed(0)
    model = DETECTORS[name](features=16, classes=2)
    x = torch.randn(4, 16, 60)
    target = (torch.rand(4, 2, 60) > 0.5).float()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(60):
        optimiser.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x)["activity"], target)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def synthetic_features(seed: int, classes: int = 2, features: int = 32, frames: int = 200):
    """Class c raises log energy in mel bins 8c..8c+7 while active; noise elsewhere."""
    g = torch.Generator().manual_seed(seed)
    activity = torch.zeros(4, classes, frames)
    for b in range(4):
        for c in range(classes):
            t = int(torch.randint(0, 30, (1,), generator=g))
            while t < frames:
                length = int(torch.randint(15, 40, (1,), generator=g))
                activity[b, c, t:t + length] = 1
                t += length + int(torch.randint(15, 40, (1,), generator=g))
    x = torch.randn(4, features, frames, generator=g) * 0.8
    for c in range(classes):
        x[:, 8 * c + 8:8 * c + 16] += 4.0 * activity[:, c:c + 1]
    onset = activity * (1 - torch.nn.functional.pad(activity, (1, 0))[..., :-1])
    return x, activity, onset


def test_threshold_detector_fits_bands_and_thresholds_without_gradients():
    x, activity, onset = synthetic_features(0)
    model = ThresholdDetector(features=32, classes=2).fit(x, activity, onset)
    assert not any(p.requires_grad for p in model.parameters())
    assert model.start.tolist() == [8, 16]  # the bands where each class lives
    test_x, test_activity, _ = synthetic_features(1)
    decided = model.decide(test_x)
    tp = (decided & test_activity.bool()).sum().item()
    f1 = 2 * tp / (decided.sum().item() + test_activity.sum().item())
    assert f1 > 0.95
    assert (model(test_x)["activity"] > 0).shape == (4, 2, 200)
    # hysteresis: a signal flickering between the thresholds does not toggle
    flicker = torch.tensor([[[0.0, 2.0, 0.9, 1.1, 0.9, 1.1, 0.4, 0.9]]])
    out = hysteresis(flicker, torch.tensor([0.5]), torch.tensor([1.5]))
    assert out[0, 0].tolist() == [False, True, True, True, True, True, False, False]
    with pytest.raises(RuntimeError, match="fit must run"):
        ThresholdDetector(features=32, classes=2).decide(test_x)


def test_the_detectors_hysteresis_continues_at_low_and_agrees_with_the_policy_at_ties():
    """A detector run continues while the score is at or above low (a score equal to low
    keeps it on) and starts only strictly above high; on scores that tie with the thresholds
    everywhere it is the decision policy's hysteresis, frame for frame."""
    import itertools

    import numpy as np

    from sedcontract.traces.decision import DecisionPolicy, decide

    # low 0.25, high 0.75: on at 1.0, held at 0.25 = low (twice), off at 0.0; 0.25 after an
    # off frame and 0.75 = high do not start a run; 1.0 does, and 0.5 >= low holds it
    x = torch.tensor([[[1.0, 0.25, 0.25, 0.0, 0.25, 0.75, 1.0, 0.5]]])
    out = hysteresis(x, torch.tensor([0.25]), torch.tensor([0.75]))
    assert out[0, 0].tolist() == [True, True, True, False, False, False, True, True]
    # every sequence of 6 frames over {0, 0.25, 0.5, 0.75, 1} (exact in float32): ties at low,
    # at high and at both when low == high
    grid = torch.tensor(list(itertools.product((0.0, 0.25, 0.5, 0.75, 1.0), repeat=6)))
    for low, high in ((0.25, 0.75), (0.5, 0.5), (0.25, 0.5), (0.0, 1.0)):
        detector = hysteresis(grid[:, None, :], torch.tensor(low), torch.tensor(high))[:, 0]
        policy = decide(grid.numpy()[:, :, None], DecisionPolicy(threshold=high, low=low),
                        0.02)[:, :, 0]
        differ = np.flatnonzero((detector.numpy() != policy).any(axis=1))
        assert differ.size == 0, (low, high, grid[differ[0]].tolist())


def test_threshold_search_picks_the_pair_a_pair_by_pair_search_picks():
    """The batched search over every low ≤ high pair equals the plain double loop (first best
    wins), whatever the batch size."""
    x, activity, onset = synthetic_features(3)
    x = x + 1.5 * torch.randn_like(x)  # overlapping classes: many near-ties
    fitted = [ThresholdDetector(features=32, classes=2).fit(x, activity, onset, quantiles=11,
                                                            pairs_per_pass=k) for k in (1, 7, 66)]
    reference = fitted[0]
    energy = reference.band_energy(x)
    for c in range(2):
        levels = torch.quantile(energy[:, c].flatten(), torch.linspace(0.02, 0.98, 11))
        best = (-1.0, None, None)
        for i, low in enumerate(levels):
            for high in levels[i:]:
                decided = hysteresis(energy[:, c:c + 1], low, high)[:, 0]
                tp = (decided & activity[:, c].bool()).sum().item()
                f1 = 2 * tp / (decided.sum().item() + activity[:, c].sum().item())
                if f1 > best[0]:
                    best = (f1, float(low), float(high))
        for model in fitted:
            assert (float(model.low[c]), float(model.high[c])) == best[1:]


def test_the_loss_ignores_every_padded_frame():
    """Clips of 10 and 7 frames padded to 10: the loss is the mean BCE over the 17 valid
    frames (times classes) of each head, whatever the padded frames hold."""
    import torch.nn.functional as F

    from sedcontract.contracts.policy import AuditPolicy
    from sedcontract.lightning.losses import FrameBCE

    bce = FrameBCE(policy=AuditPolicy(), weights={"activity": 1.0})
    torch.manual_seed(0)
    logits = torch.randn(2, 2, 10)
    target = (torch.rand(2, 2, 10) > 0.5).float()
    logits[1, :, 7:], target[1, :, 7:] = 50.0, 0.0  # padding: wildly wrong if it counted
    batch = {"activity": target, "frames": torch.tensor([10, 7])}
    loss, parts = bce({"activity": logits}, batch)
    parts = {k.removeprefix("loss/"): v for k, v in parts.items()}
    valid = torch.cat([F.binary_cross_entropy_with_logits(logits[0], target[0],
                                                          reduction="none").flatten(),
                       F.binary_cross_entropy_with_logits(logits[1, :, :7], target[1, :, :7],
                                                          reduction="none").flatten()])
    assert torch.isclose(parts["activity"], valid.mean()) and torch.isclose(loss, valid.mean())


def test_hysteresis_is_the_frame_loop_of_the_threshold_detector():
    """The vectorised hysteresis of the decision policy against the frame-by-frame loop of
    ``models.detectors.hysteresis`` (an independent implementation) on random scores."""
    import torch

    from sedcontract.models.detectors import hysteresis as loop

    rng = np.random.default_rng(7)
    for _ in range(20):
        scores = rng.random((4, 60, 3))  # [clips, frames, classes]
        low, high = sorted(rng.uniform(0.1, 0.9, 2))
        got = decide(scores, DecisionPolicy(threshold=high, low=low), 0.02)
        want = loop(torch.tensor(scores).transpose(1, 2), torch.tensor(low),
                    torch.tensor(high)).transpose(1, 2).numpy()
        np.testing.assert_array_equal(got, want)
    # a run starts above the threshold and continues while at or above low
    column = np.array([0.45, 0.6, 0.45, 0.4, 0.39, 0.45, 0.6])[:, None]
    assert decide(column, DecisionPolicy(threshold=0.5, low=0.4), 0.02)[:, 0].tolist() == \
        [False, True, True, True, False, False, True]
    assert DecisionPolicy(threshold=0.5, low=0.4).describe() == \
        "active from score > 0.5 while score >= 0.4 (hysteresis)"
