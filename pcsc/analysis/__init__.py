"""Analyses over compiled routes: seams, red team, search, suggestions, explain,
sensitivity, stability, ranking, route and policy diffs, policy tests, blinding.
"""
