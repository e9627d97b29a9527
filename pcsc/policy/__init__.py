"""Policies: versioned TOML, `extends`, canonical SHA-256, strict structuring."""

from pcsc.policy.load import PolicyError, PolicyStore, load_policy_file
from pcsc.policy.model import Policy

__all__ = ["Policy", "PolicyError", "PolicyStore", "load_policy_file"]
