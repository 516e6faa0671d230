"""Paper-specific computations and claim predicates (Lebeda, Chua, Räisä, Zhu); imports engine and samplers."""
