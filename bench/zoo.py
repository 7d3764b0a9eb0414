#!/usr/bin/python3
"""Exports torchvision architectures as ONNX backend-test folders (models nobody tuned for).

They check that gec's mechanisms generalise.

Each architecture is built with random weights (torch.manual_seed(0)),
calibrated so that its activations look like a trained model's (see
calibrate), put in eval mode, fed one random input of its usual size (batch 1, NCHW float32) and
exported with torch.onnx.export at --opset; the folder gets model.onnx and
test_data_set_0/ with input_0.pb and the PyTorch eager outputs as
output_K.pb (the references). The folders then serve `gec test DIR` (accuracy
against PyTorch) and bench/side_by_side.py DIR... (speed against ONNX
Runtime, whose outputs the table compares too).

The families cover what the shared models do not: channel shuffle and odd
channel counts (shufflenet_v2), squeeze-and-excitation with SiLU/Hardswish
(efficientnet, mobilenet_v3), grouped convolutions (resnext, regnet),
depthwise 7x7 with LayerNorm and GELU (convnext), dense Concat chains
(densenet), dilated convolutions (deeplabv3, fcn) and a vision transformer
(vit_b_16). Sequence models defined here (SEQ_ARCHS: random weights,
nn.MultiheadAttention blocks and RNNs as PyTorch exports them) add long
sequences and recurrences: a Whisper-like encoder (80 mel bins x 3000
frames, two Conv1d, 4 pre-LN blocks of width 384 over 1500 positions), a
wav2vec2-like model (1 s of 16 kHz audio, a 7-layer strided Conv1d feature
extractor with GroupNorm, a grouped positional Conv1d of kernel 128, 4
blocks of width 768), a keyword-spotting CNN (98 x 40 log-mel frames,
depthwise-separable blocks) and a GRU one (Conv1d front end, 2 GRU layers
of 64), a Conformer-like encoder (Conv2d subsampling, 4 blocks with
attention over 99 frames and a 31-tap depthwise Conv1d), and text-line
recognizers of 32 x 320 crops: CRNNs (VGG-style CNN and two bidirectional
LSTM or GRU layers of 128) and a light one (MobileNetV3-small features, a
2-layer bidirectional LSTM of 48, 6625 classes).

Usage: bench/zoo.py [--out build/zoo] [--opset 14] [--only NAME,...] [--list]
Needs Debian's python3-torch and python3-torchvision (scripts/setup.sh
installs them); run with /usr/bin/python3. Folders that exist are kept
(delete one to export it again).
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (constructor in torchvision.models or .segmentation, input H=W)
ARCHS = {
    "alexnet": ("alexnet", 224),
    "vgg11": ("vgg11", 224),
    "resnet18": ("resnet18", 224),
    "wide_resnet50_2": ("wide_resnet50_2", 224),
    "resnext50_32x4d": ("resnext50_32x4d", 224),
    "densenet121": ("densenet121", 224),
    "inception_v3": ("inception_v3", 299),
    "squeezenet1_0": ("squeezenet1_0", 224),
    "shufflenet_v2_x0_5": ("shufflenet_v2_x0_5", 224),
    "shufflenet_v2_x1_0": ("shufflenet_v2_x1_0", 224),
    "mnasnet0_5": ("mnasnet0_5", 224),
    "mnasnet1_0": ("mnasnet1_0", 224),
    "mobilenet_v3_small": ("mobilenet_v3_small", 224),
    "mobilenet_v3_large": ("mobilenet_v3_large", 224),
    "efficientnet_b0": ("efficientnet_b0", 224),
    "regnet_x_400mf": ("regnet_x_400mf", 224),
    "regnet_y_400mf": ("regnet_y_400mf", 224),
    "convnext_tiny": ("convnext_tiny", 224),
    "vit_b_16": ("vit_b_16", 224),
    "deeplabv3_mobilenet_v3_large": ("segmentation.deeplabv3_mobilenet_v3_large", 224),
    "lraspp_mobilenet_v3_large": ("segmentation.lraspp_mobilenet_v3_large", 224),
    "fcn_resnet50": ("segmentation.fcn_resnet50", 224),
}


def seq_model(name):
    """The speech-shaped architecture `name` (one of SEQ_ARCHS): (model, input shape)."""
    import torch
    from torch import nn

    class Block(nn.Module):  # pre-LN transformer block
        def __init__(self, d, h):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.att = nn.MultiheadAttention(d, h, batch_first=True)
            self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            y = self.ln1(x)
            x = x + self.att(y, y, y, need_weights=False)[0]
            return x + self.ff(self.ln2(x))

    class WhisperLike(nn.Module):
        def __init__(self, d=384, h=6, layers=4, frames=3000):
            super().__init__()
            self.c1 = nn.Conv1d(80, d, 3, padding=1)
            self.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
            self.pos = nn.Parameter(torch.randn(1, frames // 2, d) * 0.02)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
            self.ln = nn.LayerNorm(d)

        def forward(self, x):
            x = nn.functional.gelu(self.c2(nn.functional.gelu(self.c1(x)))).transpose(1, 2) + self.pos
            for b in self.blocks:
                x = b(x)
            return self.ln(x)

    class Wav2Vec2Like(nn.Module):
        def __init__(self, d=768, h=12, layers=4):
            super().__init__()
            fe = [nn.Conv1d(1, 512, 10, 5, bias=False), nn.GroupNorm(512, 512), nn.GELU()]
            for k, st in [(3, 2)] * 4 + [(2, 2)] * 2:
                fe += [nn.Conv1d(512, 512, k, st, bias=False), nn.GELU()]
            self.fe = nn.Sequential(*fe)
            self.ln0, self.proj = nn.LayerNorm(512), nn.Linear(512, d)
            self.pos = nn.Conv1d(d, d, 128, padding=64, groups=16)
            self.ln = nn.LayerNorm(d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))

        def forward(self, x):
            x = self.proj(self.ln0(self.fe(x).transpose(1, 2)))
            p = nn.functional.gelu(self.pos(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
            x = self.ln(x + p)
            for b in self.blocks:
                x = b(x)
            return x

    class Crnn(nn.Module):  # text-line recognizer: VGG-style CNN, two bidirectional RNN layers, per-column classes
        def __init__(self, rnn):
            super().__init__()

            def c(i, o):
                return [nn.Conv2d(i, o, 3, 1, 1), nn.BatchNorm2d(o), nn.ReLU()]
            self.cnn = nn.Sequential(*c(3, 32), nn.MaxPool2d(2), *c(32, 64), nn.MaxPool2d(2), *c(64, 128), *c(128, 128),
                                     nn.MaxPool2d((2, 1)), *c(128, 256), *c(256, 256), nn.MaxPool2d((2, 1)), *c(256, 256))
            cell = nn.LSTM if rnn == "lstm" else nn.GRU
            self.rnn1 = cell(512, 128, bidirectional=True, batch_first=True)
            self.rnn2 = cell(256, 128, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(256, 97)

        def forward(self, x):  # [1, 3, 32, W] -> [1, W/4, 97]
            f = self.cnn(x)
            n, ch, h, w = f.shape
            f, _ = self.rnn1(f.permute(0, 3, 1, 2).reshape(n, w, ch * h))
            f, _ = self.rnn2(f)
            return self.fc(f).log_softmax(-1)

    class SmallOcr(nn.Module):  # a light recognizer: MobileNetV3-small features, 2-layer BiLSTM of 48, 6625 classes
        def __init__(self):
            super().__init__()
            import torchvision
            self.cnn = torchvision.models.mobilenet_v3_small().features
            self.pool = nn.AdaptiveAvgPool2d((1, None))
            self.rnn = nn.LSTM(576, 48, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(96, 6625)

        def forward(self, x):
            f, _ = self.rnn(self.pool(self.cnn(x)).squeeze(2).permute(0, 2, 1))
            return self.fc(f).softmax(-1)

    class KwsGru(nn.Module):  # streaming keyword spotter: strided Conv1d front end, 2-layer GRU of 64
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(40, 64, 5, 2, 2), nn.BatchNorm1d(64), nn.ReLU())
            self.gru = nn.GRU(64, 64, num_layers=2, batch_first=True)
            self.fc = nn.Linear(64, 12)

        def forward(self, x):  # [1, 40 mel bins, 98 frames]
            f, _ = self.gru(self.conv(x).permute(0, 2, 1))
            return self.fc(f[:, -1])

    class ConformerBlock(nn.Module):  # half-step FFNs, self-attention, GLU + 31-tap depthwise Conv1d module
        def __init__(self, d=144, h=4, k=31):
            super().__init__()
            self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.ln_att, self.att = nn.LayerNorm(d), nn.MultiheadAttention(d, h, batch_first=True)
            self.ln_conv, self.pw1 = nn.LayerNorm(d), nn.Conv1d(d, 2 * d, 1)
            self.dw, self.bn = nn.Conv1d(d, d, k, padding=k // 2, groups=d), nn.BatchNorm1d(d)
            self.pw2 = nn.Conv1d(d, d, 1)
            self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.ln = nn.LayerNorm(d)

        def forward(self, x):
            x = x + 0.5 * self.ff1(x)
            y = self.ln_att(x)
            x = x + self.att(y, y, y, need_weights=False)[0]
            y = nn.functional.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)
            x = x + self.pw2(nn.functional.silu(self.bn(self.dw(y)))).transpose(1, 2)
            return self.ln(x + 0.5 * self.ff2(x))

    class ConformerLike(nn.Module):  # 4x Conv2d subsampling of 400 x 80 fbank frames, 4 blocks of width 144
        def __init__(self):
            super().__init__()
            self.sub = nn.Sequential(nn.Conv2d(1, 144, 3, 2), nn.ReLU(), nn.Conv2d(144, 144, 3, 2), nn.ReLU())
            self.proj = nn.Linear(144 * 19, 144)
            self.blocks = nn.Sequential(*[ConformerBlock() for _ in range(4)])
            self.out = nn.Linear(144, 128)

        def forward(self, x):
            f = self.sub(x)
            n, ch, t, w = f.shape
            f = self.proj(f.permute(0, 2, 1, 3).reshape(n, t, ch * w))
            return self.out(self.blocks(f)).log_softmax(-1)

    def kws():
        return nn.Sequential(
            nn.Conv2d(1, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1, groups=64), nn.Conv2d(64, 64, 1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1, groups=64), nn.Conv2d(128, 128, 1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 12))

    made = {"whisper_like": (WhisperLike, (1, 80, 3000)), "wav2vec2_like": (Wav2Vec2Like, (1, 1, 16000)),
            "kws_cnn": (kws, (1, 1, 98, 40)), "crnn_lstm": (lambda: Crnn("lstm"), (1, 3, 32, 320)),
            "crnn_gru": (lambda: Crnn("gru"), (1, 3, 32, 320)), "ocr_small_lstm": (SmallOcr, (1, 3, 32, 320)),
            "kws_gru": (KwsGru, (1, 40, 98)), "conformer_like": (ConformerLike, (1, 1, 400, 80))}[name]
    return made[0](), made[1]


SEQ_ARCHS = ("whisper_like", "wav2vec2_like", "kws_cnn", "crnn_lstm", "crnn_gru", "ocr_small_lstm", "kws_gru",
             "conformer_like")


def build(ctor):
    import torchvision
    mod = torchvision.models
    for part in ctor.split("."):
        mod = getattr(mod, part)
    kwargs = {"weights": None}
    if ctor.startswith("segmentation."):
        kwargs["weights_backbone"] = None
        kwargs["aux_loss"] = False
    if ctor == "inception_v3":
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = True
    return mod(**kwargs)


def calibrate(model, size):
    """Gives the random weights realistic activations: torchvision leaves
    some layers zero (vit's head) or near zero (convnext's layer scale) and
    its BatchNorm running statistics at 0/1, so deep nets return constants,
    1e-20 or 1e8. Zero matrices get N(0, 0.02), layer scales 0.5, and every
    BatchNorm the statistics of one training-mode pass over 4 random images
    (cumulative average), as a trained model has."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
            elif name.endswith("layer_scale"):
                p.fill_(0.5)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return model.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(torch.randn(4, 3, size, size))
    return model.eval()


