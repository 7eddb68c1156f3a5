"""Exact model of turnip's fragment-density-map logic."""
