"""Policy training: SFT warm start, then multi-turn RL (GSPO, VESPO, GRPO, SAPO)
against the served worlds (live or fast env), synchronous or asynchronous.

Layout: ``models`` (which policy: tiny / smollm2 / a folder), ``engine`` (generation with
behaviour log-probs), ``rollout`` (groups of episodes in a vector env), ``losses`` (pure
functions, by name), ``learner`` (log-probs, minibatches, optimiser), ``loop`` (sync and
async), ``sft`` (the supervised warm start on the exported ``sft/`` split).
"""
