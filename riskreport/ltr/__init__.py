"""Risk-sensitive learning to rank: LambdaMART objectives of Wang et al. 2012 and Dinçer et al. 2014/2016."""
