"""Importers: other formats turned into ``schedkit/v1`` problem data."""
