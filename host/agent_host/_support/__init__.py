"""Small helpers every layer may use: paths, progress, stopping, printable text, strict JSON, log
rotation.
"""
