"""The modules issue 31 adds natively (core/nn/layers.h): ReLU6, Hardtanh, SiLU, Hardsigmoid,
Hardswish, MaxPool2d(ceil_mode=True), AdaptiveAvgPool2d, ChannelShuffle, StochasticDepth, the mean
over several dimensions and cat, each against PyTorch's forward and backward (exact where the op
is exact, within a few float32 roundings where lockstep's order of additions or its correctly
rounded sigmoid differs), and a fixed-input digest that the npm package's test
(bindings/wasm/test/nn-modules.test.mjs) must reproduce bit for bit."""
import numpy as np
import pytest

import lockstep as ls
from lockstep import nn
from lockstep.nn import functional as F

torch = pytest.importorskip("torch")

U = 2.0 ** -24  # float32's unit roundoff


def pair(array, requires_grad=True):
    """The same float32 values as a lockstep and a torch tensor, both requiring gradients."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    a = ls.tensor(array.copy())
    a.requires_grad = requires_grad
    t = torch.tensor(array.copy(), requires_grad=requires_grad)
    return a, t


def values(rng, shape, scale=4.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def run_both(ls_fn, torch_fn, array, seed=0):
    """Outputs and input gradients of sum(f(x) * w) for a fixed random w, for both."""
    a, t = pair(array)
    ya, yt = ls_fn(a), torch_fn(t)
    w = values(np.random.default_rng(seed + 100), tuple(yt.shape), 1.0)
    (ya * ls.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    return ya.detach().numpy(), yt.detach().numpy(), a.grad.numpy(), t.grad.numpy()


def close(got, want, rtol):
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


BOUNDS = np.array([-7.0, -6.0, -3.0001, -3.0, -2.9999, -1.0, -0.0, 0.0, 1e-8, 0.5, 2.9999998, 3.0, 3.0001, 5.9999995,
                   6.0, 6.0000005, 9.0], dtype=np.float32)


@pytest.mark.parametrize("name", ["ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "SiLU"])
def test_activations_agree_with_torch_at_the_bounds_and_elsewhere(name):
    rng = np.random.default_rng(1)
    x = np.concatenate([BOUNDS, values(rng, 500)])
    make = {"Hardtanh": lambda m: m(-2.0, 2.5)}.get(name, lambda m: m())
    got, want, ga, gt = run_both(make(getattr(nn, name)), make(getattr(torch.nn, name)), x)
    if name in ("ReLU6", "Hardtanh"):  # clamps: exact, and the gradient is 0 at the bounds, as torch's
        assert np.array_equal(got, want) and np.array_equal(ga, gt)
    elif name == "Hardsigmoid":  # one addition and one division: exact; the gradient g / 6 within an ulp
        assert np.array_equal(got, want)
        assert np.array_equal(ga == 0, gt == 0)
        close(ga, gt, 2 * U)
    elif name == "Hardswish":
        close(got, want, 2 * U)
        assert np.array_equal(ga == 0, gt == 0)
        close(ga, gt, 4 * U)
    else:  # SiLU: x * sigmoid(x) with a correctly rounded sigmoid; torch divides by 1 + exp(-x)
        close(got, want, 4 * U)
        close(ga, gt, 16 * U)
    # The same values through the functional API.
    fn = {"ReLU6": F.relu6, "Hardtanh": lambda t: F.hardtanh(t, -2.0, 2.5), "Hardsigmoid": F.hardsigmoid,
          "Hardswish": F.hardswish, "SiLU": F.silu}[name]
    assert np.array_equal(fn(ls.tensor(x)).numpy(), got)


def test_the_gradients_at_exactly_the_bounds_are_torchs():
    # 64 elements: torch's vectorised backward (its scalar tail gives hardswish 1.5 instead of 1 at
    # exactly 3; lockstep follows the vectorised rule, as the aten route does).
    x = np.tile(np.array([-3.0, 0.0, 3.0, 6.0], dtype=np.float32), 16)
    for ls_m, torch_m in [(nn.ReLU6(), torch.nn.ReLU6()), (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
                          (nn.Hardswish(), torch.nn.Hardswish())]:
        a, t = pair(x)
        ls_m(a).sum().backward()
        torch_m(t).sum().backward()
        assert np.array_equal(a.grad.numpy(), t.grad.numpy()), (ls_m, a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("config", [(3, 2, 0, 13, 13), (3, 2, 0, 14, 15), (2, 2, 0, 7, 5), (3, 2, 1, 6, 7),
                                    (3, 3, 1, 7, 5), ((3, 2), (2, 1), 0, 8, 9), (2, 2, 0, 8, 8)])
def test_max_pool2d_ceil_mode_agrees_with_torch_exactly(config):
    k, s, p, h, w = config
    x = values(np.random.default_rng(h * w), (2, 3, h, w))
    got, want, ga, gt = run_both(nn.MaxPool2d(k, s, p, ceil_mode=True),
                                 torch.nn.MaxPool2d(k, s, p, ceil_mode=True), x)
    assert got.shape == want.shape and np.array_equal(got, want) and np.array_equal(ga, gt)
    fa = F.max_pool2d(ls.tensor(x), k, s, p, ceil_mode=True).numpy()
    assert np.array_equal(fa, want)
    assert nn.MaxPool2d(k, s, p, ceil_mode=True).ceil_mode


@pytest.mark.parametrize("size", [1, (1, 1), (7, 3), (3, 4), (5, 5), (2, None), (None, 4), (4, 7), (9, 10)])
def test_adaptive_avg_pool2d_agrees_with_torch(size):
    x = values(np.random.default_rng(5), (2, 3, 7, 6))
    got, want, ga, gt = run_both(nn.AdaptiveAvgPool2d(size), torch.nn.AdaptiveAvgPool2d(size), x)
    close(got, want, 8 * U)
    close(ga, gt, 4 * U)
    assert np.array_equal(F.adaptive_avg_pool2d(ls.tensor(x), size).numpy(), got)
    # [C, H, W] too
    assert np.array_equal(nn.AdaptiveAvgPool2d(size)(ls.tensor(x[0])).numpy(), got[0])


def test_adaptive_avg_pool2d_one_is_the_mean_over_h_and_w():
    x = ls.tensor(values(np.random.default_rng(6), (2, 5, 7, 7)))
    assert np.array_equal(nn.AdaptiveAvgPool2d(1)(x).numpy(), ls.mean(x, (2, 3), keepdim=True).numpy())


@pytest.mark.parametrize("dims,keepdim", [((2, 3), False), ((1, 3), True), ((-1, 0), False), ((0, 1, 2, 3), False),
                                          ([2], True), ((3, 1, 2), True)])
def test_mean_over_several_dims_agrees_with_torch(dims, keepdim):
    x = values(np.random.default_rng(7), (3, 4, 5, 6))
    got, want, ga, gt = run_both(lambda t: t.mean(dims, keepdim=keepdim),
                                 lambda t: t.mean(dims, keepdim=keepdim), x)
    close(got, want, 8 * U)
    close(ga, gt, U)
    assert np.array_equal(ls.mean(ls.tensor(x), dims, keepdim).numpy(), got)


def test_cat_agrees_with_torch_exactly():
    rng = np.random.default_rng(8)
    parts = [values(rng, (2, n, 3)) for n in (1, 4, 2)]
    pairs = [pair(p) for p in parts]
    ya = ls.cat([a for a, _ in pairs], 1)
    yt = torch.cat([t for _, t in pairs], 1)
    assert np.array_equal(ya.detach().numpy(), yt.detach().numpy())
    w = values(rng, tuple(yt.shape), 1.0)
    (ya * ls.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    for a, t in pairs:
        assert np.array_equal(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("groups,shape", [(2, (2, 6, 3, 4)), (3, (1, 6, 5, 5)), (4, (3, 8, 2, 2)), (1, (2, 4, 2, 2))])
def test_channel_shuffle_agrees_with_torch_exactly(groups, shape):
    x = values(np.random.default_rng(9), shape)
    n, c = shape[:2]
    # torch 1.13 has no derivative for channel_shuffle: torchvision's view/transpose/view for the gradient.
    shuffle = lambda t: t.view(n, groups, c // groups, *shape[2:]).transpose(1, 2).reshape(shape)  # noqa: E731
    got, want, ga, gt = run_both(nn.ChannelShuffle(groups), shuffle, x)
    assert np.array_equal(got, want) and np.array_equal(ga, gt)
    assert np.array_equal(got, torch.nn.ChannelShuffle(groups)(torch.tensor(x)).numpy())
    assert np.array_equal(F.channel_shuffle(ls.tensor(x), groups).numpy(), want)
    with pytest.raises(ls.ArgumentError, match="divide"):
        nn.ChannelShuffle(5)(ls.tensor(x))


class _FixedNoise:
    """torchvision's stochastic_depth with a given keep mask instead of its own draws."""

    def __init__(self, keep):
        self.keep = keep

    def __call__(self, x, p):
        noise = torch.tensor(self.keep)
        if 1.0 - p > 0.0:
            noise = noise.div_(1.0 - p)
        return x * noise


