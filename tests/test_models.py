"""Front end and detectors: frames on the contract grid, output shapes, receptive fields, and
that training on one batch lowers the loss."""

from __future__ import annotations

import pytest
import torch

from sedcontract.models import DETECTORS, DilatedCNN, LogMel


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


@pytest.mark.parametrize("name", sorted(DETECTORS))
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
