"""Risk-sensitive learning to rank: LambdaMART objectives of the risk papers on LightGBM."""