def write_tensor(path, name, array):
    from onnx import numpy_helper
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export(name, ctor, size, folder, opset):
    import torch
    torch.manual_seed(0)
    if name in SEQ_ARCHS:
        model, shape = seq_model(name)
        model.eval()
        x = torch.randn(*shape)
    else:
        model = calibrate(build(ctor), size)
        x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        out = model(x)
    if isinstance(out, dict):  # segmentation models return {"out": ...}
        out = out["out"]
    outs = out if isinstance(out, (tuple, list)) else (out,)
    tmp = folder + ".tmp"
    os.makedirs(os.path.join(tmp, "test_data_set_0"), exist_ok=True)
    names = [f"output_{k}" for k in range(len(outs))]

    class Wrapped(torch.nn.Module):  # one tensor out, also for dict outputs
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, t):
            r = self.m(t)
            return r["out"] if isinstance(r, dict) else r

    # Traced with autograd on: torch 1.13 takes nn.MultiheadAttention's fused
    # fast path (no ONNX export) when it is off.
    torch.onnx.export(Wrapped(model), x, os.path.join(tmp, "model.onnx"), opset_version=opset,
                      input_names=["input"], output_names=names, do_constant_folding=True)
    write_tensor(os.path.join(tmp, "test_data_set_0", "input_0.pb"), "input", x.numpy())
    for k, o in enumerate(outs):
        write_tensor(os.path.join(tmp, "test_data_set_0", f"output_{k}.pb"), names[k], o.numpy())
    os.rename(tmp, folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "zoo"), help="folder of the folders (default: build/zoo)")
    ap.add_argument("--opset", type=int, default=14, help="torch.onnx.export's opset_version (default: 14)")
    ap.add_argument("--only", default="", help="comma-separated names (default: all)")
    ap.add_argument("--list", action="store_true", help="print the names and exit")
    args = ap.parse_args()
    everything = list(ARCHS) + list(SEQ_ARCHS)
    if args.list:
        print("\n".join(everything))
        return 0
    names = [n for n in args.only.split(",") if n] or everything
    unknown = [n for n in names if n not in everything]
    if unknown:
        sys.exit(f"zoo: unknown architecture(s) {', '.join(unknown)}; --list names them")
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for n in names:
        folder = os.path.join(args.out, n)
        if os.path.isdir(folder):
            print(f"{n}: kept {folder}")
            continue
        ctor, size = ARCHS.get(n, (None, 0))
        try:
            export(n, ctor, size, folder, args.opset)
            print(f"{n}: exported {folder}")
        except Exception as e:  # report and go on with the others
            failed += 1
            print(f"{n}: export failed: {e}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
