"""Induction: from recorded trajectories to parameterized, reviewable workflows."""
