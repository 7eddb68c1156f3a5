"""The turnip-fdm command line."""
