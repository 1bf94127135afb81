"""Grants and limits as plain decisions: an agent's policy, capabilities, approval, argument validation
and tool pins.
"""
