"""Helpers shared by every layer: scikit-learn compatibility, input
validation, tables, seeds, scoring, the result Bunch and progress."""
