"""gec.torch.compile(): torchvision models with random weights and a small
transformer encoder agree with eager PyTorch; tensors share memory with
gec's buffers; export and call errors name the module."""

import numpy as np
import pytest
import torch
import torchvision

import gec
import gec.torch
from conftest import CONV_OPTIONS

torch.manual_seed(0)
torch.set_num_threads(2)


def assert_agrees(got, want, rtol, atol_rel, what):
    """|got - want| <= atol_rel * max|want| + rtol * |want|, elementwise."""
    assert isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype, what
    g, w = got.double(), want.double()
    atol = atol_rel * float(w.abs().max())
    err = (g - w).abs()
    bad = err > atol + rtol * w.abs()
    assert not bool(bad.any()), f"{what}: {int(bad.sum())} of {bad.numel()} off, worst {float(err.max()):.3g}"


def eager(module, *args):
    module.eval()
    with torch.no_grad():
        return module(*args)


def calibrated(model):
    """Random weights with BatchNorm statistics re-estimated on 8 random
    images (as ../shared/models did), so that activations keep their scale
    through the network instead of fading (mobilenet_v3_small's logits are
    ~1e-10 with torchvision's default statistics)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average
    model.train()
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for _ in range(2):
            model(torch.rand(4, 3, 224, 224, generator=g))
    return model.eval()


# Tolerances: |gec - eager| <= 1e-3 |eager| + 1e-4 max|eager|. Measured on
# this machine (AVX2, 2 threads): resnet18 max error 2.1e-6 of max|eager|,
# mobilenet_v3_small 1.5e-6, the transformer 2.8e-7.
# The families cover what the compiler rewrites for them: SiLU as a Swish
# post-op and squeeze-and-excitation (efficientnet_b0), channel shuffle and
# odd channel counts in nhwc (shufflenet_v2_x0_5), BatchNormalization before
# its conv as a fused Mul + Add over Concat chains (densenet121), groups of 4
# channels in nhwc (resnext50_32x4d).
MODULE_NAMES = {"resnet18": "ResNet", "mobilenet_v3_small": "MobileNetV3", "efficientnet_b0": "EfficientNet",
                "shufflenet_v2_x0_5": "ShuffleNetV2", "densenet121": "DenseNet", "resnext50_32x4d": "ResNet"}


@pytest.mark.parametrize("name", list(MODULE_NAMES))
def test_torchvision_models(name):
    torch.manual_seed(1)
    model = calibrated(getattr(torchvision.models, name)(weights=None))
    x = torch.rand(1, 3, 224, 224)
    fast = gec.torch.compile(model, (x,), **CONV_OPTIONS)
    assert fast.module_name == MODULE_NAMES[name]
    assert fast.input_names == ["x"] and fast.output_names == ["output_0"]
    y = fast(x)
    assert not y.requires_grad
    assert_agrees(y, eager(model, x), rtol=1e-3, atol_rel=1e-4, what=name)
    # another input, same compiled model
    x2 = torch.rand(1, 3, 224, 224)
    assert_agrees(fast(x2), eager(model, x2), rtol=1e-3, atol_rel=1e-4, what=name + " (2nd input)")


class TinyEncoder(torch.nn.Module):
    """Token embedding + 2 transformer encoder layers (d 64, 4 heads) + a
    pooled head: (ids [B,S] int64, mask [B,S] bool padding) -> ([B,S,64], [B,8])."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 64)
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1,
                                                 batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(64, 8)

    def forward(self, ids, pad):
        h = self.enc(self.emb(ids), src_key_padding_mask=pad)
        return h, torch.tanh(self.head(h.mean(dim=1)))


def test_small_transformer_encoder():
    torch.manual_seed(2)
    model = TinyEncoder().eval()
    ids = torch.randint(0, 100, (2, 16))
    pad = torch.zeros(2, 16, dtype=torch.bool)
    pad[1, 12:] = True
    fast = gec.torch.compile(model, (ids, pad))
    assert fast.input_names == ["ids", "pad"]
    h, pooled = fast(ids, pad)
    want_h, want_pooled = eager(model, ids, pad)
    assert_agrees(h, want_h, rtol=1e-3, atol_rel=1e-4, what="hidden")
    assert_agrees(pooled, want_pooled, rtol=1e-3, atol_rel=1e-4, what="pooled")


