"""nn.ConvTranspose2d and F.conv_transpose2d: the input gradient of a convolution computed by the
convolution's own input-gradient kernel. Against PyTorch (forward and every gradient, within a few
float32 roundings: lockstep sums in its contract's order), through from_torch_module, and a
fixed-input digest that the npm package's test (bindings/wasm/test/conv-transpose.test.mjs) must
reproduce bit for bit."""
import hashlib

import numpy as np
import pytest

import lockstep as ls
from lockstep import nn
from lockstep.nn import functional as F

torch = pytest.importorskip("torch")

# sha256 of the output and input gradient below; the npm test pins the same value.
DIGEST = "f314c5f1627e1c1857f3b576dc52b16924d69ab28558aac5d1817be122bcf52a"

CONFIGS = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(0, 1), groups=2, dilation=2),
    dict(stride=3, padding=2, output_padding=(2, 1), groups=2, dilation=(1, 2)),
]


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_against_torch_forward_and_gradients(config):
    torch.manual_seed(0)
    t = torch.nn.ConvTranspose2d(4, 6, (3, 2), **config)
    x = np.random.default_rng(1).standard_normal((2, 4, 5, 6)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    yt = t(xt)
    xl = ls.tensor(x, requires_grad=True)
    w = ls.tensor(t.weight.detach().numpy(), requires_grad=True)
    b = ls.tensor(t.bias.detach().numpy(), requires_grad=True)
    yl = F.conv_transpose2d(xl, w, b, **config)
    assert tuple(yl.shape) == tuple(yt.shape)
    g = np.random.default_rng(2).standard_normal(tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(g)).sum().backward()
    (yl * ls.tensor(g)).sum().backward()
    for ours, theirs in ((yl.detach(), yt), (xl.grad, xt.grad), (w.grad, t.weight.grad), (b.grad, t.bias.grad)):
        theirs = theirs.detach().numpy()
        assert np.allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())


def test_the_module_converts_from_torch_and_checks_its_arguments():
    torch.manual_seed(0)
    t = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    converted = ls.from_torch_module(torch.nn.Sequential(t))
    x = np.random.default_rng(1).standard_normal((2, 4, 5, 6)).astype(np.float32)
    with ls.no_grad():
        ours = converted(ls.tensor(x)).numpy()
    assert np.allclose(ours, t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert (m.in_channels, m.out_channels, m.kernel_size, m.output_padding, m.groups) == (4, 6, (3, 3), (1, 1), 2)
    assert tuple(m.weight.shape) == (4, 3, 3, 3) and sorted(dict(m.named_parameters())) == ["bias", "weight"]
    with pytest.raises(ls.ArgumentError, match="output_padding smaller than the stride"):
        nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=2)
    with pytest.raises(ls.ArgumentError, match="do not match"):
        F.conv_transpose2d(ls.zeros(1, 3, 4, 4), ls.zeros(4, 2, 3, 3))


def fixed(shape, a, b, c, d):
    n = int(np.prod(shape))
    return ((((np.arange(n) * a) % b) - c) / d).astype(np.float32).reshape(shape)


def test_fixed_digest_that_the_npm_package_reproduces():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, generator=ls.Generator(7, "init"))
    x = ls.tensor(fixed((2, 4, 7, 6), 37, 113, 56, 8), requires_grad=True)
    y = m(x)
    (y * ls.tensor(fixed(tuple(y.shape), 11, 7, 3, 4))).sum().backward()
    digest = hashlib.sha256(y.detach().numpy().tobytes() + x.grad.numpy().tobytes()).hexdigest()
    print("conv_transpose digest", digest)
    assert digest == DIGEST
