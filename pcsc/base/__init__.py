"""The ground floor: canonical JSON and hashes, data folders and text encoding, settings,
number formatting, escaping, text tables, Wilson intervals, optional extras. Imports
nothing else of PCSC.
"""
