"""The public conformance kit: what every block, family, method and reduction must pass."""
