"""Which causal LMs compute their logits as the plain output layer applied to the decoder's last hidden
state, so that a caller may apply that layer itself (to chosen positions, or to hidden states computed
once) and get the model's own logits."""

from __future__ import annotations

#: ``config.model_type`` of the architectures whose logits are exactly the output layer applied to the
#: decoder's last hidden state (no scaling, soft-capping or bias after it, unlike e.g. Cohere's
#: ``logit_scale``, Granite's ``logits_scaling`` or Gemma-2's soft-capping).
PLAIN_HEAD_MODELS = frozenset({"llama", "mistral", "qwen2", "qwen3"})


def plain_output_layer(model) -> bool:
    """Whether ``model``'s logits are ``model.get_output_embeddings()`` applied to the last hidden state
    of ``model.get_decoder()``: an architecture of :data:`PLAIN_HEAD_MODELS` whose output layer (or the
    frozen layer a LoRA wrapper keeps as ``.base``) has no bias."""
    head = model.get_output_embeddings()
    base = getattr(head, "base", head)
    plain = getattr(model.config, "model_type", None) in PLAIN_HEAD_MODELS
    return plain and getattr(base, "bias", None) is None
