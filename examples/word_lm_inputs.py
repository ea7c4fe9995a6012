#!/usr/bin/env python3
"""Writes parameters and inputs for examples/word_lm.trace.

The parameters are those of the PyTorch examples' RNNModel (Embedding 10000 x
200, 2-layer LSTM of 200, Linear 200 -> 10000), freshly initialized with a
fixed seed and saved under the trace's state_dict names; the inputs are a
batch of 35 x 20 random tokens and a zero hidden state.

Usage: word_lm_inputs.py OUT_DIR   (writes params.safetensors, inputs.safetensors)
"""
import os
import sys

import torch
from safetensors.torch import save_file


class RNNModel(torch.nn.Module):
    # rnn_type as in the PyTorch example: "LSTM" (the trace's) or "GRU".
    def __init__(self, ntoken=10000, ninp=200, nhid=200, nlayers=2, dropout=0.2,
                 rnn_type="LSTM"):
        super().__init__()
        self.drop = torch.nn.Dropout(dropout)
        self.encoder = torch.nn.Embedding(ntoken, ninp)
        self.rnn = getattr(torch.nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = torch.nn.Linear(nhid, ntoken)

    def forward(self, tokens, hidden):
        emb = self.drop(self.encoder(tokens))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output.view(-1, output.size(2)))
        return decoded.view(output.size(0), output.size(1), -1), hidden


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = RNNModel()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              os.path.join(out, "params.safetensors"))
    tokens = torch.randint(0, 10000, (35, 20))
    save_file({"tokens": tokens, "hidden.0": torch.zeros(2, 20, 200),
               "hidden.1": torch.zeros(2, 20, 200)},
              os.path.join(out, "inputs.safetensors"))


if __name__ == "__main__":
    main()