def test_dynamic_axes():
    torch.manual_seed(3)
    model = TinyEncoder().eval()
    ids = torch.randint(0, 100, (1, 10))
    pad = torch.zeros(1, 10, dtype=torch.bool)
    fast = gec.torch.compile(model, (ids, pad), dynamic_axes={"ids": {0: "batch", 1: "seq"},
                                                              "pad": {0: "batch", 1: "seq"}})
    assert fast.session.get_inputs()[0].shape == ["batch", "seq"]
    for b, s in [(1, 10), (3, 7), (2, 21)]:
        ids = torch.randint(0, 100, (b, s))
        pad = torch.zeros(b, s, dtype=torch.bool)
        got = fast(ids, pad)
        for g, w, what in zip(got, eager(model, ids, pad), ("hidden", "pooled")):
            assert_agrees(g, w, rtol=1e-3, atol_rel=1e-4, what=f"{what} [{b},{s}]")


class Affine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return {"y": self.lin(x), "parts": [x * 2, x.sum(dim=1)]}


def test_memory_sharing_and_output_structure():
    model = Affine()
    x = torch.rand(3, 8)
    fast = gec.torch.compile(model, (x,))
    out = fast(x)
    assert set(out) == {"y", "parts"} and isinstance(out["parts"], list)
    assert_agrees(out["y"], eager(model, x)["y"], rtol=1e-4, atol_rel=1e-5, what="y")
    torch.testing.assert_close(out["parts"][0], 2 * x)
    torch.testing.assert_close(out["parts"][1], x.sum(dim=1))
    # the input tensor's storage went to gec as is; outputs are gec's buffers
    assert fast.session._last_input_pointers() == [x.data_ptr()]
    assert [t.data_ptr() for t in (out["y"], *out["parts"])] == fast.session._last_output_pointers()
    # a strided input or one that requires grad works (detached, copied once)
    xs = torch.rand(8, 3).t()
    assert not xs.is_contiguous()
    torch.testing.assert_close(fast(xs)["parts"][0], 2 * xs)
    assert fast.session._last_input_pointers() != [xs.data_ptr()]
    xg = torch.rand(3, 8, requires_grad=True)
    torch.testing.assert_close(fast(xg)["parts"][0], 2 * xg.detach())


def test_call_errors_name_the_module():
    fast = gec.torch.compile(Affine(), (torch.rand(3, 8),))
    with pytest.raises(gec.InvalidArgument, match="Affine.*float64"):
        fast(torch.rand(3, 8, dtype=torch.float64))
    with pytest.raises(gec.InvalidArgument, match=r"Affine.*\[3,8\]"):
        fast(torch.rand(4, 8))
    with pytest.raises(gec.InvalidArgument, match="Affine: expected 1 tensor"):
        fast(torch.rand(3, 8), torch.rand(3, 8))


class Spectrum(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


class Broken(torch.nn.Module):
    def forward(self, x):
        return x @ torch.ones(5, 5)  # [2,3] @ [5,5]


class Says(torch.nn.Module):
    def forward(self, x):
        return "not a tensor"


def test_export_problems_are_clear():
    with pytest.raises(gec.torch.ExportError) as e:
        gec.torch.compile(Spectrum(), (torch.rand(2, 16),))
    assert "Spectrum" in str(e.value) and e.value.module_name == "Spectrum"
    assert e.value.__cause__ is not None and isinstance(e.value, gec.GecError)
    assert e.value.code == gec.ErrorCode.UNSUPPORTED
    with pytest.raises(gec.InvalidArgument, match="Broken: the module raised"):
        gec.torch.compile(Broken(), (torch.rand(2, 3),))
    with pytest.raises(gec.InvalidArgument, match="Says.*str"):
        gec.torch.compile(Says(), (torch.rand(2, 3),))
    with pytest.raises(gec.InvalidArgument, match="Affine: dynamic_axes names"):
        gec.torch.compile(Affine(), (torch.rand(3, 8),), dynamic_axes={"nope": {0: "b"}})
    with pytest.raises(gec.InvalidArgument, match="torch.nn.Module"):
        gec.torch.compile(lambda x: x, (torch.rand(2),))


def test_gec_compile_errors_name_the_module():
    with pytest.raises(gec.InvalidArgument, match=r"gec.torch.compile\(Affine\).*optimization level"):
        gec.torch.compile(Affine(), (torch.rand(3, 8),), opt_level=9)


def test_lazy_attribute():
    import importlib

    assert importlib.import_module("gec").torch is gec.torch
