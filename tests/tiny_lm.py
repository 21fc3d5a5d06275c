"""A tiny random-init causal LM with a word-level tokenizer and a chat template, for tests of
mechanics (training steps, batched generation), never of what a model learns."""

from __future__ import annotations

import transformers

WORDS = ["system", "user", "assistant", ":", "Thought", "Action", "click", "fill", "(", ")",
         "'", ",", "Task", "URL", "Page"]


def tiny_causal_lm(max_positions: int = 512):
    """(model, tokenizer)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "[PAD]": 1, "<s>": 2, "</s>": 3, **{w: i + 4 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>")
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n"
                               "{% endfor %}{% if add_generation_prompt %}assistant : {% endif %}")
    config = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=2, max_position_embeddings=max_positions)
    return transformers.LlamaForCausalLM(config), tokenizer
