"""The model zoo: real torchvision and transformers models, with random
weights (nothing is downloaded) and small inputs, each a (name, build)
pair where build() returns (model in eval mode, example args). The zoo
test (test_zoo.py) and bench/zoo.py import these through the default path
(traceir.from_torch, free-dead-tensors, compile for the CPU) and compare
with eager.

Sizes are chosen to keep the whole zoo within a few minutes on 2 cores:
torchvision models at batch 1 and 64x64 (or the smallest input the model
takes), transformers models with tiny configs (2 layers, hidden 32-64,
sequence 8).
"""
import torch

SEQ = 8


def _nonzero(model):
    """Gives the parameters a model initializes to zeros (ViT's head,
    GoogLeNet's classifier) small random values: with them the output would
    be all zeros, and any kernel would match it."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    return model


def _tv(name, size=64, **kwargs):
    def build():
        import torchvision
        torch.manual_seed(0)
        m = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
        return _nonzero(m), (torch.randn(1, 3, size, size),)
    return build


def _tv_seg(name, size=64, **kwargs):
    def build():
        import torchvision
        torch.manual_seed(0)
        m = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, **kwargs).eval()
        return _FirstOutput(_nonzero(m), "out"), (torch.randn(1, 3, size, size),)
    return build


class _FirstOutput(torch.nn.Module):
    """A model whose output is a dict or a ModelOutput, reduced to one
    tensor of it (the zoo compares tensors)."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args, **kwargs):
        out = self.model(*args, **kwargs)
        return out[self.key]


def _hf(config_cls, model_cls, key="last_hidden_state", inputs="ids", **config):
    def build():
        import transformers
        torch.manual_seed(0)
        cfg = getattr(transformers, config_cls)(**config)
        m = _nonzero(getattr(transformers, model_cls)(cfg).eval())
        g = torch.Generator().manual_seed(1)
        if inputs == "ids":
            args = (torch.randint(0, 100, (2, SEQ), generator=g),)
        elif inputs == "pixels":
            args = (torch.randn(1, config.get("num_channels", 3), config["image_size"],
                                config["image_size"], generator=g),)
        elif inputs == "audio":
            args = (torch.randn(1, 400, generator=g),)
        else:
            raise ValueError(inputs)
        return _FirstOutput(m, key), args
    return build


TINY_TEXT = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=64)

MODELS = [
    # torchvision classification
    ("resnet18", _tv("resnet18")),
    ("resnet50", _tv("resnet50")),
    ("mobilenet_v2", _tv("mobilenet_v2")),
    ("mobilenet_v3_small", _tv("mobilenet_v3_small")),
    ("mobilenet_v3_large", _tv("mobilenet_v3_large")),
    ("efficientnet_b0", _tv("efficientnet_b0")),
    ("squeezenet1_1", _tv("squeezenet1_1")),
    ("shufflenet_v2_x0_5", _tv("shufflenet_v2_x0_5")),
    ("mnasnet0_5", _tv("mnasnet0_5")),
    ("regnet_y_400mf", _tv("regnet_y_400mf")),
    ("densenet121", _tv("densenet121")),
    ("googlenet", _tv("googlenet", aux_logits=False, init_weights=True)),
    ("convnext_tiny", _tv("convnext_tiny", size=32)),
    ("resnext50_32x4d", _tv("resnext50_32x4d")),
    ("wide_resnet50_2", _tv("wide_resnet50_2")),
    ("vit_b_16", _tv("vit_b_16", size=32, image_size=32)),
    ("swin_t", _tv("swin_t", size=64)),
    # torchvision segmentation
    ("lraspp_mobilenet_v3_large", _tv_seg("lraspp_mobilenet_v3_large")),
    ("deeplabv3_mobilenet_v3_large", _tv_seg("deeplabv3_mobilenet_v3_large", aux_loss=False)),
    ("fcn_resnet50", _tv_seg("fcn_resnet50", aux_loss=False)),
    # transformers encoders
    ("bert", _hf("BertConfig", "BertModel", **TINY_TEXT)),
    ("roberta", _hf("RobertaConfig", "RobertaModel", **TINY_TEXT)),
    ("distilbert", _hf("DistilBertConfig", "DistilBertModel", vocab_size=100, dim=32,
                       n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64)),
    ("albert", _hf("AlbertConfig", "AlbertModel", embedding_size=16, **TINY_TEXT)),
    ("electra", _hf("ElectraConfig", "ElectraModel", embedding_size=16, **TINY_TEXT)),
    ("vit", _hf("ViTConfig", "ViTModel", inputs="pixels", image_size=32, patch_size=8,
                hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64)),
    # transformers decoders
    ("gpt2", _hf("GPT2Config", "GPT2Model", vocab_size=100, n_embd=32, n_layer=2, n_head=2,
                 n_positions=64)),
    ("llama", _hf("LlamaConfig", "LlamaModel", num_key_value_heads=1, **TINY_TEXT)),
    ("mistral", _hf("MistralConfig", "MistralModel", num_key_value_heads=1, **TINY_TEXT)),
    ("qwen2", _hf("Qwen2Config", "Qwen2Model", num_key_value_heads=1, **TINY_TEXT)),
    ("opt", _hf("OPTConfig", "OPTModel", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                num_attention_heads=2, ffn_dim=64, max_position_embeddings=64,
                word_embed_proj_dim=32)),
    ("gpt_neox", _hf("GPTNeoXConfig", "GPTNeoXModel", **TINY_TEXT)),
    ("bloom", _hf("BloomConfig", "BloomModel", vocab_size=100, hidden_size=32, n_layer=2,
                  n_head=2)),
    ("phi", _hf("PhiConfig", "PhiModel", **TINY_TEXT)),
]
