"""Every command: its words, the module that implements it, and its one-line help.

This table is all `pcsc --help` needs, so listing commands imports none of them; a
command's module is imported only when that command runs.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Command:
    words: tuple[str, ...]
    module: str
    help: str

    @property
    def name(self) -> str:
        return " ".join(self.words)


def _c(words: str, module: str, help: str) -> Command:
    return Command(tuple(words.split()), f"pcsc.cli.commands.{module}", help)


COMMANDS: tuple[Command, ...] = (
    _c("check", "check", "parse, lower and check; diagnostics only"),
    _c("compile", "compile", "the ranking packet of every route"),
    _c("gate", "gate", "the coverage verdict and the undischarged obligations; exit 3 on refusal"),
    _c("seams", "seams", "the deletion identity per seam, symbolically verified; cohort summary"),
    _c("splice", "splice", "the route with seam K deleted, as .route text that compiles"),
    _c("diff", "diff", "the typed difference of two versions of a route: removed, retargeted, seam skips"),
    _c("verify-cert", "verify_cert", "re-check a decision certificate (compile --cert) with an independent checker"),
    _c("explain", "explain", "every number of a route, rule by rule"),
    _c("sensitivity", "sensitivity",
       "the margins: the change to a prior, floor, weight, cost or value that flips a decision"),
    _c("blind", "blind", "blinded copies of routes, identity cues masked; the private map apart"),
    _c("rank", "rank", "rank competing routes and cohorts: gates first, then the policy's key"),
    _c("freeze", "freeze", "compile, rank and store every route's packet in the ledger"),
    _c("resolve", "resolve", "store outcomes and resolve frozen milestones"),
    _c("evaluate", "evaluate", "grade frozen forecasts against resolved outcomes, or a score table"),
    _c("prereg", "prereg", "freeze a plan of predictions in the ledger before its outcomes"),
    _c("ledger verify", "ledger_verify", "recompute every hash and the chains"),
    _c("ledger show", "ledger_show", "list the entries"),
    _c("ledger export", "ledger_export", "each route's latest forecast as a score table (CSV or JSON lines)"),
    _c("ledger head", "ledger_head", "the head of both chains, one token to keep outside the ledger"),
    _c("ledger checkpoint", "ledger_checkpoint", "the head, signed with an Ed25519 key (needs pcsc[sign])"),
    _c("ledger keygen", "ledger_keygen", "a new Ed25519 key pair for checkpoints (needs pcsc[sign])"),
    _c("graph", "graph", "the route as a picture: DOT, Mermaid or SVG (no Graphviz needed)"),
    _c("report", "report", "one self-contained HTML page: picture, fold, coverage, obligations, seams, ranking"),
    _c("stability", "stability", "redraw estimates, evidence weights and classes within bounds: rank, score spread"),
    _c("redteam", "redteam", "search edits that raise the score; report which coverage catches"),
    _c("fmt", "fmt", "canonical formatting of .route and .obl files; comments kept"),
    _c("init", "init", "scaffold a project: a route, a library, a policy and pcsc.toml"),
    _c("test", "test", "run policy tests: what a policy must decide on given routes"),
    _c("policy show", "policy_show", "the policy, merged with what it extends"),
    _c("policy hash", "policy_hash", "the canonical SHA-256 used to pin it"),
    _c("policy check", "policy_check", "validate policies; path-addressed errors"),
    _c("policy diff", "policy_diff", "what changed between two policies; which routes' numbers move"),
    _c("policy fit", "policy_fit", "propose a new policy version with priors refitted from the ledger"),
    _c("policy compare", "policy_compare", "score two policies on held-out resolved routes"),
    _c("config", "config", "the effective settings and where each came from (for FILE: those that judge it)"),
    _c("rule", "rule", "what a diagnostic code means: severity, exit, suppression, messages, docs"),
    _c("cache info", "cache_info", "where the IR cache is, what it holds and its bound"),
    _c("cache clear", "cache_clear", "remove every file pcsc caches (rebuilt when next needed)"),
    _c("lsp", "lsp", "the language server for editors, over stdio (needs the extra pcsc[lsp])"),
)

GROUPS: dict[str, str] = {
    "policy": "show, hash, check, diff, fit or compare policies",
    "ledger": "verify, show or export the ledger; record its head, sign checkpoints",
    "cache": "show or clear the IR cache",
}


def find(words: tuple[str, ...]) -> Command | None:
    for command in COMMANDS:
        if command.words == words:
            return command
    return None
