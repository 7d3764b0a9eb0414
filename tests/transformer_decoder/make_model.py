"""Exports a small decoder-only transformer (GPT-style: pre-LayerNorm, causal
self-attention with a boolean mask filled with -inf, tanh-approximated GELU)
with PyTorch, at sequence lengths 128 and 1024, in the ONNX backend-test
layout: <dir>/model.onnx (sequence axis symbolic) and
test_data_set_0/{input_0,output_0}.pb, the output computed by PyTorch eager
(float32) as the reference.

Run with Debian's python (python3-torch 1.13, python3-onnx):
    /usr/bin/python3 tests/transformer_decoder/make_model.py
Weights come from a fixed seed, so the files are reproducible.
"""
import math
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

VOCAB, D, HEADS, FF, LAYERS, MAX_SEQ = 128, 64, 4, 256, 2, 1024


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ln2 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, FF)
        self.fc2 = nn.Linear(FF, D)
        causal = torch.ones(MAX_SEQ, MAX_SEQ, dtype=torch.bool).triu(1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        dh = D // HEADS
        q = q.view(b, s, HEADS, dh).transpose(1, 2)
        k = k.view(b, s, HEADS, dh).transpose(1, 2)
        v = v.view(b, s, HEADS, dh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
        att = att.masked_fill(self.causal[:s, :s], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, D)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(MAX_SEQ, D)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(s).unsqueeze(0))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    torch.manual_seed(7)
    model = Decoder().eval()
    here = os.path.dirname(os.path.abspath(__file__))
    for seq in (128, 1024):
        out_dir = os.path.join(here, "decoder_seq%d" % seq)
        data_dir = os.path.join(out_dir, "test_data_set_0")
        os.makedirs(data_dir, exist_ok=True)
        ids = torch.randint(0, VOCAB, (1, seq), generator=torch.Generator().manual_seed(seq))
        with torch.no_grad():
            ref = model(ids)
        path = os.path.join(out_dir, "model.onnx")
        # The sequence axis stays symbolic ("seq"): `gec test` runs the dynamic
        # path, `gec test --static-shapes` the static one (fusions included).
        torch.onnx.export(model, (ids,), path, input_names=["input_ids"], output_names=["logits"],
                          dynamic_axes={"input_ids": {1: "seq"}, "logits": {1: "seq"}},
                          opset_version=17, do_constant_folding=True)
        onnx.checker.check_model(onnx.load(path))
        for name, arr, fname in (("input_ids", ids.numpy(), "input_0.pb"), ("logits", ref.numpy(), "output_0.pb")):
            t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
            with open(os.path.join(data_dir, fname), "wb") as f:
                f.write(t.SerializeToString())
        print("wrote", out_dir, "logits", tuple(ref.shape))


if __name__ == "__main__":
    main()
