"""Statistics on per-topic scores: the risk measures (URisk, TRisk, ZRisk, GeoRisk, T*Risk), their inferential
methods (bootstrap intervals, randomisation and t tests, corrections), mixed-effects models for
non-deterministic systems, and ranking agreement."""