@pytest.mark.parametrize("mode", ["row", "batch"])
def test_stochastic_depth_is_torchvisions_with_lockstep_masks(mode):
    p = 0.3
    x = values(np.random.default_rng(10), (64, 3, 2, 2))
    sd = nn.StochasticDepth(p, mode, generator=ls.Generator(3, "dropout/0"))
    a, t = pair(x)
    ya = sd(a)
    y = ya.detach().numpy()
    scale = np.float32(1.0) / np.float32(1.0 - np.float32(p))
    keep = (np.abs(y).reshape(64, -1).sum(1) > 0).astype(np.float32)
    if mode == "batch":
        assert keep.min() == keep.max()
        keep = keep[:1]
    else:
        assert 5 < (1 - keep).sum() < 40  # about 0.3 of 64 rows dropped
    shape = (len(keep), 1, 1, 1)
    want = _FixedNoise(keep.reshape(shape))(t, p)
    assert np.array_equal(y, want.detach().numpy())
    w = values(np.random.default_rng(11), x.shape, 1.0)
    (ya * ls.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    assert np.array_equal(a.grad.numpy(), t.grad.numpy())
    assert np.all((y == 0) | (y == x * scale))
    assert sd.generator.offset == (64 if mode == "row" else 1)
    # Eval mode and p == 0: identity; p == 1: zeros (torchvision's).
    sd.eval()
    assert np.array_equal(sd(ls.tensor(x)).numpy(), x)
    assert np.array_equal(nn.StochasticDepth(0.0, mode)(ls.tensor(x)).numpy(), x)
    assert not np.any(nn.StochasticDepth(1.0, mode)(ls.tensor(x)).numpy())
    with pytest.raises(ls.ArgumentError, match="mode"):
        nn.StochasticDepth(0.1, "rows")


def test_stochastic_depth_streams_follow_the_dropout_rule():
    ls.manual_seed(5)
    model = nn.Sequential(nn.Dropout(0.1), nn.StochasticDepth(0.2, "row"), nn.StochasticDepth(0.2, "row"))
    # Made without a generator: the next default streams "dropout/1", "dropout/2".
    assert model[1].generator.stream == ls.Generator(5, "dropout/1").stream
    assert model[2].generator.stream == ls.Generator(5, "dropout/2").stream
    nn.seed_dropout_streams(model, 9)
    assert model[1].generator.stream == ls.Generator(9, "dropout/1").stream and model[1].generator.seed == 9
    x = ls.ones(32, 4)
    a, b = model[1](x).numpy(), model[2](x).numpy()
    assert not np.array_equal(a, b)  # two streams
    nn.seed_dropout_streams(model, 9)
    assert np.array_equal(model[1](x).numpy(), a)  # the same masks again from offset 0
    f = F.stochastic_depth(x, 0.5, "row", generator=ls.Generator(9, "dropout/1"))
    assert np.array_equal(f.numpy() != 0, nn.StochasticDepth(0.5, "row", ls.Generator(9, "dropout/1"))(x).numpy() != 0)


def test_refusals_name_the_option():
    with pytest.raises(ls.ArgumentError, match="dilation"):
        nn.MaxPool2d(3, dilation=2)
    with pytest.raises(ls.ArgumentError, match="output_size"):
        nn.AdaptiveAvgPool2d(0)
    with pytest.raises(ls.ArgumentError, match="min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(ls.ArgumentError, match=r"\[0, 1\]"):
        nn.StochasticDepth(1.5, "row")


# ---- the digest the npm package must reproduce ------------------------------------------------------

def fixed_input(shape):
    """x[i] = ((37 i) mod 113 - 56) / 8: exact float32 values in [-7, 7], bounds included."""
    n = int(np.prod(shape))
    return (((np.arange(n) * 37) % 113 - 56) / 8).astype(np.float32).reshape(shape)


def fixed_weight(shape):
    """w[i] = ((11 i) mod 7 - 3) / 4."""
    n = int(np.prod(shape))
    return (((np.arange(n) * 11) % 7 - 3) / 4).astype(np.float32).reshape(shape)


def digest_cases():
    """(name, function of a tensor) in the order of the npm test's table."""
    g = lambda: ls.Generator(7, "dropout/0")  # noqa: E731
    return [
        ("relu6", nn.ReLU6()), ("hardtanh", nn.Hardtanh(-2.0, 2.5)), ("silu", nn.SiLU()),
        ("hardsigmoid", nn.Hardsigmoid()), ("hardswish", nn.Hardswish()),
        ("maxpool_ceil", nn.MaxPool2d(3, 2, ceil_mode=True)), ("maxpool_ceil_pad", nn.MaxPool2d(3, 2, 1, ceil_mode=True)),
        ("adaptive_1", nn.AdaptiveAvgPool2d(1)), ("adaptive_3x4", nn.AdaptiveAvgPool2d((3, 4))),
        ("adaptive_7x3", nn.AdaptiveAvgPool2d((7, 3))), ("channel_shuffle", nn.ChannelShuffle(2)),
        ("stochastic_row", nn.StochasticDepth(0.5, "row", g())), ("stochastic_batch", nn.StochasticDepth(0.5, "batch", g())),
        ("mean_1_3", lambda t: ls.mean(t, (1, 3), keepdim=True)), ("cat", lambda t: ls.cat([t, t * 2.0], 1)),
    ]


def digest():
    """SHA-256 over every case of (output bytes, input-gradient bytes of sum(f(x) * w)), float32
    little-endian, in order: one value for the whole table."""
    parts = []
    for name, fn in digest_cases():
        x = ls.tensor(fixed_input((2, 4, 7, 6)))
        x.requires_grad = True
        y = fn(x)
        (y * ls.tensor(fixed_weight(tuple(y.shape)))).sum().backward()
        parts.append(y.detach().numpy().astype("<f4").tobytes() + x.grad.numpy().astype("<f4").tobytes())
    return ls.sha256(b"".join(parts)), [ls.sha256(p) for p in parts]


# The npm test holds the same value: a change here is a change of bits on one side.
DIGEST = "37fe38f6218eb2823c808535b00df5b156935c786c8ec9f60ac09c97e036a858"


def test_fixed_input_digest_is_the_npm_packages():
    whole, each = digest()
    print("digest", whole, dict(zip([n for n, _ in digest_cases()], each)))
    assert whole == DIGEST
