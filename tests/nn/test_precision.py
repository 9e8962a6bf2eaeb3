"""The fast paths of rankcut.nn: bfloat16 autocast (``precision``), the attention kernels, the
cheap dropout masks. Each must give what the plain path gives (within bfloat16 rounding), keep
padding out of a list's outputs and stay reproducible under a seed. Speed itself is measured in
benchmarks/bench_neural_speed.py, not here."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nn_testdata import pad, prefix_mask  # noqa: E402
from torch import Tensor, nn  # noqa: E402

from rankcut.cutters import make_cutter  # noqa: E402
from rankcut.cutters.checkpoint import load_checkpoint  # noqa: E402
from rankcut.data.lists import Posting, RankedLists  # noqa: E402
from rankcut.nn.inputs import InputEncoder  # noqa: E402
from rankcut.nn.losses import bicut_loss, expected_metric_loss, raml_loss, recall_bins_loss  # noqa: E402
from rankcut.nn.models import AttnCutNet, BiCutNet, ChoppyNet, _dropout, _self_attention  # noqa: E402
from rankcut.nn.options import PRECISIONS, check_precision  # noqa: E402
from rankcut.nn.training import (  # noqa: E402
    autocast,
    bf16_lstm_runs,
    fit_network,
    has_amx_bf16,
    resolve_precision,
    runnable_precision,
)

# heads of 64 (AttnCut's width) and of 16 (Choppy's) take different bf16 training kernels
NETS: dict[str, Callable[[int], nn.Module]] = {
    "attncut": lambda f: AttnCutNet(f, hidden=64, heads=2, mlp_hidden=16),
    "attncut-bins": lambda f: AttnCutNet(f, hidden=8, heads=2, mlp_hidden=16, n_outputs=5),
    "bicut": lambda f: BiCutNet(f, hidden=8),
    "choppy": lambda f: ChoppyNet(f, d_model=32, heads=2, layers=2),
    "choppy-narrow": lambda f: ChoppyNet(f, d_model=16, heads=4, layers=2),
}


#: the networks with an LSTM run in bf16 only where the CPU can (AVX-512 BF16 or AMX); elsewhere
#: training refuses bf16 (test_bf16_is_refused_for_an_lstm_the_cpu_cannot_run)
LSTM_NETS = {"attncut", "attncut-bins", "attncut-rc", "bicut"}
NO_BF16_LSTM = "this CPU cannot run an LSTM in bfloat16 (no AVX-512 BF16 or AMX): rankcut refuses bf16 here"


def bf16_here(name: str) -> Any:
    """``name`` as a parameter, skipped where its bf16 LSTM cannot run on this CPU."""
    lacking = name in LSTM_NETS and not bf16_lstm_runs()
    return pytest.param(name, marks=pytest.mark.skipif(lacking, reason=NO_BF16_LSTM))


def loss_of(name: str, out: Tensor, mask: Tensor) -> Tensor:
    rewards = torch.linspace(0, 1, mask.shape[1]).expand(mask.shape[0], -1)
    if name == "bicut":
        return bicut_loss(out, (rewards > 0.5).float(), mask, relevant_share=0.5)
    if name == "attncut-bins":
        return recall_bins_loss(out, torch.zeros(mask.shape, dtype=torch.long), mask)
    if name.startswith("choppy"):
        return expected_metric_loss(out, rewards, mask)
    return raml_loss(out, rewards, mask)


# ---------------------------------------------------------------------------- options
def test_precision_options_are_checked() -> None:
    assert PRECISIONS == ("fp32", "bf16", "auto")
    for p in PRECISIONS:
        assert check_precision(p) == p
    for bad in ("fp16", "BF16", 16, None):
        with pytest.raises(ValueError, match="precision must be one of"):
            check_precision(bad)
    with pytest.raises(ValueError, match="precision must be one of"):
        make_cutter("attncut", precision="half")
    assert resolve_precision("fp32") == "fp32" and resolve_precision("bf16") == "bf16"
    assert resolve_precision("auto") == ("bf16" if has_amx_bf16() else "fp32")


@pytest.mark.parametrize("name", ["attncut", "attncut-rc", "bicut", "choppy"])
def test_every_neural_cutter_takes_a_precision(name: str) -> None:
    cutter = make_cutter(name, precision="bf16")
    assert cutter.get_params()["precision"] == "bf16"
    assert make_cutter(name).get_params()["precision"] == "fp32"


# ---------------------------------------------------------------------------- networks in bf16
@pytest.mark.parametrize("name", [bf16_here(n) for n in sorted(NETS)])
def test_bf16_outputs_are_close_to_fp32_and_ignore_padding(name: str) -> None:
    torch.manual_seed(0)
    net = NETS[name](3).eval()
    a, b = torch.randn(5, 3), torch.randn(9, 3)
    x, mask = torch.stack([pad(a, 9), b]), prefix_mask([5, 9], 9)
    with torch.inference_mode():
        full = net(x, mask)
        with autocast("bf16"):
            half = net(x, mask)
            alone = net(a[None], torch.ones(1, 5, dtype=torch.bool))[0]
    assert half.dtype == torch.bfloat16
    listed = mask if full.ndim == 2 else mask[..., None].expand_as(full)
    torch.testing.assert_close(half.float()[listed], full[listed], rtol=0.05, atol=0.05)
    torch.testing.assert_close(half[0, :5].float(), alone.float(), rtol=0.02, atol=0.02)
    assert torch.isfinite(half.float()[listed]).all()


@pytest.mark.parametrize("name", [bf16_here(n) for n in sorted(NETS)])
def test_bf16_training_step_gives_float32_gradients_close_to_fp32(name: str) -> None:
    torch.manual_seed(0)
    net = NETS[name](3)
    net.eval()  # dropout off: the two passes must see the same network
    x, mask = torch.randn(3, 8, 3), prefix_mask([8, 5, 1], 8)
    grads = []
    for precision in ("fp32", "bf16"):
        net.zero_grad()
        with autocast(precision):
            out = net(x, mask)
        loss_of(name, out.float(), mask).backward()
        grads.append(torch.cat([p.grad.flatten() for p in net.parameters() if p.grad is not None]))
    assert all(p.dtype == torch.float32 for p in net.parameters())
    assert grads[1].dtype == torch.float32 and torch.isfinite(grads[1]).all()
    cosine = torch.nn.functional.cosine_similarity(grads[0], grads[1], dim=0)
    assert cosine > 0.99


# ---------------------------------------------------------------------------- attention kernels
@pytest.mark.parametrize(("width", "heads"), [(16, 2), (16, 4), (128, 2)])
@pytest.mark.parametrize("padded", [False, True])
def test_self_attention_is_multihead_attention(width: int, heads: int, padded: bool) -> None:
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(width, heads, batch_first=True)
    h = torch.randn(3, 7, width, requires_grad=True)
    padding = ~prefix_mask([7, 4, 1], 7) if padded else None
    expected = attention(h, h, h, key_padding_mask=padding, need_weights=False)[0]
    got = _self_attention(h, attention, padding)
    listed = torch.ones(3, 7, dtype=torch.bool) if padding is None else ~padding
    torch.testing.assert_close(got[listed], expected[listed], rtol=1e-5, atol=1e-6)
    (g1,) = torch.autograd.grad(expected[listed].sum(), h)
    (g2,) = torch.autograd.grad(got[listed].sum(), h)
    torch.testing.assert_close(g2, g1, rtol=1e-4, atol=1e-5)
    with torch.inference_mode():  # the inference kernel
        torch.testing.assert_close(_self_attention(h, attention, padding)[listed], expected.detach()[listed],
                                   rtol=1e-5, atol=1e-6)
    with autocast("bf16"):  # the bf16 training kernels: explicit for heads of 64, float32 flash below
        half = _self_attention(h, attention, padding)
    torch.testing.assert_close(half.float()[listed], expected[listed], rtol=0.05, atol=0.05)


def test_choppy_layers_compute_what_transformer_encoder_does() -> None:
    torch.manual_seed(0)
    net = ChoppyNet(3, d_model=16, heads=4, layers=2, dropout=0.0)
    x, mask = torch.randn(3, 6, 3), prefix_mask([6, 2, 4], 6)
    for training in (True, False):
        net.train(training)
        with torch.set_grad_enabled(training):
            got = net(x, mask)
            h = net.embed(x.masked_fill(~mask[:, :, None], 0.0)) + net.position.weight[:6]
            expected = net.output(net.encoder(h, src_key_padding_mask=~mask)).squeeze(-1)
        torch.testing.assert_close(got[mask], expected[mask], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- dropout
def test_dropout_rate_scale_and_seed() -> None:
    x = torch.ones(400, 500)
    torch.manual_seed(3)
    a = _dropout(x, 0.1, True)
    torch.manual_seed(3)
    assert torch.equal(_dropout(x, 0.1, True), a)
    assert not torch.equal(_dropout(x, 0.1, True), a)  # the generator moved on
    kept = a != 0
    assert abs(kept.float().mean().item() - 0.9) < 0.003  # 200,000 draws: sd 0.0007
    assert torch.allclose(a[kept], torch.tensor(65536 / (65536 - 6554)))
    assert abs(a.mean().item() - 1.0) < 0.004
    assert _dropout(x, 0.1, False) is x and _dropout(x, 0.0, True) is x
    odd = torch.ones(3, 5, 7, dtype=torch.bfloat16)  # numel not a multiple of 4
    assert _dropout(odd, 0.5, True).shape == odd.shape
    assert (_dropout(torch.ones(1000), 0.999999, True) == 0).all()


def test_dropout_gradient_is_the_mask() -> None:
    x = torch.randn(50, 40, requires_grad=True)
    torch.manual_seed(0)
    y = _dropout(x, 0.3, True)
    y.sum().backward()
    assert x.grad is not None
    torch.testing.assert_close(x.grad, torch.where(y != 0, 1 / (1 - 19661 / 65536), 0.0))


# ---------------------------------------------------------------------------- training and cutters
def judged_lists(n: int = 14, seed: int = 0) -> RankedLists:
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n):
        length = int(rng.integers(4, 12))
        r = int(rng.integers(1, length))
        scores = np.sort(np.r_[5 + rng.random(r), 1 + rng.random(length - r)])[::-1]
        run[f"q{q}"] = [Posting(f"d{j}", float(s), j + 1) for j, s in enumerate(scores)]
        qrels[f"q{q}"] = {f"d{j}": 1 for j in range(r)}
    return RankedLists.from_postings(run, qrels)


LISTS = judged_lists()


@pytest.mark.skipif(not bf16_lstm_runs(), reason=NO_BF16_LSTM)
def test_bf16_fit_network_is_seeded_and_keeps_float32_weights() -> None:
    enc = InputEncoder.fit(LISTS)

    def train(seed: int) -> tuple[nn.Module, Any]:
        torch.manual_seed(0)
        net = AttnCutNet(enc.n_features, hidden=32, heads=1, mlp_hidden=16)
        result = fit_network(net, lambda out, b, epoch: raml_loss(out, b.rewards, b.mask), None, LISTS,
                             encoder=enc, epochs=3, patience=5, batch_size=4, lr=1e-2, seed=seed,
                             precision="bf16")
        return net, result

    (net_a, res_a), (net_b, res_b) = train(2), train(2)
    assert all(p.dtype == torch.float32 for p in net_a.parameters())
    assert all(torch.equal(a, b) for a, b in zip(net_a.state_dict().values(), net_b.state_dict().values(),
                                                 strict=True))
    assert [e["train_loss"] for e in res_a.history] == [e["train_loss"] for e in res_b.history]
    assert all(math.isfinite(e["train_loss"]) and math.isfinite(e["val_loss"]) for e in res_a.history)
    with pytest.raises(ValueError, match="precision must be one of"):
        fit_network(net_a, lambda out, b, epoch: out.sum(), None, LISTS, encoder=enc, precision="fp16")


@pytest.mark.parametrize("name", [bf16_here(n) for n in ("attncut", "attncut-rc", "bicut", "choppy")])
def test_bf16_cutters_cut_within_range_reproducibly_and_save_their_precision(name: str,
                                                                             tmp_path: Path) -> None:
    cutter: Any = make_cutter(name, epochs=2, seed=4, precision="bf16").fit(LISTS)
    cuts = cutter.predict(LISTS)
    assert cuts.dtype == np.int64 and ((cuts >= 1) & (cuts <= LISTS.lengths)).all()
    again = make_cutter(name, epochs=2, seed=4, precision="bf16").fit(LISTS)
    assert np.array_equal(again.predict(LISTS), cuts)
    for net in cutter.networks:
        a, b = getattr(cutter, f"{net}_").state_dict(), getattr(again, f"{net}_").state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)
    back = load_checkpoint(cutter.save(tmp_path / "model"))
    assert back.precision == "bf16" and np.array_equal(back.predict(LISTS), cuts)


def test_the_bf16_probe_leaves_the_random_state_alone() -> None:
    state = torch.get_rng_state()
    bf16_lstm_runs.cache_clear()
    assert isinstance(bf16_lstm_runs(), bool)
    assert torch.equal(torch.get_rng_state(), state)


def test_bf16_is_refused_for_an_lstm_the_cpu_cannot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where torch has no bf16 LSTM (an AVX2-only CPU), training AttnCut or BiCut in bf16 is refused
    by name before any step, Choppy (no LSTM) still trains in bf16, and a model saved in bf16
    predicts in fp32 with a warning, as an fp32 model does."""
    import rankcut.nn.training as training

    monkeypatch.setattr(training, "bf16_lstm_runs", lambda: False)
    enc = InputEncoder.fit(LISTS)
    net = AttnCutNet(enc.n_features, hidden=8, heads=1, mlp_hidden=8)
    before = [p.clone() for p in net.parameters()]
    with pytest.raises(ValueError, match=r"precision bf16: this CPU cannot run an LSTM.*--precision fp32"):
        fit_network(net, lambda out, b, epoch: raml_loss(out, b.rewards, b.mask), None, LISTS, encoder=enc,
                    epochs=1, precision="bf16")
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))   # untouched
    with pytest.raises(ValueError, match="precision bf16"):
        make_cutter("bicut", epochs=1, precision="bf16").fit(LISTS)
    assert runnable_precision("bf16", [NETS["choppy"](3)]) == "bf16"
    assert runnable_precision("fp32", [net]) == "fp32"
    cutter: Any = make_cutter("bicut", epochs=1, seed=2).fit(LISTS)
    cuts = cutter.predict(LISTS)
    cutter.precision = "bf16"   # as loaded from a checkpoint trained on a CPU that runs bf16
    with pytest.warns(UserWarning, match="trained in bf16, but this CPU cannot .* predicts in fp32"):
        assert np.array_equal(cutter.predict(LISTS), cuts)


def test_a_checkpoint_saved_before_precision_existed_loads_as_fp32(tmp_path: Path) -> None:
    import json

    cutter: Any = make_cutter("bicut", epochs=1).fit(LISTS)
    folder = cutter.save(tmp_path / "old")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    del config["params"]["precision"]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert load_checkpoint(folder).precision == "fp32"
