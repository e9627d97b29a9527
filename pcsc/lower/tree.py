"""Typed access to Lark tree children, so lowering code states what it expects."""

from __future__ import annotations

from lark import Token, Tree

Node = Tree[Token]


def tok(node: Node, i: int) -> Token:
    child = node.children[i]
    assert isinstance(child, Token), f"{node.data}[{i}] is not a token"
    return child


def opt_tok(node: Node, i: int) -> Token | None:
    child = node.children[i]
    assert child is None or isinstance(child, Token), f"{node.data}[{i}] is not a token"
    return child


def sub(node: Node, i: int) -> Node:
    child = node.children[i]
    assert isinstance(child, Tree), f"{node.data}[{i}] is not a tree"
    return child


def opt_sub(node: Node, i: int) -> Node | None:
    child = node.children[i]
    assert child is None or isinstance(child, Tree), f"{node.data}[{i}] is not a tree"
    return child


def subtrees(node: Node, start: int = 0) -> list[Node]:
    return [c for c in node.children[start:] if isinstance(c, Tree)]


def tokens(node: Node, start: int = 0) -> list[Token]:
    return [c for c in node.children[start:] if isinstance(c, Token)]
