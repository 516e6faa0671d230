"""Lebeda, Regehr, Kamath, Steinke 2024: add vs remove (directions), §7 substitution, App. B.1
randomized response, Poisson vs WOR σ (sampling_schemes), §8 / Fig. 4 WOR under substitution
(wor_substitution)."""
